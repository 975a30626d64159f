// Broadcast, split binary tree (Open MPI coll/base, ompi_coll_base_bcast_intra_split_bintree).
// The root-relative ranks form Open MPI's level-order binary tree (patterns/trees_binary.hpp);
// the root's first child (relative 1) heads the subtree of the odd relative ranks, its second
// (relative 2) that of the even ones. The buffer is split into two halves, ceil(m/2) and
// floor(m/2) elements, each cut into segments of a.params.segment elements (the same size
// for both halves, as in Open MPI).
// Phase 1: the root sends segment i of the first half to relative 1 and then segment i of
// the second half to relative 2, one message per round; every other rank forwards the
// segments of its half to its children in child order, one message per round, as in
// bcast pipelined_binary_tree (a rank with two children sends every round).
// Phase 2: every rank swaps halves with its partner in the other subtree: odd relative v with
// v + 1. For even p the last relative rank p - 1 has no partner and receives the second half
// from the root instead. A pair exchanges in the round after both finished phase 1 (Open
// MPI's blocking sendrecv right after a rank's own phase 1).
// Let R1 be the rounds of phase 1: about D' + 2(S - 1), D' the one-segment depth of the
// tree (as in pipelined_binary_tree), S the segments per half.
// Rounds: R1 + 1. Cost: R1 (alpha + beta ceil(m / 2S)) + alpha + beta ceil(m / 2).
// Default segment: the S that minimises (D' - 2 + 2S)(alpha + beta m / 2S), S* =
// sqrt((D' - 2) beta m / (4 alpha)), for the default cost model and 8-byte elements
// S = round(sqrt((D' - 2) count / 2500)), clamped to 1 .. ceil(count / 2).
// Open MPI falls back to the chain broadcast when a half is empty (count < 2) or shorter than
// one segment; here a segment longer than a half is cut to the half, and count 0 or 1 runs
// the same schedule with empty messages for the empty half.
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

struct halves {
  std::uint64_t count[2] = {0, 0};
  std::uint64_t base[2] = {0, 0};
  std::uint64_t size = 1;  // elements per segment
  std::int64_t segments(int h) const {
    return static_cast<std::int64_t>(std::max<std::uint64_t>(1, (count[h] + size - 1) / size));
  }
  region piece(int h, std::int64_t i) const {
    const std::uint64_t from = std::min(static_cast<std::uint64_t>(i) * size, count[h]);
    return region{out_buffer, base[h] + from, std::min(size, count[h] - from)};
  }
  region whole(int h) const { return region{out_buffer, base[h], count[h]}; }
};

halves make_halves(std::uint64_t count, std::uint64_t size) {
  halves hv;
  hv.count[0] = (count + 1) / 2;
  hv.count[1] = count / 2;
  hv.base[1] = hv.count[0];
  hv.size = size;
  return hv;
}

// One rank's phase 1: arrival rounds of its half's segments (empty at the root) and the
// rounds of its sends, in order (the root: alternating halves; others: segment, child).
struct timeline {
  std::vector<std::int64_t> arrival;
  std::vector<std::int64_t> sends;
  std::vector<int> send_child;  // the root: which child (= half) each send goes to
  std::int64_t last() const {
    std::int64_t l = -1;
    if (!arrival.empty()) l = std::max(l, arrival.back());
    if (!sends.empty()) l = std::max(l, sends.back());
    return l;
  }
};

timeline timeline_of(const halves& hv, int p, int v) {
  const detail::ompi_bintree t{p};
  timeline root;
  std::vector<std::int64_t> to_child[2];
  {
    const int k = t.children(0);
    const std::int64_t n = std::max(hv.segments(0), hv.segments(1));
    std::int64_t r = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (int c = 0; c < k; ++c)
        if (i < hv.segments(c)) {
          root.sends.push_back(r);
          root.send_child.push_back(c);
          to_child[c].push_back(r++);
        }
  }
  if (v == 0) return root;
  std::vector<int> path;
  for (int u = v; u > 0; u = detail::ompi_bintree::parent(u)) path.push_back(u);
  std::reverse(path.begin(), path.end());  // path[0] is 1 or 2
  std::vector<std::int64_t> arrival = to_child[path[0] - 1];
  for (std::size_t i = 1; i < path.size(); ++i)
    arrival = detail::child_arrival(arrival, t.children(path[i - 1]), detail::ompi_bintree::child_index(path[i]));
  timeline me;
  me.sends = detail::forward_rounds(arrival, t.children(v));
  me.arrival = std::move(arrival);
  return me;
}

// Relative partner in phase 2 (-1: none, p = 1).
int partner_of(int p, int v) {
  if (p == 1) return -1;
  if (v == 0) return p % 2 == 0 ? p - 1 : -1;
  if (v % 2 == 1) return v + 1 < p ? v + 1 : 0;
  return v - 1;
}

std::int64_t ideal_depth(int p) {
  const halves one = make_halves(2, 1);  // one segment per half
  std::int64_t last = -1;
  for (int v = 0; v < p; ++v) last = std::max(last, timeline_of(one, p, v).last());
  return last + 1;
}

halves halves_of(const coll_args& a) {
  const std::uint64_t half = (a.count + 1) / 2;
  const double d = static_cast<double>(ideal_depth(a.p));
  const double ideal = std::sqrt(std::max(d - 2, 0.0) * static_cast<double>(a.count) / 2500.0);
  return make_halves(a.count, detail::segment_size(half, a.params.segment, ideal));
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1) return s;
  const detail::ompi_bintree t{a.p};
  const int v = detail::relative(rank, a.root, a.p);
  auto abs = [&](int w) { return detail::absolute(w, a.root, a.p); };
  const halves hv = halves_of(a);
  const timeline me = timeline_of(hv, a.p, v);
  const int h = v == 0 ? -1 : (v % 2 == 1 ? 0 : 1);  // the half this rank's subtree carries
  const int k = t.children(v);
  // phase 1: receives and sends both ascend by round
  std::size_t r = 0, q = 0;
  while (r < me.arrival.size() || q < me.sends.size()) {
    const std::int64_t tr = r < me.arrival.size() ? me.arrival[r] : INT64_MAX;
    const std::int64_t tq = q < me.sends.size() ? me.sends[q] : INT64_MAX;
    const std::int64_t now = std::min(tr, tq);
    detail::open_rounds(s, now + 1);
    if (tq == now) {
      if (v == 0) {
        // the root's sends alternate over the halves; count them per half
        const int c = me.send_child[q];
        const auto i = static_cast<std::int64_t>(std::count(me.send_child.begin(), me.send_child.begin() + q, c));
        s.send(abs(t.child(0, c)), hv.piece(c, i));
      } else {
        s.send(abs(t.child(v, static_cast<int>(q % static_cast<std::size_t>(k)))),
               hv.piece(h, static_cast<std::int64_t>(q) / k));
      }
      ++q;
    }
    if (tr == now) {
      s.recv(abs(detail::ompi_bintree::parent(v)), hv.piece(h, static_cast<std::int64_t>(r)));
      ++r;
    }
  }
  // phase 2
  const int w = partner_of(a.p, v);
  if (w >= 0) {
    const std::int64_t when = std::max(me.last(), timeline_of(hv, a.p, w).last()) + 1;
    detail::open_rounds(s, when + 1);
    if (v == 0) {
      s.send(abs(w), hv.whole(1));
    } else if (w == 0) {
      s.recv(abs(0), hv.whole(1));
    } else {
      s.send(abs(w), hv.whole(h));
      s.recv(abs(w), hv.whole(1 - h));
    }
  }
  return s;
}

std::int64_t phase1_rounds(const halves& hv, int p) {
  std::int64_t last = -1;
  for (int v = 0; v < p; ++v) last = std::max(last, timeline_of(hv, p, v).last());
  return last + 1;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const halves hv = halves_of(a);
  const double r1 = static_cast<double>(phase1_rounds(hv, a.p));
  return r1 * (m.alpha + m.beta * static_cast<double>(std::min(hv.size, hv.count[0]) * elem)) + m.alpha +
         m.beta * static_cast<double>(hv.count[0] * elem);
}

const algorithm info{
    .name = "split_binary_tree",
    .coll = collective::bcast,
    .summary =
        "Open MPI bcast_intra_split_bintree: two halves pipelined down the two subtrees of a binary tree "
        "(S segments each), then partners swap halves: R1+1 rounds (R1 ~ D+2(S-1)), "
        "R1(alpha + beta m/2S) + alpha + beta m/2",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
