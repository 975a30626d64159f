// Allgather, ring (seed 001: all-to-all broadcast on a ring). Round k = 1..p-1: pass
// block r-k+1 to r+1, receive block r-k from r-1. Any p.
// Rounds: p-1. Cost: (p-1) alpha + beta N (p-1)/p, N = bytes of the gathered result.
// The builder is shared with allgatherv (include/ranklab/detail/allgather_util.hpp).
#include "patterns/allgather_util.hpp"

namespace ranklab {
namespace {

const algorithm info{
    .name = "ring",
    .coll = collective::allgather,
    .summary = "ring (seed 001): p-1 rounds, (p-1) alpha + beta N(p-1)/p",
    .build = detail::allgather::build_ring,
    .cost = detail::allgather::cost_ring,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
