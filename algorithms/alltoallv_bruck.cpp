// Alltoallv (the counts matrix every rank passes gives the sizes of forwarded blocks), Bruck et al. (1997; MPICH, Intel MPI): in step k every rank sends to r + 2^k
// all blocks whose distance (dest - src mod p) has bit k set. The classic version rotates the
// blocks before and after and packs/unpacks each step; here each block keeps its position,
// is sent from where it is (in, or scratch) and received where it goes next (out on its last
// hop, else one of two alternating scratch buffers), as multi-region messages: no local copies.
// Rounds: ceil(log2 p), any p. Cost: ceil(log2 p)(alpha + beta m p/2), m = bytes of a block.
// The builder is shared with alltoall (include/ranklab/detail/alltoall_util.hpp).
#include "patterns/alltoall_util.hpp"

namespace ranklab {
namespace {

const algorithm info{
    .name = "bruck",
    .coll = collective::alltoallv,
    .summary = "Bruck: ceil(log2 p) rounds for any p, multi-region messages instead of rotations and packing; ceil(log2 p)(alpha + beta m p/2)",
    .build = detail::alltoall::build_bruck,
    .cost = detail::alltoall::cost_bruck,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
