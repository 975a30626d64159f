// Recursive exchange with radix k (MPICH's "recexch" family: MPII_Recexchalgo_get_neighbors
// and the allgather / allreduce / reduce_scatter builders on it), as one-ported rounds.
//
// Folding any p to p' = the largest power of k <= p: with rem = p - p' and
// T = floor(rem k / (k-1)), the first T ranks form sets of k consecutive ranks, the first
// k-1 of a set hand their data to the set's last rank, which takes part; an incomplete last
// set hands it to rank T. Ranks >= T take part as rank - rem. Participant (new rank) v
// therefore stands for the contiguous rank range [first_rank(v), real(v)], in rank order.
// The exchange: log_k p' phases; in phase i participant v exchanges with the k-1
// participants whose base-k digit i differs from v's. MPICH posts the k-1 exchanges of a
// phase (and the k-1 receives of the fold) at once; one-ported, a phase is k-1 rounds: in
// round j = 1..k-1 the participant with digit d sends to digit (d+j) mod k and receives from
// digit (d-j) mod k, and the fold (unfold) is up to k-1 rounds, sender t of a set in round t.
// k-1 ports: log_k p' (+2) rounds; one-ported: (k-1) log_k p' (+ 2 f) rounds, f =
// min(k-1, T) the fold rounds. A radix above p is lowered to p (2 for p <= 2), as MPICH does.
#pragma once
#include <algorithm>
#include <fmt/format.h>

#include "ranklab/collective.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

inline constexpr int default_recexch_radix = 4;

// The radix of a call (algo_params::radix, 0 or -1: the default), before lowering to p.
inline int recexch_radix(const coll_args& a, int rank, const char* coll) {
  const int k = a.params.radix <= 0 ? default_recexch_radix : a.params.radix;
  if (k < 2) throw usage_error(rank, coll, fmt::format("recexch: radix {} (need at least 2)", k));
  return k;
}

struct recexch_plan {
  int p = 1, k = 2, pofk = 1, levels = 0, rem = 0, T = 0, fold_rounds = 0;

  recexch_plan(int p_, int radix) : p(p_), k(radix) {
    if (p < k) k = p > 2 ? p : 2;
    while (static_cast<long long>(pofk) * k <= p) {
      pofk *= k;
      ++levels;
    }
    rem = p - pofk;
    T = rem * k / (k - 1);
    for (int v = 0; v < pofk; ++v) fold_rounds = std::max(fold_rounds, real(v) - first_rank(v));
  }
  // The rank participant v is, and the first rank it stands for.
  int real(int v) const { return v < rem / (k - 1) ? v * k + k - 1 : v + rem; }
  int first_rank(int v) const { return v == 0 ? 0 : real(v - 1) + 1; }
  // New rank of a participant, -1 for a rank that folds away.
  int newrank(int rank) const {
    if (rank < T) return rank % k == k - 1 ? rank / k : -1;
    return rank - rem;
  }
  // The participant (new rank) a rank belongs to (itself for a participant).
  int owner(int rank) const {
    if (rank >= T) return rank - rem;
    const int last = rank + (k - 1 - rank % k);
    return last > T - 1 ? T - rem : last / k;
  }
  int power(int i) const {
    int q = 1;
    while (i-- > 0) q *= k;
    return q;
  }
  int digit(int v, int i) const { return v / power(i) % k; }
  // v with digit i set to d.
  int with_digit(int v, int i, int d) const { return v + (d - digit(v, i)) * power(i); }
  // Rounds one-ported, and with k-1 ports (MPICH's).
  int rounds() const { return (k - 1) * levels + 2 * fold_rounds; }
  int multiport_rounds() const { return levels + (rem > 0 ? 2 : 0); }
};

// Adds the rounds and says what `rank` does in them:
//   fold_in(partner, survives, t, last): fold round t; a folded-away rank sends to its
//     participant (survives false); a participant receives from partner (last: its last one);
//   exchange(v, phase, to, from, last): participant v in round j of a phase, to/from new ranks;
//   fold_out(partner, survives, t): the unfold rounds, mirrored.
template <class FoldIn, class Exchange, class FoldOut>
void recexch_rounds(schedule& s, const recexch_plan& f, int rank, FoldIn fold_in, Exchange exchange,
                    FoldOut fold_out) {
  const int v = f.newrank(rank), own = f.owner(rank);
  const int first = f.first_rank(own), senders = f.real(own) - first;
  for (int t = 0; t < f.fold_rounds; ++t) {
    s.next_round();
    if (v < 0 && rank - first == t) fold_in(f.real(own), false, t, false);
    if (v >= 0 && t < senders) fold_in(first + t, true, t, t == senders - 1);
  }
  for (int i = 0; i < f.levels; ++i)
    for (int j = 1; j < f.k; ++j) {
      s.next_round();
      if (v < 0) continue;
      const int d = f.digit(v, i);
      exchange(v, i, f.with_digit(v, i, (d + j) % f.k), f.with_digit(v, i, (d - j + f.k) % f.k), j == f.k - 1);
    }
  for (int t = 0; t < f.fold_rounds; ++t) {
    s.next_round();
    if (v < 0 && rank - first == t) fold_out(f.real(own), false, t);
    if (v >= 0 && t < senders) fold_out(first + t, true, t);
  }
}

}  // namespace ranklab::detail
