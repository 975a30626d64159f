// Alltoall, hypercube store-and-forward with E-cube routing (seed 001): dimensions in
// fixed order k = 0, 1, ...; in step k every rank exchanges with r XOR 2^k all blocks whose
// route src -> dest still has to cross dimension k (bit k of src XOR dest), p/2 blocks. Blocks
// are received into out on their last hop, else into one of two alternating scratch buffers.
// p must be a power of two (registered precondition; the builder rejects other p as well).
// Rounds: log2 p. Cost: log2 p (alpha + beta m p/2), m = bytes of a block.
// The builder is shared with alltoallv (include/ranklab/detail/alltoall_util.hpp).
#include "patterns/alltoall_util.hpp"

namespace ranklab {
namespace {

const algorithm info{
    .name = "hypercube",
    .coll = collective::alltoall,
    .summary = "hypercube store-and-forward, E-cube routing (seed 001): log2 p rounds of p/2 blocks; log2 p (alpha + beta m p/2); p = 2^k",
    .needs_power_of_two = true,
    .build = detail::alltoall::build_hypercube,
    .cost = detail::alltoall::cost_bruck,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
