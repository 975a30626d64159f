// Alltoall and alltoallv, pairwise exchange (the 5DV050 lecture "Algorithms for Collective
// Communication": the volume-optimal all-to-all personalized exchange; MPICH, Open MPI):
// p a power of two: round k exchanges with r XOR k in both directions; otherwise the shifted
// exchange, send to r+k and receive from r-k. One block per message.
// Rounds: p-1. Cost: (p-1)(alpha + beta m), m = bytes of a block.
// See docs/algorithms.md, "alltoall".
#include <bit>

#include "patterns/block_layout.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  if (std::has_single_bit(static_cast<unsigned>(a.p))) {
    auto partner = [&](int k) { return rank ^ k; };
    return detail::direct_exchange(a, rank, partner, partner);
  }
  return detail::direct_exchange(
      a, rank, [&](int k) { return detail::mod(rank + k, a.p); }, [&](int k) { return detail::mod(rank - k, a.p); });
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return (a.p - 1) * (m.alpha + m.beta * detail::mean_block_bytes(a, elem));
}

const algorithm info{
    .name = "pairwise",
    .serves = {collective::alltoall, collective::alltoallv},
    .summary =
        "pairwise exchange, XOR partner for p = 2^k, shifted (r+k, r-k) otherwise: p-1 rounds of one block, "
        "(p-1)(alpha + beta m)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
