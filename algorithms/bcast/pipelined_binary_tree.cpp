// Broadcast, pipelined binary tree (Open MPI coll/base, ompi_coll_base_bcast_intra_bintree,
// the generic tree broadcast over ompi_coll_base_topo_build_tree with fanout 2). The
// root-relative ranks form Open MPI's level-order binary tree (patterns/trees_binary.hpp:
// rank v at level l has the children v + 2^l and v + 2^(l+1)); the buffer is cut into S
// segments of a.params.segment elements (the last one shorter). One-ported, a rank sends
// each segment to its first child and then to its second in two consecutive rounds, and
// segment i + 1 after segment i: with two children a rank sends every round and receives
// every other round, so the pipeline advances one segment per two rounds.
// Let D be the rounds of one segment (S = 1): the largest, over the ranks, of the sum along
// the path from the root of 1 + child index (1 for a first child, 2 for a second); with
// h = floor(log2 p) and q = p - 2^h, D = max(h + maxpop(q), 2h - 2), maxpop(q) the most
// one bits of a number <= q (about 2 log2 p in the worst case; 2h - 2 at p = 2^h).
// Rounds: D + 2(S - 1) for p >= 3 (p = 2: S, the root sends every round; p = 1: 0).
// Cost: (D + 2(S - 1))(alpha + beta ceil(m / S)).
// Default segment: the S that minimises that cost, S* = sqrt((D - 2) beta m / (2 alpha)); for
// the default cost model (alpha / beta = 5000 bytes) and 8-byte elements
// S = round(sqrt((D - 2) count / 1250)), clamped to 1 .. count (as bcast chain chooses).
// count 0 is one empty segment.
#include <algorithm>
#include <cmath>
#include <vector>

#include "patterns/chunking.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/tree_rounds.hpp"
#include "patterns/trees_binary.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

// Rounds of the whole broadcast with `segments` segments.
std::int64_t rounds_of(int p, std::int64_t segments) {
  if (p <= 1) return 0;
  const detail::ompi_bintree t{p};
  std::vector<std::vector<std::int64_t>> arrival(static_cast<std::size_t>(p));
  arrival[0].assign(static_cast<std::size_t>(segments), -1);
  std::int64_t last = -1;
  for (int v = 1; v < p; ++v) {  // parents come before their children
    const int u = detail::ompi_bintree::parent(v);
    arrival[v] = detail::child_arrival(arrival[u], t.children(u), detail::ompi_bintree::child_index(v));
    last = std::max(last, arrival[v].back());
  }
  return last + 1;
}

detail::segmenting segmenting_of(const coll_args& a) {
  const double d = static_cast<double>(rounds_of(a.p, 1));
  const double ideal = std::sqrt(std::max(d - 2, 0.0) * static_cast<double>(a.count) / 1250.0);
  return {a.count, detail::segment_size(a.count, a.params.segment, ideal)};
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1) return s;
  const detail::ompi_bintree t{a.p};
  const int v = detail::relative(rank, a.root, a.p);
  const detail::segmenting seg = segmenting_of(a);
  const std::int64_t segments = seg.segments();
  // The path from the root to v, and the arrival rounds along it.
  std::vector<int> path;
  for (int u = v; u >= 0; u = detail::ompi_bintree::parent(u)) path.push_back(u);
  std::reverse(path.begin(), path.end());
  std::vector<std::int64_t> arrival(static_cast<std::size_t>(segments), -1);
  for (std::size_t i = 1; i < path.size(); ++i)
    arrival = detail::child_arrival(arrival, t.children(path[i - 1]), detail::ompi_bintree::child_index(path[i]));
  const int k = t.children(v);
  const int parent = v == 0 ? -1 : detail::absolute(detail::ompi_bintree::parent(v), a.root, a.p);
  detail::pipelined_tree_rounds(s, seg, parent, arrival, k,
                                [&](int c) { return detail::absolute(t.child(v, c), a.root, a.p); });
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const detail::segmenting seg = segmenting_of(a);
  const double rounds = static_cast<double>(rounds_of(a.p, seg.segments()));
  return rounds * (m.alpha + m.beta * static_cast<double>(std::min(seg.size, a.count) * elem));
}

const algorithm info{
    .name = "pipelined_binary_tree",
    .coll = collective::bcast,
    .summary =
        "Open MPI bcast_intra_bintree: pipelined level-order binary tree, S segments (segment param; "
        "default from the cost model), one child per round: D+2(S-1) rounds (D <= 2 log2 p), "
        "(D+2(S-1))(alpha + beta m/S)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
