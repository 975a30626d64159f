// Allgather and allgatherv, recursive exchange with radix k (MPICH,
// MPIR_Allgather_intra_recexch, its distance-doubling variant; radix = algo_params::radix,
// default 4 here; MPICH's default radix 2 is, round for round, ranklab's recursive_doubling).
// Any p: the p - p' ranks beyond p' = the largest power of k <= p hand their block to a
// participant of their set of k consecutive ranks before the exchange and get everything
// back after it (patterns/recexch_plan.hpp). In phase i participant v sends the blocks of its
// aligned group of k^i participants (a contiguous rank range) to each of the k-1 participants
// whose base-k digit i differs, and receives theirs: the data grows by a factor k per phase.
// A rank's own block goes out from its send buffer.
// Rounds: k-1 ports (MPICH): log_k p' (+2); one-ported here: (k-1) log_k p' (+ 2 f), f =
// min(k-1, T) fold rounds (T = floor((p-p') k/(k-1))).
// Cost: rounds alpha + beta N (p-1)/p (+ f beta N when folded), N = bytes of the result.
#include "patterns/block_layout.hpp"
#include "patterns/recexch_plan.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const detail::gathered_layout L(a);
  schedule s = L.start(a, rank);
  const detail::recexch_plan f(a.p, detail::recexch_radix(a, rank, "allgather"));
  // Participants [v, v + n) stand for ranks [first_rank(v), first_rank(v + n)).
  auto end_rank = [&](int v) { return v >= f.pofk ? a.p : f.first_rank(v); };
  auto group_blocks = [&](int v, int n) { return L.range(f.first_rank(v), end_rank(v + n)); };
  auto group_sent = [&](int v, int n) { return L.sent_range(f.first_rank(v), end_rank(v + n), rank); };
  auto missing = [&](int lost, int sender) {
    detail::region_list l;
    for (int j = 0; j < a.p; ++j)
      if (j != lost) l.add(L.sent(j, sender));
    return l;
  };
  detail::recexch_rounds(
      s, f, rank,
      [&](int partner, bool survives, int, bool) {
        if (survives)
          s.recv(partner, L.block(partner));
        else
          s.send(partner, L.sent(rank, rank));
      },
      [&](int v, int phase, int to, int from, bool) {
        const int n = f.power(phase);
        send_list(s, f.real(to), group_sent(v - v % n, n));
        recv_list(s, f.real(from), group_blocks(from - from % n, n));
      },
      [&](int partner, bool survives, int) {
        if (survives)
          send_list(s, partner, missing(partner, rank));
        else
          recv_list(s, partner, missing(rank, no_rank));
      });
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const detail::recexch_plan f(a.p, detail::recexch_radix(a, no_rank, "allgather"));
  const double extra = static_cast<double>(f.fold_rounds) * static_cast<double>(total_count(a) * elem);
  return detail::gathered_cost(a, elem, m, f.rounds(), extra);
}

const algorithm info{
    .name = "recexch",
    .serves = {collective::allgather, collective::allgatherv},
    .summary = "MPICH recursive exchange, radix k (param, default 4; 2 = recursive_doubling), k-1 ports: "
               "log_k p' (+2) rounds; one-ported (k-1) log_k p' (+2f) rounds; rounds alpha + beta N(p-1)/p "
               "(+ f beta N when folded)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
