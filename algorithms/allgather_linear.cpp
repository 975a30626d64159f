// Allgather, linear (direct): every rank sends its own block straight to every other rank, as
// LibNBC's linear algorithm does by posting all sends at once; one-ported, round k = 1..p-1
// sends to r+k and receives from r-k. Any p.
// Rounds: p-1. Cost: (p-1) alpha + beta N (p-1)/p, N = bytes of the gathered result.
// The builder is shared with allgatherv (include/ranklab/detail/allgather_util.hpp).
#include "patterns/allgather_util.hpp"

namespace ranklab {
namespace {

const algorithm info{
    .name = "linear",
    .coll = collective::allgather,
    .summary = "linear direct exchange, round k to r+k: p-1 rounds, (p-1) alpha + beta N(p-1)/p",
    .build = detail::allgather::build_linear,
    .cost = detail::allgather::cost_linear,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
