// Allreduce, pipelined k-ary tree reduce + broadcast (MPICH, MPIR_Allreduce_intra_tree with
// tree_type kary; commutative operators). Rank 0 is the root of MPICH's k-ary tree
// (rank v has the children k v + 1 .. k v + k, k = a.params.radix, default 2), the vector is
// cut into S segments of a.params.segment elements, and every segment is reduced up the tree
// and broadcast down it. Built from the registered bcast kary schedule (the same tree and
// segments, root 0), twice: the reduce is that broadcast run backwards in time (where the
// broadcast sends segment i to a child in round t of R, the reduce receives and combines the
// child's partial of segment i in round R-1-t; where it receives from the parent, the reduce
// sends its partial up), so a rank has combined all its children's partials of a segment
// before it sends it on; the broadcast is then appended as it is (patterns/compose.hpp).
// Everything happens in the receive buffer (in place ok). The k-ary subtrees are not rank
// ranges: commutative operators only (MPICH falls back to its knomial_1 tree for the
// others; ranklab's reduce_bcast is the binomial, rank-ordered, unpipelined counterpart).
// MPICH posts the k child receives and sends of a segment at once and lets segment j's
// broadcast overlap segment j+1's reduction; one-ported, the two phases run one after the
// other.
// Rounds: one-ported 2 R, R = the bcast kary rounds, D + k(S-1) for a tree whose inner ranks
// all have k children (D: one segment's rounds, at most k ceil(log_k p)); with k ports (and
// MPICH's overlap): 2 ceil(log_k p) + S - 1, the tree's depth up and down plus the pipeline.
// Cost: R (2 alpha + (2 beta + gamma) ceil(m / S)).
// Default segment: S minimising (D + k(S-1))(2 alpha + (2 beta + gamma) m/S),
// S* = sqrt((D-k)(2 beta + gamma) m / (2 k alpha)), default cost model, the call's element
// size, clamped to 1 .. count. count 0 is one empty segment.
// See docs/algorithms.md, "allreduce".
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "patterns/chunking.hpp"
#include "patterns/compose.hpp"
#include "patterns/reduce_blocks.hpp"
#include "patterns/reversed_rounds.hpp"
#include "patterns/tree_rounds.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

const algorithm& bcast_tree() {
  const algorithm* b = registry::find(collective::bcast, "kary");
  if (b == nullptr) throw usage_error(no_rank, "allreduce", "tree: bcast kary is not registered");
  return *b;
}

int radix_of(const coll_args& a) { return a.params.radix > 0 ? a.params.radix : 2; }

coll_args bcast_args(const coll_args& a, std::uint64_t segment) {
  coll_args b = detail::phase_args(a, collective::bcast, a.p, a.count, 0);
  b.params.radix = radix_of(a);
  b.params.segment = segment;
  return b;
}

// Rounds of the broadcast phase (R).
std::size_t bcast_rounds(const coll_args& b) { return detail::schedule_rounds(bcast_tree(), b); }

std::uint64_t segment_of(const coll_args& a) {
  const cost_model m{};
  const int k = radix_of(a);
  const double d = static_cast<double>(bcast_rounds(bcast_args(a, std::max<std::uint64_t>(a.count, 1))));
  const double bytes = static_cast<double>(a.count) * static_cast<double>(a.elem_size);
  const double ideal = std::sqrt(std::max(d - k, 0.0) * (2 * m.beta + m.gamma) * bytes / (2.0 * k * m.alpha));
  return detail::segment_size(a.count, a.params.segment, ideal);
}

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  detail::own_vector_in_out(s, n);
  if (a.p == 1) return s;
  const coll_args b = bcast_args(a, segment_of(a));
  const schedule fwd = bcast_tree().build(b, rank);
  const std::size_t total = bcast_rounds(b);
  // The reduce: the broadcast's rounds backwards, in the receive buffer.
  detail::append_reversed(s, fwd, total, "allreduce", "tree", [](const region& g) { return g; });
  // The broadcast from rank 0, as it is.
  std::vector<int> members(static_cast<std::size_t>(a.p));
  std::iota(members.begin(), members.end(), 0);
  detail::append_phase(s, fwd, members, detail::phase_place{region{out_buffer, 0, 0}, region{out_buffer, 0, 0}}, total);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const std::uint64_t seg = segment_of(a);
  const double rounds = static_cast<double>(bcast_rounds(bcast_args(a, seg)));
  return rounds * (2 * m.alpha + (2 * m.beta + m.gamma) * static_cast<double>(std::min(seg, a.count) * elem));
}

const algorithm info{
    .name = "tree",
    .coll = collective::allreduce,
    .summary =
        "MPICH allreduce_intra_tree (kary): pipelined k-ary tree (radix param, default 2), S segments "
        "(segment param), reduce = bcast kary backwards, then bcast kary: 2R rounds one-ported, R = "
        "D+k(S-1); R(2 alpha + (2 beta + gamma) m/S); commutative operators",
    .needs_commutative = true,
    .composition = "bcast kary reversed (reduce to rank 0) + bcast kary (root 0)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
