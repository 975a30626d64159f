// Alltoall and alltoallv, hypercube store-and-forward with E-cube routing (the 5DV050 lecture
// "Algorithms for Collective Communication"): dimensions in fixed order k = 0, 1, ...; in step
// k every rank exchanges with r XOR 2^k all blocks whose route src -> dest still has to cross
// dimension k (bit k of src XOR dest), p/2 blocks. It is Bruck's index algorithm with XOR in
// place of addition (patterns/bruck.hpp): blocks are received into out on their last hop,
// else into one of two alternating scratch buffers. p must be a power of two (registered
// precondition; the builder rejects other p as well).
// Rounds: log2 p. Cost: log2 p (alpha + beta m p/2), m = bytes of a block.
// See docs/algorithms.md, "alltoall".
#include <fmt/format.h>

#include <bit>
#include <string>

#include "patterns/block_layout.hpp"
#include "patterns/bruck.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  if (!std::has_single_bit(static_cast<unsigned>(a.p)))
    throw usage_error(rank, std::string(name(a.coll)),
                      fmt::format("algorithm 'hypercube' needs p to be a power of two (p = {})", a.p));
  return detail::bruck_index_exchange(a, rank, detail::index_steps{.p = a.p, .xor_partners = true});
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const int steps = detail::ceil_log2(static_cast<std::uint64_t>(a.p));
  return steps * (m.alpha + m.beta * detail::mean_block_bytes(a, elem) * a.p / 2.0);
}

const algorithm info{
    .name = "hypercube",
    .serves = {collective::alltoall, collective::alltoallv},
    .summary =
        "hypercube store-and-forward, E-cube routing (5DV050 lecture): log2 p rounds of p/2 blocks; log2 p (alpha + "
        "beta m p/2); p = 2^k",
    .needs_power_of_two = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
