// Alltoall and alltoallv, linear (direct): every rank sends each block straight to its
// destination, as Open MPI's basic linear algorithm does by posting all at once; one-ported,
// round k = 1..p-1 sends to r+k and receives from r-k (for p not a power of two this is also
// what pairwise does).
// Rounds: p-1. Cost: (p-1)(alpha + beta m), m = bytes of a block.
// See docs/algorithms.md, "alltoall".
#include "patterns/block_layout.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  return detail::direct_exchange(
      a, rank, [&](int k) { return detail::mod(rank + k, a.p); }, [&](int k) { return detail::mod(rank - k, a.p); });
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return (a.p - 1) * (m.alpha + m.beta * detail::mean_block_bytes(a, elem));
}

const algorithm info{
    .name = "linear",
    .serves = {collective::alltoall, collective::alltoallv},
    .summary = "linear direct exchange, round k to r+k from r-k: p-1 rounds, (p-1)(alpha + beta m)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
