// Reduce, in-order binomial tree: safe for non-commutative operators, any p, any root, in
// ceil(log2 p) rounds (no extra round to move the result from rank 0 to the root).
// The tree is built on contiguous rank ranges, not on relabelled ranks: the range [lo, hi)
// with k = ceil(log2(hi - lo)) splits into [lo, mid) and [mid, hi), mid = lo + 2^(k-1); both
// halves are reduced recursively (in at most k-1 rounds), and in round k-1 the holder of one
// half's partial sends it to the holder of the other, which combines lower half (+) upper
// half. The holder of the whole range is the root if it lies in the range, else the range's
// lowest rank; so the root receives the last combination and every partial covers a
// contiguous range of ranks combined in rank order: the result is x_0 (+) ... (+) x_{p-1}.
// With root 0 this is the usual binomial tree (rank r with lowest set bit 2^k sends in round k).
// Each rank holds a chain of nested ranges whose combination rounds strictly increase, so
// a rank sends at most once and receives at most once per round.
// Rounds: ceil(log2 p). Cost: ceil(log2 p)(alpha + beta m + gamma m).
#include <algorithm>
#include <vector>

#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

struct event {
  int round = 0;
  int peer = 0;
  bool sends = false;
  bool peer_lower = false;  // receiving: the incoming partial covers lower ranks
};

// The combinations `rank` takes part in, by round.
std::vector<event> events_of(int p, int root, int rank) {
  std::vector<event> ev;
  int lo = 0, hi = p, holder = root;
  while (hi - lo > 1) {
    const int k = detail::ceil_log2(static_cast<std::uint64_t>(hi - lo));
    const int mid = lo + (1 << (k - 1));
    const bool holder_low = holder < mid;
    const int low_holder = holder_low ? holder : lo;
    const int high_holder = holder_low ? mid : holder;
    const int other = holder_low ? high_holder : low_holder;
    if (rank == holder)
      ev.push_back({k - 1, other, false, !holder_low});
    else if (rank == other)
      ev.push_back({k - 1, holder, true, false});
    if (rank < mid) {
      hi = mid;
      holder = low_holder;
    } else {
      lo = mid;
      holder = high_holder;
    }
  }
  std::reverse(ev.begin(), ev.end());  // collected from the top of the tree down
  return ev;
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, rank == a.root ? a.count : 0);
  const std::vector<event> ev = events_of(a.p, a.root, rank);
  const bool receives = std::any_of(ev.begin(), ev.end(), [](const event& e) { return !e.sends; });
  const region acc = detail::tree_accumulator(s, a, rank, receives);
  for (const event& e : ev) {
    detail::open_rounds(s, e.round + 1);
    if (e.sends)
      s.send(e.peer, acc);
    else
      s.recv(e.peer, acc, e.peer_lower ? combine::reduce_in_left : combine::reduce_in_right);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::ceil_log2(a.p) * (m.alpha + (m.beta + m.gamma) * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "inorder_binomial",
    .coll = collective::reduce,
    .summary =
        "in-order binomial tree on contiguous rank ranges, any root: ceil(log2 p) rounds, "
        "ceil(log2 p)(alpha + (beta + gamma) m); rank-ordered (non-commutative ok)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
