// Alltoall, ring store-and-forward (seed 001: all-to-all personalized on a ring): every
// rank's p-1 blocks travel right as one packet that leaves a block at each hop; step k forwards
// p-k blocks. Blocks are received straight into out (their last hop) or into one of two
// alternating scratch buffers, so nothing is copied locally.
// Rounds: p-1. Cost: (p-1) alpha + beta m p(p-1)/2, m = bytes of a block.
// The builder is shared with alltoallv (include/ranklab/detail/alltoall_util.hpp).
#include "patterns/alltoall_util.hpp"

namespace ranklab {
namespace {

const algorithm info{
    .name = "ring",
    .coll = collective::alltoall,
    .summary = "ring store-and-forward (seed 001): p-1 rounds, (p-1) alpha + beta m p(p-1)/2",
    .build = detail::alltoall::build_ring,
    .cost = detail::alltoall::cost_ring,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
