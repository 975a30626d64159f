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
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "patterns/chunking.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/tree_knomial.hpp"
#include "patterns/tree_rounds.hpp"
#include "patterns/trees_binary.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

int radix_of(const coll_args& a, int rank) {
  const int k = a.params.radix == 0 ? detail::default_knomial_radix : a.params.radix;
  if (k < 2) throw usage_error(rank, "bcast", fmt::format("knomial_segmented: radix {} (need at least 2)", k));
  return k;
}

struct plan {
  detail::knomial_tree tree;
  std::int64_t fanout;  // C: the root's children, also the rounds of one segment
  detail::segmenting seg;
  std::int64_t rounds() const { return tree.p <= 1 ? 0 : seg.segments() * fanout; }
};

plan plan_of(const coll_args& a, int rank) {
  detail::knomial_tree t(a.p, radix_of(a, rank));
  const auto fanout = static_cast<std::int64_t>(t.children(0).size());
  detail::segmenting seg{a.count, detail::segment_size(a.count, a.params.segment, 1.0)};
  return plan{std::move(t), fanout, seg};
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1) return s;
  const plan P = plan_of(a, rank);
  const detail::knomial_tree& t = P.tree;
  const std::int64_t v = detail::relative(rank, a.root, a.p);
  const std::int64_t segments = P.seg.segments();
  // The path from the root to v and the rounds its segments arrive in along it.
  std::vector<std::int64_t> path;
  for (std::int64_t u = v; u != 0; u = t.parent(u)) path.push_back(u);
  std::reverse(path.begin(), path.end());
  std::vector<std::int64_t> arrival(static_cast<std::size_t>(segments), -1);
  std::int64_t above = 0;
  for (const std::int64_t u : path) {
    const std::vector<std::int64_t> kids = t.children(above);
    const auto index = std::find(kids.begin(), kids.end(), u) - kids.begin();
    arrival = detail::child_arrival(arrival, static_cast<int>(kids.size()), static_cast<int>(index));
    above = u;
  }
  const std::vector<std::int64_t> kids = t.children(v);
  const int k = static_cast<int>(kids.size());
  const std::vector<std::int64_t> sends = detail::forward_rounds(arrival, k);
  const detail::rooted_at real{a.root, a.p};
  // Receives and sends both ascend by round: merge them.
  std::size_t r = v == 0 ? arrival.size() : 0, q = 0;
  while (r < arrival.size() || q < sends.size()) {
    const std::int64_t tr = r < arrival.size() ? arrival[r] : INT64_MAX;
    const std::int64_t tq = q < sends.size() ? sends[q] : INT64_MAX;
    const std::int64_t now = std::min(tr, tq);
    detail::open_rounds(s, now + 1);
    if (tq == now) {
      const auto i = static_cast<std::int64_t>(q / static_cast<std::size_t>(k));
      s.send(real(kids[q % static_cast<std::size_t>(k)]), P.seg.piece(out_buffer, i));
      ++q;
    }
    if (tr == now) {
      s.recv(real(t.parent(v)), P.seg.piece(out_buffer, static_cast<std::int64_t>(r)));
      ++r;
    }
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const plan P = plan_of(a, no_rank);
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
