// Allgather, 2-D mesh (seed 001): ranks form the most square grid rows x cols = p (rows the
// largest divisor <= sqrt(p), rank = row*cols + col; a prime p gives 1 x p, i.e. the ring).
// Ring allgather in every row, then ring allgather of whole rows in every column.
// Rounds: (cols-1) + (rows-1) (2(sqrt(p)-1) for a square p).
// Cost: (cols-1)(alpha + beta n) + (rows-1)(alpha + beta cols n), n = bytes of a block.
// The builder is shared with allgatherv (include/ranklab/detail/allgather_util.hpp).
#include "patterns/allgather_util.hpp"

namespace ranklab {
namespace {

const algorithm info{
    .name = "mesh2d",
    .coll = collective::allgather,
    .summary = "mesh2d (seed 001): ring in rows then columns of the most square grid p = rows x cols (prime p: ring); (rows-1)+(cols-1) rounds",
    .build = detail::allgather::build_mesh2d,
    .cost = detail::allgather::cost_mesh2d,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
