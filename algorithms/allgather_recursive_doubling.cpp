// Allgather, recursive doubling (seed 001: all-to-all broadcast on a hypercube; MPICH,
// Open MPI). Any p: with p' the largest power of two <= p and rem = p - p', ranks 2i and 2i+1
// (i < rem) fold into one survivor before the log2 p' exchange rounds (the even rank hands
// its block over) and the odd rank hands everything back afterwards; each survivor stands for
// a contiguous rank range, so every message is a list of that range's blocks.
// Rounds: log2 p (p a power of two), floor(log2 p) + 2 otherwise.
// Cost: rounds alpha + beta N (p-1)/p (+ beta N for the folding), N = bytes of the result.
// The builder is shared with allgatherv (include/ranklab/detail/allgather_util.hpp).
#include "patterns/allgather_util.hpp"

namespace ranklab {
namespace {

const algorithm info{
    .name = "recursive_doubling",
    .coll = collective::allgather,
    .summary = "recursive doubling, non-power-of-two p by folding pairs: log2 p rounds for p = 2^k, floor(log2 p)+2 otherwise; rounds alpha + beta N(p-1)/p (+ beta N when folded)",
    .build = detail::allgather::build_recursive_doubling,
    .cost = detail::allgather::cost_recursive_doubling,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
