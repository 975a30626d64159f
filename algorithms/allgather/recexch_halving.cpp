// Allgather and allgatherv, recursive exchange with radix k, distance halving (MPICH,
// MPIR_Allgather_intra_recexch with recexch_type = distance halving, after Sack and Gropp,
// "Faster topology-aware collective algorithms through non-minimal communication", PPoPP
// 2012; radix = algo_params::radix, default 4 here). Any p: the ranks beyond p' = the largest
// power of k <= p hand their block to a participant of their set of k consecutive ranks
// before the exchange and get everything back after it (patterns/recexch_plan.hpp).
// Participant v first swaps its blocks with participant rev(v) (v's L = log_k p' base-k
// digits reversed); then in step j = 0 .. L-1 it exchanges with the k-1 participants whose
// digit L-1-j differs (the farthest first: distance halving) the blocks of the aligned group
// of k^j participants around rev(v), a contiguous rank range. The reversal makes the groups
// meet: the peers' rev differ from rev(v) in digit j, so the group grows by k per step, small
// messages travelling far and large ones near. Unlike MPICH, which receives a group whole,
// the blocks a receiver already holds as its own are left out of the message.
// The doubling variant is ranklab's allgather recexch; at p' <= k the two coincide.
// Rounds: k-1 ports (MPICH): log_k p' + s (+2 when p' < p), s = 1 for the swap when
// L >= 2, else 0; one-ported here: (k-1) log_k p' + s (+ 2f), f = min(k-1, T) fold rounds
// (T = floor((p-p') k/(k-1))).
// Cost: rounds alpha + beta N (p-1)/p (+ f beta N when folded), N = bytes of the result.
// See docs/algorithms.md, "allgather".
#include "patterns/block_layout.hpp"
#include "patterns/recexch_plan.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

int reversed(const detail::recexch_plan& f, int v) {
  int r = 0;
  for (int i = 0; i < f.levels; ++i) r = r * f.k + f.digit(v, i);
  return r;
}

int swap_rounds(const detail::recexch_plan& f) { return f.levels >= 2 ? 1 : 0; }

schedule build(const coll_args& a, int rank) {
  const detail::gathered_layout L(a);
  schedule s = L.start(a, rank);
  const detail::recexch_plan f(a.p, detail::recexch_radix(a, rank, "allgather"));
  if (a.p == 1) return s;
  const int k = f.k;
  // Participants [u, u + n) stand for ranks [first_rank(u), end_rank(u + n)).
  auto end_rank = [&](int u) { return u >= f.pofk ? a.p : f.first_rank(u); };
  // The blocks of the participants [lo, lo + n) except those of participant `skip`, as
  // `sender` sends them (its own block from in; no_rank: as received).
  auto group = [&](int lo, int n, int skip, int sender) {
    detail::region_list l;
    auto add = [&](int u0, int u1) {
      if (u0 < u1) L.add_sent_range(l, f.first_rank(u0), end_rank(u1), sender);
    };
    if (skip >= lo && skip < lo + n) {
      add(lo, skip);
      add(skip + 1, lo + n);
    } else {
      add(lo, lo + n);
    }
    return l;
  };
  auto missing = [&](int lost, int sender) {
    detail::region_list l;
    for (int j = 0; j < a.p; ++j)
      if (j != lost) l.add(L.sent(j, sender));
    return l;
  };
  const int v = f.newrank(rank), own = f.owner(rank);
  const int first = f.first_rank(own), senders = f.real(own) - first;
  for (int t = 0; t < f.fold_rounds; ++t) {
    s.next_round();
    if (v < 0 && rank - first == t) s.send(f.real(own), L.sent(rank, rank));
    if (v >= 0 && t < senders) s.recv(first + t, L.block(first + t));
  }
  const int rv = v >= 0 ? reversed(f, v) : -1;
  if (swap_rounds(f) > 0) {
    s.next_round();
    if (v >= 0 && rv != v) {
      send_list(s, f.real(rv), group(v, 1, -1, rank));
      recv_list(s, f.real(rv), group(rv, 1, -1, no_rank));
    }
  }
  for (int j = 0; j < f.levels; ++j) {
    const int i = f.levels - 1 - j, n = f.power(j);
    for (int t = 1; t < k; ++t) {
      s.next_round();
      if (v < 0) continue;
      const int d = f.digit(v, i);
      const int to = f.with_digit(v, i, (d + t) % k), from = f.with_digit(v, i, (d - t + k) % k);
      const int mine = rv - rv % n, theirs = reversed(f, from) - reversed(f, from) % n;
      send_list(s, f.real(to), group(mine, n, to, rank));
      recv_list(s, f.real(from), group(theirs, n, v, no_rank));
    }
  }
  for (int t = 0; t < f.fold_rounds; ++t) {
    s.next_round();
    if (v < 0 && rank - first == t) recv_list(s, f.real(own), missing(rank, no_rank));
    if (v >= 0 && t < senders) send_list(s, first + t, missing(first + t, rank));
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const detail::recexch_plan f(a.p, detail::recexch_radix(a, no_rank, "allgather"));
  if (a.p == 1) return 0;
  const double extra = static_cast<double>(f.fold_rounds) * static_cast<double>(total_count(a) * elem);
  return detail::gathered_cost(a, elem, m, f.rounds() + swap_rounds(f), extra);
}

const algorithm info{
    .name = "recexch_halving",
    .serves = {collective::allgather, collective::allgatherv},
    .summary = "MPICH recursive exchange, distance halving (Sack-Gropp), radix k (param, default 4): digit-reversed "
               "swap, then groups of k^j; k-1 ports log_k p' + 1 (+2) rounds, one-ported (k-1) log_k p' + 1 (+2f); "
               "rounds alpha + beta N(p-1)/p (+ f beta N when folded)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
