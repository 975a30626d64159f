// Reduce, pipelined binary tree (Open MPI coll/base, ompi_coll_base_reduce_intra_binary: the
// generic segmented tree reduce over ompi_coll_base_topo_build_tree with fanout 2;
// commutative operators). The root-relative ranks form Open MPI's level-order binary tree
// (patterns/trees_binary.hpp: rank v at level l has the children v + 2^l and v + 2^(l+1)),
// the vector is cut into S segments of a.params.segment elements (the last one shorter), and
// every segment climbs the tree, combined at each rank with its children's partials, while
// the next one follows. One-ported, the schedule is the registered bcast
// pipelined_binary_tree (the same tree, the same segments) run backwards in time: where the
// broadcast sends segment i to child c in round t of R, the reduce receives c's partial of
// segment i in round R-1-t and combines it; where the broadcast receives segment i from the
// parent, the reduce sends its partial up. A rank has then combined both children's partials
// of a segment before it sends it, and still one message in and one out per round. The
// level-order subtrees are not rank ranges: commutative operators only (Open MPI's
// in-order_binary, ranklab's inorder_binary, serves the others).
// Rounds: the broadcast's, D + 2(S-1) for p >= 3 (D, the rounds of one segment, at most
// about 2 log2 p; p = 2: S; p = 1: 0). One port each way is all a binary tree uses, so there
// is no multi-port variant (Open MPI posts a segment's two child receives at once: D then
// counts levels, ceil(log2(p+1)) - 1, and the pipeline advances one segment per round).
// Cost: rounds (alpha + (beta + gamma) ceil(m / S)).
// Default segment: S minimising (D + 2(S-1))(alpha + (beta + gamma) m/S),
// S* = sqrt((D-2)(beta + gamma) m / (2 alpha)) with the default cost model and the call's
// element size, clamped to 1 .. count. count 0 is one empty segment.
// See docs/algorithms.md, "reduce".
#include <algorithm>
#include <cmath>

#include "patterns/chunking.hpp"
#include "patterns/compose.hpp"
#include "patterns/reversed_rounds.hpp"
#include "patterns/tree_rounds.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

const algorithm& bcast_tree() {
  const algorithm* b = registry::find(collective::bcast, "pipelined_binary_tree");
  if (b == nullptr) throw usage_error(no_rank, "reduce", "binary: bcast pipelined_binary_tree is not registered");
  return *b;
}

// The broadcast of the same tree and segments (`segment` elements each, rooted like `a`).
coll_args bcast_args(const coll_args& a, std::uint64_t segment) {
  coll_args b = detail::phase_args(a, collective::bcast, a.p, a.count, a.root);
  b.params.segment = segment;
  return b;
}

std::size_t bcast_rounds(const coll_args& b) { return detail::schedule_rounds(bcast_tree(), b); }

// Rounds of the broadcast with one segment (D).
double one_segment_rounds(const coll_args& a) {
  return static_cast<double>(bcast_rounds(bcast_args(a, std::max<std::uint64_t>(a.count, 1))));
}

std::uint64_t segment_of(const coll_args& a) {
  const cost_model m{};
  const double d = one_segment_rounds(a);
  const double bytes = static_cast<double>(a.count) * static_cast<double>(a.elem_size);
  const double ideal = std::sqrt(std::max(d - 2, 0.0) * (m.beta + m.gamma) * bytes / (2 * m.alpha));
  return detail::segment_size(a.count, a.params.segment, ideal);
}

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  const coll_args b = bcast_args(a, segment_of(a));
  const schedule fwd = bcast_tree().build(b, rank);
  const std::size_t total = bcast_rounds(b);
  bool receives = false;  // in the reduce: the broadcast sends
  for (const ranklab::round& r : fwd.rounds()) receives = receives || r.send_to != no_rank;
  schedule s(rank, a.p, n, rank == a.root ? n : 0);
  const region acc = detail::tree_accumulator(s, a, rank, receives);
  detail::append_reversed(s, fwd, total, "reduce", "binary", [&](const region& g) {
    if (g.buffer != out_buffer) throw usage_error(rank, "reduce", "binary: the broadcast uses a temporary");
    return region{acc.buffer, acc.offset + g.offset, g.count};
  });
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const std::uint64_t seg = segment_of(a);
  const double rounds = static_cast<double>(bcast_rounds(bcast_args(a, seg)));
  return rounds * (m.alpha + (m.beta + m.gamma) * static_cast<double>(std::min(seg, a.count) * elem));
}

const algorithm info{
    .name = "binary",
    .coll = collective::reduce,
    .summary =
        "Open MPI reduce_intra_binary: pipelined level-order binary tree, S segments (segment param; default "
        "from the cost model), bcast pipelined_binary_tree backwards: D+2(S-1) rounds (D <= 2 log2 p), "
        "(D+2(S-1))(alpha + (beta + gamma) m/S); commutative operators",
    .needs_commutative = true,
    .composition = "bcast pipelined_binary_tree, reversed in time",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
