// Allgather, Bruck et al. (seed 004, LibNBC/Open MPI pull 6573). Rank i collects the
// blocks in rotated order: in step k it sends everything it has (at most 2^k blocks, in the
// last step only the p - 2^k still missing) to i - 2^k and receives from i + 2^k; finally it
// rotates its buffer by i blocks with local copies (in out itself through a scratch buffer of
// the smaller part when the layout is packed; via a scratch rotated buffer with displacements).
// Rounds: ceil(log2 p), any p. Cost: ceil(log2 p) alpha + beta N (p-1)/p, plus a local copy of
// about N bytes for the rotation, N = bytes of the gathered result.
// The builder is shared with allgatherv (include/ranklab/detail/allgather_util.hpp).
#include "patterns/allgather_util.hpp"

namespace ranklab {
namespace {

const algorithm info{
    .name = "bruck",
    .coll = collective::allgather,
    .summary = "Bruck (seed 004): ceil(log2 p) rounds for any p, final rotation by local copies; ceil(log2 p) alpha + beta N(p-1)/p",
    .build = detail::allgather::build_bruck,
    .cost = detail::allgather::cost_bruck,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
