// Broadcast, several pipelined chains from the root (Open MPI coll/base,
// ompi_coll_base_bcast_intra_chain with fanout F > 1, the tree of
// ompi_coll_base_topo_build_chain; F = a.params.radix, default 4 as Open MPI's
// coll_tuned_bcast_chain_fanout, lowered to p-1). The root-relative ranks 1 .. p-1 are cut
// into F chains of consecutive ranks, the first (p-1) mod F of them one rank longer
// (ceil((p-1)/F) ranks, the others floor); the root feeds the chain heads and every rank
// forwards to the next of its chain. The buffer is cut into S segments of a.params.segment
// elements (the last one shorter). One-ported, the root sends segment i to head c in round
// i F + c and a chain rank forwards each segment the round after it arrived: the rank at
// position d (1 = head) of chain c receives segment i in round i F + c + d - 1.
// Fanout 1 (Open MPI's "pipeline") is ranklab's bcast chain, which this schedule equals round
// for round when the fanout is lowered to p-1 = 1 (a radix of 1 is refused by validate);
// F = p-1 is the segmented flat tree.
// Rounds: one-ported F(S-1) + max_c (c + len_c) = F S + ceil((p-1)/F) - 1 when F divides
// p-1 (p >= 2); with F ports (Open MPI posts the root's F sends of a segment at once):
// S + ceil((p-1)/F) - 1.
// Cost: rounds (alpha + beta ceil(m / S)).
// Default segment: S minimising (F S + len - 1)(alpha + beta m/S), len = ceil((p-1)/F):
// S* = sqrt((len - 1) beta m / (F alpha)); for the default cost model and 8-byte elements
// S = round(sqrt((len - 1) count / (625 F))), clamped to 1 .. count (as bcast chain chooses).
// count 0 is one empty segment.
// See docs/algorithms.md, "bcast".
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

constexpr int default_fanout = 4;

// Open MPI's chains over root-relative ranks 1 .. p-1.
struct chains {
  int p = 1, F = 1, longest = 0, mark = 0;  // chains c < mark have `longest` ranks, the others longest-1
  chains(int p_, int fanout) : p(p_), F(std::clamp(fanout, 1, std::max(p_ - 1, 1))) {
    if (p <= 1) return;
    longest = (p - 1 + F - 1) / F;
    mark = (p - 1) % F == 0 ? F : (p - 1) % F;
  }
  int length(int c) const { return c < mark ? longest : longest - 1; }
  int head(int c) const { return c <= mark ? 1 + c * longest : 1 + mark * longest + (c - mark) * (longest - 1); }
  int chain_of(int v) const {
    if (v - 1 < mark * longest) return (v - 1) / longest;
    return mark + (v - 1 - mark * longest) / (longest - 1);
  }
  int parent(int v) const {
    const int c = chain_of(v);
    return v == head(c) ? 0 : v - 1;
  }
  int children(int v) const {
    if (v == 0) return p > 1 ? F : 0;
    const int c = chain_of(v);
    return v < head(c) + length(c) - 1 ? 1 : 0;
  }
  int child(int v, int i) const { return v == 0 ? head(i) : v + 1; }
  int child_index(int v) const { return parent(v) == 0 ? chain_of(v) : 0; }
};

int fanout_of(const coll_args& a) { return a.params.radix > 0 ? a.params.radix : default_fanout; }

// When relative rank v receives its segments (-1 each at the root).
std::vector<std::int64_t> arrival_of(const chains& t, int v, std::int64_t segments) {
  std::vector<int> path;
  for (int u = v; u != 0; u = t.parent(u)) path.push_back(u);
  std::vector<std::int64_t> arrival(static_cast<std::size_t>(segments), -1);
  int above = 0;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    arrival = detail::child_arrival(arrival, t.children(above), t.child_index(*it));
    above = *it;
  }
  return arrival;
}

std::int64_t rounds_of(const chains& t, std::int64_t segments) {
  if (t.p <= 1) return 0;
  std::int64_t last = -1;
  for (int c = 0; c < t.F; ++c) last = std::max(last, arrival_of(t, t.head(c) + t.length(c) - 1, segments).back());
  return last + 1;
}

detail::segmenting segmenting_of(const coll_args& a) {
  const chains t(a.p, fanout_of(a));
  const double ideal =
      std::sqrt(static_cast<double>(std::max(t.longest - 1, 0)) * static_cast<double>(a.count) / (625.0 * t.F));
  return {a.count, detail::segment_size(a.count, a.params.segment, ideal)};
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1) return s;
  const chains t(a.p, fanout_of(a));
  const int v = detail::relative(rank, a.root, a.p);
  const detail::segmenting seg = segmenting_of(a);
  const std::vector<std::int64_t> arrival = arrival_of(t, v, seg.segments());
  const int kids = t.children(v);
  const int parent = v == 0 ? -1 : detail::absolute(t.parent(v), a.root, a.p);
  detail::pipelined_tree_rounds(s, seg, parent, arrival, kids,
                                [&](int c) { return detail::absolute(t.child(v, c), a.root, a.p); });
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const detail::segmenting seg = segmenting_of(a);
  const double rounds = static_cast<double>(rounds_of(chains(a.p, fanout_of(a)), seg.segments()));
  return rounds * (m.alpha + m.beta * static_cast<double>(std::min(seg.size, a.count) * elem));
}

const algorithm info{
    .name = "chain_fanout",
    .coll = collective::bcast,
    .summary =
        "Open MPI bcast_intra_chain, fanout F > 1 (radix param, default 4): F pipelined chains from the root, "
        "S segments (segment param): F S + ceil((p-1)/F) - 1 rounds one-ported (F ports: S + "
        "ceil((p-1)/F) - 1), rounds (alpha + beta m/S); fanout 1 = bcast chain",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
