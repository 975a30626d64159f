// Broadcast, pipelined k-ary tree (MPICH: the tree of MPIR_Treealgo_tree_create_kary, as
// MPIR_Bcast_intra_pipelined_tree sends it in segments; MPIR_Bcast_intra_tree is the same tree
// with one segment). Root-relative rank v has the children k v + 1 .. k v + k
// (those < p) and the parent (v - 1) / k; the buffer is cut into S segments of
// a.params.segment elements (the last one shorter), k = a.params.radix (default 2).
// MPICH posts the sends of a segment to all k children at once (k ports); one-ported here, a
// rank sends each segment to its children in child order, one per round, and segment i + 1
// after segment i, each as early as it can (patterns/trees_binary.hpp, tree_pipeline): the
// pipeline advances one segment every k rounds.
// Let D be the rounds of one segment: the largest, over the ranks, of the sum along the root
// path of 1 + child index (at most k ceil(log_k p)).
// Rounds, one-ported: D + k(S - 1) for a tree whose inner ranks all have k children (in
// general the simulated pipeline's length); k ports: depth + S - 1, the depth of the tree at
// most ceil(log_k p).
// Cost: rounds (alpha + beta ceil(m / S)).
// Default segment: the S that minimises (D - k + kS)(alpha + beta m / S),
// S* = sqrt((D - k) beta m / (k alpha)); for the default cost model and 8-byte elements
// S = round(sqrt((D - k) count / (625 k))), clamped to 1 .. count. count 0 is one empty segment.
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

int radix_of(const coll_args& a) { return a.params.radix > 0 ? a.params.radix : 2; }

int children_of(int v, int k, int p) {
  const std::int64_t first = static_cast<std::int64_t>(v) * k + 1;
  return static_cast<int>(std::clamp<std::int64_t>(p - first, 0, k));
}

std::int64_t rounds_of(int p, int k, std::int64_t segments) {
  if (p <= 1) return 0;
  std::vector<std::vector<std::int64_t>> arrival(static_cast<std::size_t>(p));
  arrival[0].assign(static_cast<std::size_t>(segments), -1);
  std::int64_t last = -1;
  for (int v = 1; v < p; ++v) {  // parents come first
    const int u = (v - 1) / k;
    arrival[v] = detail::child_arrival(arrival[u], children_of(u, k, p), (v - 1) % k);
    last = std::max(last, arrival[v].back());
  }
  return last + 1;
}

detail::segmenting segmenting_of(const coll_args& a) {
  const int k = radix_of(a);
  const double d = static_cast<double>(rounds_of(a.p, k, 1));
  const double ideal = std::sqrt(std::max(d - k, 0.0) * static_cast<double>(a.count) / (625.0 * k));
  return {a.count, detail::segment_size(a.count, a.params.segment, ideal)};
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1) return s;
  const int k = radix_of(a);
  const int v = detail::relative(rank, a.root, a.p);
  const detail::segmenting seg = segmenting_of(a);
  std::vector<int> path;
  for (int u = v; u > 0; u = (u - 1) / k) path.push_back(u);
  path.push_back(0);
  std::reverse(path.begin(), path.end());
  std::vector<std::int64_t> arrival(static_cast<std::size_t>(seg.segments()), -1);
  for (std::size_t i = 1; i < path.size(); ++i)
    arrival = detail::child_arrival(arrival, children_of(path[i - 1], k, a.p), (path[i] - 1) % k);
  const int kids = children_of(v, k, a.p);
  const int parent = v == 0 ? -1 : detail::absolute((v - 1) / k, a.root, a.p);
  detail::pipelined_tree_rounds(s, seg, parent, arrival, kids,
                                [&](int c) { return detail::absolute(v * k + 1 + c, a.root, a.p); });
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const detail::segmenting seg = segmenting_of(a);
  const double rounds = static_cast<double>(rounds_of(a.p, radix_of(a), seg.segments()));
  return rounds * (m.alpha + m.beta * static_cast<double>(std::min(seg.size, a.count) * elem));
}

const algorithm info{
    .name = "kary",
    .coll = collective::bcast,
    .summary =
        "MPICH bcast_intra_tree (kary): pipelined k-ary tree (radix param, default 2), S segments (segment "
        "param; default from the cost model), one child per round: D+k(S-1) rounds one-ported (k ports: "
        "ceil(log_k p)+S-1), rounds (alpha + beta m/S)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
