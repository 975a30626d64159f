// Allreduce = circulant reduce-scatter + circulant allgatherv on the same near-equal
// partition, as J. L. Träff, "Optimal Broadcast Schedules in Logarithmic Time with
// Applications to Broadcast, All-Broadcast, Reduction and All-Reduction" composes its
// all-reduction. Both phases are round-optimal for their n. Commutative operators only;
// deterministic. See docs/algorithms.md, "allreduce".
// Rounds: 2(n - 1 + q). Cost: 2(n - 1 + q) alpha + (n - 1 + q)(2 beta + gamma)(p-1)/p m/n.
#include "circulant/circulant_collectives.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, a.count);
  s.copy(region{in_buffer, 0, a.count}, region{out_buffer, 0, a.count});
  if (a.p == 1 || a.count == 0) return s;
  const auto parts = detail::equal_parts(a.count, a.p);
  // The receive buffer accumulates: after the reduce phase this rank's part is final,
  // the allgather phase then overwrites every other part with its final value.
  detail::all_broadcast_rounds(s, a, parts, out_buffer, detail::circulant_direction::reduce);
  detail::all_broadcast_rounds(s, a, parts, out_buffer, detail::circulant_direction::broadcast);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  const std::uint64_t part = (a.count + static_cast<std::uint64_t>(a.p) - 1) / static_cast<std::uint64_t>(a.p);
  return detail::circulant_all_broadcast_cost(a, bytes, part, true, m) +
         detail::circulant_all_broadcast_cost(a, bytes, part, false, m);
}

const algorithm info{
    .name = "circulant",
    .coll = collective::allreduce,
    .summary = "circulant reduce-scatter + circulant allgatherv: 2(n-1+q) rounds",
    .needs_commutative = true,
    .composition = "reduce_scatter circulant + allgatherv circulant",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
