// reduce_scatter_block, round-optimal on a circulant graph (seed 000; algorithms.md 1.9): the circulant
// all-broadcast run backwards with combining, i.e. p simultaneous reductions, rank j the
// root of its own part. Every partial block is sent and received once. Commutative
// operators only (combination follows the schedule); deterministic.
// Rounds: n - 1 + q. Cost: (n - 1 + q)(alpha + (beta + gamma)(p-1)/p M/n), M the input size.
#include "circulant/circulant_collectives.hpp"

namespace ranklab {
namespace {

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  std::uint64_t largest = 0;
  for (int j = 0; j < a.p; ++j) largest = std::max(largest, block_count(a, j));
  return detail::circulant_all_broadcast_cost(a, static_cast<double>(total_count(a) * elem), largest, true, m);
}

const algorithm info{
    .name = "circulant",
    .coll = collective::reduce_scatter_block,
    .summary = "round-optimal reduce-scatter: the circulant all-broadcast backwards, n-1+q rounds, "
               "(n-1+q)(alpha + (beta+gamma)(p-1)M/(p n))",
    .needs_commutative = true,
    .build = detail::circulant_reduce_scatter,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
