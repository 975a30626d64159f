// Broadcast, pipelined k-nomial tree (MPICH `MPIR_Bcast_intra_pipelined_tree` with a k-nomial
// tree and `MPIR_TSP_Ibcast_sched_intra_tree`, which cut the buffer into chunks that follow
// each other down the tree). The tree and its child order are bcast knomial's
// (patterns/tree_knomial.hpp: radix k = algo_params::radix, default 4; k = 2 binomial); the
// buffer is cut into S segments of algo_params::segment elements (the last one shorter).
// MPICH posts a chunk to all children at once; one-ported, a rank sends each segment to its
// children in child order, one message per round, segment i + 1 after segment i, each as early
// as it can (patterns/trees_binary.hpp's forward_rounds). With S = 1 it is bcast knomial
// round for round.
// Rounds: let C be the root's number of children (sum over the levels l < L = ceil(log_k p)
// of min(k-1, (p-1)/k^l)). Served farthest level first, a child of the root at position i
// has at most C-1-i children itself (those of the root's later levels), and so on down: one
// segment takes exactly T = C rounds (knomial's), no rank has more children than the root,
// every rank forwards a segment before the next one arrives, and rank v gets segment i in
// round R(v) + i C: S C rounds one-ported (p >= 2). With k-1 ports (one level's children at
// once) S L; with a port per child (MPICH's multicast of a chunk to all children) L + S - 1,
// the model in which segmenting pays. One-ported the root alone sends S C messages that
// carry C m in all, so no segmentation beats S = 1, the k-nomial tree itself.
// Cost: S C (alpha + beta m/S). Default: one segment (what that cost says); the segment
// parameter sets others. count 0 is one empty segment.
// See docs/algorithms.md, "bcast".
#include <algorithm>
#include <cstdint>
#include <vector>

#include "patterns/knomial_pipeline.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1) return s;
  const detail::knomial_pipeline P = detail::knomial_pipeline_of(a, rank, "bcast");
  const detail::knomial_tree& t = P.tree;
  const std::int64_t v = detail::relative(rank, a.root, a.p);
  // The rounds v receives its segments in.
  const std::vector<std::int64_t> arrival = P.arrival(v);
  const std::vector<std::int64_t> kids = t.children(v);
  const int k = static_cast<int>(kids.size());
  const detail::rooted_at real{a.root, a.p};
  const int parent = v == 0 ? -1 : real(t.parent(v));
  detail::pipelined_tree_rounds(s, P.seg, parent, arrival, k,
                                [&](int c) { return real(kids[static_cast<std::size_t>(c)]); });
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const detail::knomial_pipeline P = detail::knomial_pipeline_of(a, no_rank, "bcast");
  return static_cast<double>(P.rounds()) *
         (m.alpha + m.beta * static_cast<double>(std::min(P.seg.size, a.count) * elem));
}

const algorithm info{
    .name = "knomial_segmented",
    .coll = collective::bcast,
    .summary =
        "MPICH pipelined k-nomial tree (radix param, default 4; segment param, default 1 segment = knomial), "
        "one-ported: S C rounds (C the root's children), S C (alpha + beta m/S); k-1 ports S L",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
