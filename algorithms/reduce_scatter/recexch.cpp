// Reduce_scatter and reduce_scatter_block, recursive exchange with radix k (MPICH's
// MPIR_TSP_Ireduce_scatter_sched_intra_recexch, which takes the digits from the highest down
// and is selected for commutative operators only; radix = algo_params::radix, default 4 here). Any p: the
// ranks beyond p' = the largest power of k <= p hand their whole vector to the last rank of
// their set of k consecutive ranks (patterns/recexch_plan.hpp) and get their result block
// back at the end. The exchange is recursive halving generalised to radix k, digits from the
// lowest up (so that groups are contiguous rank ranges and the result is rank-ordered): in
// phase i participant v is responsible for the blocks of the participants that share its
// lowest i digits; it sends to the peer with digit i = e (k-1 peers) the blocks of those
// among them whose digit i is e, receives the peers' partials of its own share into scratch,
// and at the end of the phase combines the k partials in digit order (rank order): the data
// shrinks by a factor k per phase while the distance grows by k. Unlike MPICH's order, this
// keeps rank order, so non-commutative operators are fine.
// Rounds: k-1 ports (MPICH): log_k p' (+2); one-ported here: (k-1) log_k p' (+ 2 f), f =
// min(k-1, T) fold rounds (T = floor((p-p') k/(k-1))).
// Cost: rounds alpha + (p'-1)/p' M (beta + gamma) (+ f M (beta + gamma) + f M/p beta when
// folded), M = bytes of the whole vector.
#include <vector>

#include "patterns/recexch_plan.hpp"
#include "patterns/reduce_blocks.hpp"
#include "patterns/reduce_scatter_phase.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s = detail::reduce_scatter_schedule(a, rank);
  const auto blocks = detail::result_blocks(a);
  const std::uint64_t n = s.in_count();
  const auto& own = blocks[static_cast<std::size_t>(rank)];
  const region result{out_buffer, 0, own.count};
  const detail::recexch_plan f(a.p, detail::recexch_radix(a, rank, "reduce_scatter"));
  if (a.p == 1) {
    if (own.count > 0) s.copy(region{in_buffer, own.offset, own.count}, result);
    return s;
  }
  const region whole_in{in_buffer, 0, n};
  const int me = f.newrank(rank);
  buffer_id acc = no_buffer;
  if (me >= 0) {
    acc = s.scratch(n);
    s.copy(whole_in, region{acc, 0, n});
  }
  std::vector<buffer_id> slot;
  auto buf = [&](int j) {
    while (static_cast<int>(slot.size()) <= j) slot.push_back(s.scratch(n));
    return slot[static_cast<std::size_t>(j)];
  };
  // The elements of the blocks participant u stands for (contiguous in the layout).
  auto range_of = [&](int u) {
    const auto& lo = blocks[static_cast<std::size_t>(f.first_rank(u))];
    const auto& hi = blocks[static_cast<std::size_t>(f.real(u))];
    return detail::elem_range{lo.offset, hi.offset + hi.count - lo.offset};
  };
  // Participants sharing v's lowest i digits whose digit i is e, in increasing order.
  auto members = [&](int v, int i, int e) {
    std::vector<int> m;
    const int low = v % f.power(i), step = f.power(i + 1);
    for (int u = low + e * f.power(i); u < f.pofk; u += step) m.push_back(u);
    return m;
  };
  // dst = operand_0 (+) ... (+) operand_{count-1} as a left fold, dst holding operand `mine`.
  auto fold = [&](int count, int mine, region dst, auto at) {
    if (dst.count == 0) return;
    if (mine > 0) {
      const region first = at(0);
      for (int e = 1; e < mine; ++e) s.reduce(at(e), first, combine::reduce_in_right);
      s.reduce(first, dst, combine::reduce_in_left);
    }
    for (int e = mine + 1; e < count; ++e) s.reduce(at(e), dst, combine::reduce_in_right);
  };
  detail::recexch_rounds(
      s, f, rank,
      [&](int partner, bool survives, int t, bool last) {
        if (!survives) {
          s.send(partner, whole_in);
          return;
        }
        s.recv(partner, region{buf(t), 0, n});
        if (last) fold(t + 2, t + 1, region{acc, 0, n}, [&](int e) { return region{buf(e), 0, n}; });
      },
      [&](int v, int phase, int to, int from, bool last) {
        const int d = f.digit(v, phase);
        detail::region_list out;
        for (int u : members(v, phase, f.digit(to, phase))) {
          const auto r = range_of(u);
          out.add(region{acc, r.offset, r.count});
        }
        send_list(s, f.real(to), out);
        const int j = (d - f.digit(from, phase) + f.k) % f.k;
        const auto mine = members(v, phase, d);
        detail::region_list in;
        std::uint64_t at = 0;
        for (int u : mine) {
          const auto r = range_of(u);
          in.add(region{buf(j - 1), at, r.count});
          at += r.count;
        }
        recv_list(s, f.real(from), in);
        if (!last) return;
        at = 0;
        for (int u : mine) {
          const auto r = range_of(u);
          const std::uint64_t here = at;
          fold(f.k, d, region{acc, r.offset, r.count},
               [&](int e) { return region{buf((d - e + f.k) % f.k - 1), here, r.count}; });
          at += r.count;
        }
      },
      [&](int partner, bool survives, int) {
        if (survives) {
          const auto& b = blocks[static_cast<std::size_t>(partner)];
          s.send(partner, region{acc, b.offset, b.count});
        } else {
          s.recv(partner, result);
        }
      });
  if (me >= 0 && own.count > 0) s.copy(region{acc, own.offset, own.count}, result);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const detail::recexch_plan f(a.p, detail::recexch_radix(a, no_rank, "reduce_scatter"));
  const double M = detail::result_bytes(a, elem), q = f.pofk;
  double t = f.rounds() * m.alpha + (q - 1) / q * M * (m.beta + m.gamma);
  if (f.rem > 0) t += f.fold_rounds * (M * (m.beta + m.gamma) + M / a.p * m.beta);
  return t;
}

const algorithm info{
    .name = "recexch",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary = "MPICH recursive exchange, radix k (param, default 4), distance doubling, k-1 ports: log_k p' (+2) "
               "rounds; one-ported (k-1) log_k p' (+2f); rounds alpha + (p'-1)/p' M (beta + gamma) (+ folding); "
               "rank-ordered",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
