// Allreduce, recursive multiplying (MPICH, MPIR_Allreduce_intra_recursive_multiplying, after
// J. Ruefenacht, M. Bull, S. Booth, "Generalisation of recursive doubling for AllReduce",
// Parallel Computing 2017): recursive doubling with radix k = algo_params::radix (default 4
// here). p' = the largest power of k <= p (1 when k > p, as in MPICH). The ranks >= p' hand
// their vector round-robin to rank r mod p' (rank p' + j, 2p' + j, ... to j) and get the
// result back at the end; then in phase i (distance k^i) each group of k ranks that differ
// in base-k digit i exchanges whole vectors, and every member combines the k vectors as the
// same left fold in digit (rank) order, so all ranks end bit-identical. The round-robin fold
// makes rank j stand for ranks j, j + p', ...: not a contiguous range, so the operator must
// be commutative (MPICH asserts it when p is not a power of k). For p a power of k the
// schedule is allreduce recexch's at the same radix.
// Rounds: k-1 ports (MPICH): log_k p' (+2); one-ported here: (k-1) log_k p' + 2f, f =
// ceil(p/p') - 1 fold rounds.
// Cost: rounds (alpha + beta m) + ((k-1) log_k p' + f) gamma m.
#include <vector>

#include "patterns/recexch_plan.hpp"
#include "patterns/reduce_blocks.hpp"
#include "patterns/vector_fold.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

struct plan {
  int k = 2, q = 1, levels = 0, fold = 0;
  plan(int p, int radix) : k(radix) {
    while (static_cast<long long>(q) * k <= p) {
      q *= k;
      ++levels;
    }
    fold = (p + q - 1) / q - 1;
  }
  int power(int i) const {
    int n = 1;
    while (i-- > 0) n *= k;
    return n;
  }
  int rounds() const { return (k - 1) * levels + 2 * fold; }
};

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const region out = detail::own_vector_in_out(s, n);
  const plan f(a.p, detail::recexch_radix(a, rank, "allreduce"));
  if (a.p == 1) return s;
  // Incoming vectors: slot j holds the one of round j of a phase (or fold round j).
  detail::vector_slots v_slots(s, out, n);
  auto buf = [&](int j) { return v_slots.slot(j); };
  auto fold = [&](int count, int mine, auto at) { v_slots.fold(count, mine, at); };
  const bool inside = rank < f.q;
  const int senders = inside ? (a.p - 1 - rank) / f.q : 0;  // ranks rank + q, rank + 2q, ... < p
  for (int t = 0; t < f.fold; ++t) {                        // fold round t: rank j + (t+1) q sends to j
    s.next_round();
    if (!inside && rank / f.q - 1 == t) s.send(rank % f.q, out);
    if (inside && t < senders) {
      s.recv(rank + (t + 1) * f.q, buf(t));
      if (t == senders - 1) fold(senders + 1, 0, [&](int e) { return buf(e - 1); });
    }
  }
  for (int i = 0; i < f.levels; ++i) {
    const int dist = f.power(i);
    for (int j = 1; j < f.k; ++j) {
      s.next_round();
      if (!inside) continue;
      const int d = rank / dist % f.k;
      s.send(rank + ((d + j) % f.k - d) * dist, out);
      s.recv(rank + ((d - j + f.k) % f.k - d) * dist, buf(j - 1));
      if (j == f.k - 1) fold(f.k, d, [&](int e) { return buf((d - e + f.k) % f.k - 1); });
    }
  }
  for (int t = 0; t < f.fold; ++t) {
    s.next_round();
    if (!inside && rank / f.q - 1 == t) s.recv(rank % f.q, out);
    if (inside && t < senders) s.send(rank + (t + 1) * f.q, out);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const plan f(a.p, detail::recexch_radix(a, no_rank, "allreduce"));
  const double bytes = static_cast<double>(a.count * elem);
  return f.rounds() * (m.alpha + m.beta * bytes) + ((f.k - 1) * f.levels + f.fold) * m.gamma * bytes;
}

const algorithm info{
    .name = "recursive_multiplying",
    .coll = collective::allreduce,
    .summary =
        "MPICH recursive multiplying (Ruefenacht et al. 2017), radix k (param, default 4), round-robin fold, "
        "k-1 ports: log_k p' (+2) rounds; one-ported (k-1) log_k p' + 2(ceil(p/p')-1); rounds(alpha + beta m) "
        "+ ((k-1) log_k p' + f) gamma m; commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
