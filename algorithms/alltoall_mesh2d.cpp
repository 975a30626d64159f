// Alltoall, 2-D mesh (seed 001: all-to-all personalized on a mesh): ranks form the most
// square grid rows x cols = p (prime p: 1 x p). Phase 1 in rows: rank (R, C) sends (R, C') its
// rows blocks for column C'; phase 2 in columns: (R, C) sends (R', C) the cols blocks its row
// holds for (R', C). Within a row or column the exchange is direct and shifted (the seed
// forwards along the ring; same rounds, less volume in the fully connected model).
// Rounds: (cols-1) + (rows-1). Cost: (cols-1)(alpha + beta rows m) + (rows-1)(alpha + beta cols m).
// The builder is shared with alltoallv (include/ranklab/detail/alltoall_util.hpp).
#include "patterns/alltoall_util.hpp"

namespace ranklab {
namespace {

const algorithm info{
    .name = "mesh2d",
    .coll = collective::alltoall,
    .summary = "mesh2d (seed 001): rows then columns of the most square grid p = rows x cols, blocks grouped per column then per row; (cols-1)+(rows-1) rounds",
    .build = detail::alltoall::build_mesh2d,
    .cost = detail::alltoall::cost_mesh2d,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
