// Allgather(v), round-optimal all-broadcast on a circulant graph: J. L. Träff, "Optimal
// Broadcast Schedules in Logarithmic Time with Applications to Broadcast, All-Broadcast,
// Reduction and All-Reduction", Algorithm 7. All p ranks broadcast their blocks, each cut
// into n parts, at once: in every round a rank sends one message packing, for every root,
// the part that root's schedule says to send (as a list of regions: no packing copy), so
// the whole allgather takes the rounds of one broadcast. A rank's own parts go out from its
// send buffer, not from their copy in out. Ranks contributing nothing are skipped, so very
// irregular counts cost about a broadcast of the same total.
// See docs/algorithms.md, "allgather".
// Rounds: n - 1 + q, q = ceil(log2 p). Cost: (n - 1 + q)(alpha + beta (p-1)/p M/n), M the
// gathered size.
#include "circulant/circulant_collectives.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const auto parts = detail::block_parts(a);
  const detail::root_part& mine = parts[static_cast<std::size_t>(rank)];
  const region input{in_buffer, 0, mine.count};
  s.copy(input, region{out_buffer, mine.offset, mine.count});
  if (a.p == 1 || total_count(a) == 0) return s;
  // The rank's own blocks go out from in, not from their copy in out (see circulant_rounds).
  detail::all_broadcast_rounds(s, a, parts, out_buffer, detail::circulant_direction::broadcast, &input);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::block_all_broadcast_cost(a, elem, false, m);
}

const algorithm info{
    .name = "circulant",
    .serves = {collective::allgather, collective::allgatherv},
    .summary =
        "round-optimal all-broadcast on a circulant graph (Träff 2024, Alg. 7): n-1+q rounds, "
        "(n-1+q)(alpha + beta (p-1)M/(p n))",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
