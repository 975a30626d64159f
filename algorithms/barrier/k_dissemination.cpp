// Barrier, dissemination with radix k (MPICH, `MPIR_Barrier_intra_k_dissemination`: the
// dissemination barrier of D. Hensgen, R. Finkel and U. Manber, "Two Algorithms for Barrier
// Synchronization", 1988, generalised to k-1 partners per phase). Phase i = 0, 1, ... while
// d = k^i < p: rank r sends an empty message to r + j d and receives one from r - j d
// (mod p), j = 1, ..., k-1. After phase i a rank has heard, through chains of messages, from
// the k^(i+1) ranks r - k^(i+1) + 1 .. r, so after ceil(log_k p) phases from everyone.
// MPICH posts the k-1 messages of a phase at once (k-1 ports); one-ported, each is a round.
// MPICH also sends for j d >= p, where the distance wraps round (to the rank itself when
// p divides j d); those messages tell the receiver nothing it does not hear from j' d < p
// already, so they are left out here. Radix k = algo_params::radix, default 4 (k = 2 is
// ranklab's dissemination, round for round; k >= p: one phase, the p-1 direct messages).
// Rounds: k-1 ports ceil(log_k p); one-ported sum over phases of #{j < k : j k^i < p},
// (k-1) log_k p for p = k^m and at most (k-1) ceil(log_k p). Cost: rounds * alpha
// (one-ported rounds).
// See docs/algorithms.md, "barrier".
#include <cstdint>
#include <string>

#include "patterns/rank_arithmetic.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

constexpr int default_radix = 4;

int radix_of(const coll_args& a, int rank) {
  const int k = a.params.radix <= 0 ? default_radix : a.params.radix;
  if (k < 2) throw usage_error(rank, "barrier", "k_dissemination: radix " + std::to_string(k) + " (need at least 2)");
  return k;
}

// One-ported rounds: one per distance j k^i < p.
int rounds_of(int p, int k) {
  int n = 0;
  for (std::int64_t d = 1; d < p; d *= k)
    for (std::int64_t j = 1; j < k && j * d < p; ++j) ++n;
  return n;
}

schedule build(const coll_args& a, int rank) {
  const int k = radix_of(a, rank);
  schedule s(rank, a.p, 0, 0);
  const region none{out_buffer, 0, 0};
  for (std::int64_t d = 1; d < a.p; d *= k)
    for (std::int64_t j = 1; j < k && j * d < a.p; ++j) {
      s.next_round();
      s.send(detail::mod(rank + j * d, a.p), none);
      s.recv(detail::mod(rank - j * d, a.p), none);
    }
  return s;
}

double cost(const coll_args& a, std::size_t, const cost_model& m) {
  return rounds_of(a.p, radix_of(a, no_rank)) * m.alpha;
}

const algorithm info{
    .name = "k_dissemination",
    .coll = collective::barrier,
    .summary = "MPICH dissemination with radix k (param, default 4; 2 = dissemination): empty messages to "
               "r + j k^i; k-1 ports ceil(log_k p) rounds, one-ported (k-1) per phase, <= (k-1)ceil(log_k p); "
               "rounds alpha",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
