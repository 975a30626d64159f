// Reduce, pipelined k-nomial tree (MPICH `MPIR_TSP_Ireduce_sched_intra_tree` with a k-nomial
// tree: the vector is cut into chunks, and a rank combines each chunk of its children's
// partials into its own and passes it to its parent while the next chunk is on its way). The
// schedule is the registered bcast knomial_segmented run backwards in time
// (patterns/reversed_rounds.hpp): where the broadcast delivers
// segment i to rank v in round a, v sends its partial of segment i to its parent in round
// T_S - 1 - a (T_S: the rounds of the whole call), and where the broadcast forwards segment i
// to child c in round f, v receives c's partial of segment i in round T_S - 1 - f and combines
// it into its accumulator. A segment's partials from all children thus arrive before the
// segment leaves, and a round's receive and send always concern different segments. Radix
// k = algo_params::radix (default 4; k = 2 binomial), S segments of algo_params::segment
// elements. With S = 1 it is reduce knomial round for round. The children are combined in
// reverse broadcast order, and the ranks wrap around p-1 -> 0 for root != 0, so the operator
// must be commutative (MPICH reduces a non-commutative operator over a tree rooted at rank 0
// and sends the result on to the root; not done here).
// Rounds: S C one-ported (C: the root's children, which is also knomial's rounds T; p >= 2);
// S L with k-1 ports, L + S - 1 with a port per child. One-ported the root alone receives S C
// messages, so no segmentation beats S = 1, reduce knomial itself.
// Cost: S C (alpha + (beta + gamma) m/S). Default: one segment; the segment parameter sets
// others.
// See docs/algorithms.md, "reduce".
#include <algorithm>
#include <cstdint>
#include <vector>

#include "patterns/compose.hpp"
#include "patterns/knomial_pipeline.hpp"
#include "patterns/reversed_rounds.hpp"
#include "patterns/tree_rounds.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

const algorithm& bcast_tree() {
  const algorithm* b = registry::find(collective::bcast, "knomial_segmented");
  if (b == nullptr)
    throw usage_error(no_rank, "reduce", "knomial_segmented: bcast knomial_segmented is not registered");
  return *b;
}

// The broadcast of the same tree and segments, rooted like `a`.
coll_args bcast_args(const coll_args& a) {
  coll_args b = detail::phase_args(a, collective::bcast, a.p, a.count, a.root);
  b.params = a.params;
  return b;
}

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, rank == a.root ? n : 0);
  if (a.p == 1) {
    s.copy(region{in_buffer, 0, n}, region{out_buffer, 0, n});
    return s;
  }
  detail::knomial_pipeline_of(a, rank, "reduce");  // the radix check, in this call's name
  const coll_args b = bcast_args(a);
  const schedule fwd = bcast_tree().build(b, rank);
  bool receives = false;  // in the reduce: the broadcast sends
  for (const ranklab::round& r : fwd.rounds()) receives = receives || r.send_to != no_rank;
  const region acc = detail::tree_accumulator(s, a, rank, receives);
  detail::append_reversed(s, fwd, detail::schedule_rounds(bcast_tree(), b), "reduce", "knomial_segmented",
                          [&](const region& g) {
                            return region{acc.buffer, acc.offset + g.offset, g.count};
                          });
  s.trim();  // the broadcast's rounds before a rank's first receive, reversed, are empty
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const detail::knomial_pipeline P = detail::knomial_pipeline_of(a, no_rank, "reduce");
  return static_cast<double>(P.rounds()) *
         (m.alpha + (m.beta + m.gamma) * static_cast<double>(std::min(P.seg.size, a.count) * elem));
}

const algorithm info{
    .name = "knomial_segmented",
    .coll = collective::reduce,
    .summary =
        "MPICH pipelined k-nomial tree reduce (radix param, default 4; segment param, default 1 segment = "
        "knomial), bcast knomial_segmented backwards: S C rounds, S C (alpha + (beta + gamma) m/S); "
        "commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
