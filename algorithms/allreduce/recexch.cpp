// Allreduce, recursive exchange with radix k (MPICH, MPIR_Allreduce_intra_recexch, the
// latency variant: whole vectors; radix = algo_params::radix, default 4 here; MPICH's default
// radix 2 has the rounds of ranklab's recursive_doubling). Any p: the ranks beyond p' = the
// largest power of k <= p hand their vector to the last rank of their set of k consecutive
// ranks (patterns/recexch_plan.hpp), which gets the result back to them at the end. In phase
// i participant v sends its vector to the k-1 participants whose base-k digit i differs and
// receives theirs into scratch; at the end of the phase all k members of the group combine
// the k vectors as the same left fold in digit order, which is rank order (a group is a
// contiguous rank range): rank-ordered, so non-commutative operators are fine, and every
// rank ends with bit-identical results.
// Rounds: k-1 ports (MPICH): log_k p' (+2); one-ported here: (k-1) log_k p' (+ 2 f), f =
// min(k-1, T) fold rounds (T = floor((p-p') k/(k-1))).
// Cost: rounds (alpha + beta m) + ((k-1) log_k p' + f) gamma m.
#include <vector>

#include "patterns/recexch_plan.hpp"
#include "patterns/reduce_blocks.hpp"
#include "patterns/vector_fold.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const region out = detail::own_vector_in_out(s, n);
  const detail::recexch_plan f(a.p, detail::recexch_radix(a, rank, "allreduce"));
  if (a.p == 1) return s;
  // Incoming vectors: slot j holds the one of round j of a phase (or fold round j).
  detail::vector_slots v_slots(s, out, n);
  auto buf = [&](int j) { return v_slots.slot(j); };
  auto fold = [&](int count, int mine, auto at) { v_slots.fold(count, mine, at); };
  detail::recexch_rounds(
      s, f, rank,
      [&](int partner, bool survives, int t, bool last) {
        if (!survives) {
          s.send(partner, out);
          return;
        }
        s.recv(partner, buf(t));
        if (last) fold(t + 2, t + 1, [&](int e) { return buf(e); });  // the senders are lower ranks
      },
      [&](int v, int phase, int to, int from, bool last) {
        s.send(f.real(to), out);
        const int d = f.digit(v, phase), e_from = f.digit(from, phase);
        const int j = (d - e_from + f.k) % f.k;  // round j of the phase brings digit d - j
        s.recv(f.real(from), buf(j - 1));
        if (last) fold(f.k, d, [&](int e) { return buf((d - e + f.k) % f.k - 1); });
      },
      [&](int partner, bool survives, int) {
        if (survives)
          s.send(partner, out);
        else
          s.recv(partner, out);
      });
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const detail::recexch_plan f(a.p, detail::recexch_radix(a, no_rank, "allreduce"));
  const double bytes = static_cast<double>(a.count * elem);
  return f.rounds() * (m.alpha + m.beta * bytes) + ((f.k - 1) * f.levels + f.fold_rounds) * m.gamma * bytes;
}

const algorithm info{
    .name = "recexch",
    .coll = collective::allreduce,
    .summary =
        "MPICH recursive exchange, radix k (param, default 4; 2 = recursive_doubling's rounds), whole "
        "vectors, k-1 ports: log_k p' (+2) rounds; one-ported (k-1) log_k p' (+2f); rounds(alpha + beta m) "
        "+ ((k-1) log_k p' + f) gamma m; rank-ordered",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
