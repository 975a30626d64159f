// Alltoall, pairwise exchange (seed 001's volume-optimal algorithm; MPICH, Open MPI):
// p a power of two: round k exchanges with r XOR k in both directions; otherwise the shifted
// exchange, send to r+k and receive from r-k. One block per message.
// Rounds: p-1. Cost: (p-1)(alpha + beta m), m = bytes of a block.
// The builder is shared with alltoallv (include/ranklab/detail/alltoall_util.hpp).
#include "patterns/alltoall_util.hpp"

namespace ranklab {
namespace {

const algorithm info{
    .name = "pairwise",
    .coll = collective::alltoall,
    .summary = "pairwise exchange, XOR partner for p = 2^k, shifted (r+k, r-k) otherwise: p-1 rounds of one block, (p-1)(alpha + beta m)",
    .build = detail::alltoall::build_pairwise,
    .cost = detail::alltoall::cost_direct,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
