// allgather, round-optimal on a circulant graph (seed 000, Appendix A, Algorithm 7;
// algorithms.md 1.8): all p ranks broadcast their n-block parts at once. In every round a
// rank sends one message packing, for every root, the block that root's schedule says to
// send (as a list of regions: no packing copy), so the whole allgather takes the rounds of one
// broadcast. Ranks contributing nothing are skipped, so very irregular counts cost about a
// broadcast of the same total.
// Rounds: n - 1 + q. Cost: (n - 1 + q)(alpha + beta (p-1)/p M/n), M the gathered size.
#include "circulant/circulant_collectives.hpp"

namespace ranklab {
namespace {

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  std::uint64_t largest = 0;
  for (int j = 0; j < a.p; ++j) largest = std::max(largest, block_count(a, j));
  return detail::circulant_all_broadcast_cost(a, static_cast<double>(total_count(a) * elem), largest, false, m);
}

const algorithm info{
    .name = "circulant",
    .coll = collective::allgather,
    .summary = "round-optimal all-broadcast on a circulant graph (Träff 2024, Alg. 7): n-1+q rounds, "
               "(n-1+q)(alpha + beta (p-1)M/(p n))",
    .build = detail::circulant_allgather,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
