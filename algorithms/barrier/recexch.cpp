// Barrier, recursive exchange with radix k (MPICH, `MPIR_Barrier_intra_recexch`, which is
// MPIR_Allreduce_intra_recexch on zero bytes): the message pattern of ranklab's allreduce
// recexch with empty messages (patterns/recexch_plan.hpp). With p' the largest power of k
// <= p, the ranks beyond the p' participants report to the last rank of their set of k
// consecutive ranks (an incomplete last set to rank T = floor((p-p') k/(k-1))); in each of
// the log_k p' phases participant v exchanges with the k-1 participants whose base-k digit i
// differs from v's (one-ported: round j = 1..k-1 sends to digit d+j, receives from d-j,
// mod k); finally each participant releases the ranks that reported to it. After phase i a
// participant has heard from its whole group of k^(i+1) participants, so after the last from
// everyone. Radix k = algo_params::radix, default 4 here; k = 2 is ranklab's
// recursive_doubling barrier, round for round; a radix above p is lowered to p.
// Rounds: k-1 ports (MPICH) log_k p' (+2 when p is not a power of k); one-ported
// (k-1) log_k p' + 2f, f = min(k-1, T) fold rounds. Cost: rounds * alpha (one-ported).
// See docs/algorithms.md, "barrier".
#include "patterns/recexch_plan.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, 0);
  const region none{out_buffer, 0, 0};
  const detail::recexch_plan f(a.p, detail::recexch_radix(a, rank, "barrier"));
  detail::recexch_rounds(
      s, f, rank,
      [&](int partner, bool survives, int, bool) {  // arrival of the folded-away ranks
        if (survives)
          s.recv(partner, none);
        else
          s.send(partner, none);
      },
      [&](int, int, int to, int from, bool) {
        s.send(f.real(to), none);
        s.recv(f.real(from), none);
      },
      [&](int partner, bool survives, int) {  // their release
        if (survives)
          s.send(partner, none);
        else
          s.recv(partner, none);
      });
  return s;
}

double cost(const coll_args& a, std::size_t, const cost_model& m) {
  const detail::recexch_plan f(a.p, detail::recexch_radix(a, no_rank, "barrier"));
  return f.rounds() * m.alpha;
}

const algorithm info{
    .name = "recexch",
    .coll = collective::barrier,
    .summary = "MPICH recursive exchange, radix k (param, default 4; 2 = recursive_doubling), empty messages: "
               "k-1 ports log_k p' (+2) rounds, one-ported (k-1) log_k p' (+2f); rounds alpha",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
