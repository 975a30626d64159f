// Allgather and allgatherv, neighbor exchange (J. Chen et al., "Performance Evaluation of
// Allgather Algorithms on Terascale Linux Cluster with Fast Ethernet"; Open MPI's allgather
// "neighbor"). p even: in step 0 ranks 2q and 2q+1 swap their blocks; from then on every rank
// swaps a pair of blocks {2q, 2q+1} with its left and right neighbour alternately, always
// forwarding the pair it received in the previous step. p odd (ranklab's extension): rank p-1
// first hands its block to rank p-2, which stands for both in the exchange among the p-1
// others (its "block" is blocks p-2 and p-1), and at the end sends rank p-1 the p-1 blocks it
// lacks. A rank's own block always goes out from its send buffer, not from its copy in out
// (gathered_layout::sent).
// Rounds: p/2 (p even), (p-1)/2 + 2 (p odd > 1).
// Cost: rounds alpha + beta N (p-1)/p (+ beta N for odd p), N = bytes of the gathered result.
// See docs/algorithms.md, "allgather".
#include "patterns/block_layout.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

using detail::mod;

// The exchange among the q (even) participants 0..q-1; `range(v, n)` is the blocks of
// participants v..v+n-1 (participant q-1 may stand for two ranks) where they arrive, and
// `sent(v, n)` the same blocks as this rank sends them (its own from in).
template <class Range, class Sent>
void exchange(schedule& s, int rank, int q, Range range, Sent sent) {
  const bool even_rank = rank % 2 == 0;
  int neighbor[2], recv_from[2], step[2];
  if (even_rank) {
    neighbor[0] = mod(rank + 1, q), neighbor[1] = mod(rank - 1, q);
    recv_from[0] = recv_from[1] = rank;
    step[0] = 2, step[1] = -2;
  } else {
    neighbor[0] = mod(rank - 1, q), neighbor[1] = mod(rank + 1, q);
    recv_from[0] = recv_from[1] = neighbor[0];
    step[0] = -2, step[1] = 2;
  }
  s.next_round();
  send_list(s, neighbor[0], sent(rank, 1));
  recv_list(s, neighbor[0], range(neighbor[0], 1));
  int send_from = even_rank ? rank : recv_from[0];
  for (int i = 1; i < q / 2; ++i) {
    const int parity = i % 2;
    recv_from[parity] = mod(recv_from[parity] + step[parity], q);
    s.next_round();
    send_list(s, neighbor[parity], sent(send_from, 2));
    recv_list(s, neighbor[parity], range(recv_from[parity], 2));
    send_from = recv_from[parity];
  }
}

schedule build(const coll_args& a, int rank) {
  const detail::gathered_layout L(a);
  schedule s = L.start(a, rank);
  const int p = a.p;
  if (p == 1) return s;
  const bool odd = p % 2 == 1;
  const int q = odd ? p - 1 : p;  // ranks taking part in the exchange
  // Participant v stands for ranks [v, end(v)).
  auto end = [&](int v) { return v == q - 1 ? p : v + 1; };
  auto range = [&](int v, int n) { return L.range(v, end(v + n - 1)); };
  auto sent = [&](int v, int n) { return L.sent_range(v, end(v + n - 1), rank); };

  if (odd) {
    s.next_round();
    if (rank == p - 1)
      s.send(p - 2, L.sent(p - 1, rank));
    else if (rank == p - 2)
      s.recv(p - 1, L.block(p - 1));
  }
  if (rank < q) {
    exchange(s, rank, q, range, sent);
  } else {
    for (int i = 0; i < q / 2; ++i) s.next_round();  // idle while the others exchange
  }
  if (odd) {
    s.next_round();
    if (rank == p - 2)
      send_list(s, p - 1, L.sent_range(0, p - 1, rank));
    else if (rank == p - 1)
      recv_list(s, p - 2, L.range(0, p - 1));
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p % 2 == 0) return detail::gathered_cost(a, elem, m, a.p / 2);
  // Folding the last rank adds a round with one block and a round with p-1 blocks.
  const bool folded = a.p > 1;
  const double extra = folded ? static_cast<double>(total_count(a) * elem) : 0;
  return detail::gathered_cost(a, elem, m, (a.p - 1) / 2 + (folded ? 2 : 0), extra);
}

const algorithm info{
    .name = "neighbor_exchange",
    .serves = {collective::allgather, collective::allgatherv},
    .summary =
        "neighbor exchange: p/2 rounds (p even), (p-1)/2+2 (p odd, last rank folded onto p-2); rounds alpha + beta "
        "N(p-1)/p",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
