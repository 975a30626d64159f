// Alltoall, linear (direct): every rank sends each block straight to its destination, as
// Open MPI's basic linear algorithm does by posting all at once; one-ported, round k = 1..p-1
// sends to r+k and receives from r-k (for p not a power of two this is also what pairwise does).
// Rounds: p-1. Cost: (p-1)(alpha + beta m), m = bytes of a block.
// The builder is shared with alltoallv (include/ranklab/detail/alltoall_util.hpp).
#include "patterns/alltoall_util.hpp"

namespace ranklab {
namespace {

const algorithm info{
    .name = "linear",
    .coll = collective::alltoall,
    .summary = "linear direct exchange, round k to r+k from r-k: p-1 rounds, (p-1)(alpha + beta m)",
    .build = detail::alltoall::build_linear,
    .cost = detail::alltoall::cost_direct,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
