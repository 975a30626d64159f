// Exscan, linear chain: rank k sends x_0 (+) ... (+) x_k to k+1 in round k; rank k+1 receives
// it into out as its result and forwards result (+) x_{k+1}, built in scratch from a copy of
// its input taken in the prologue (so in-place calls work). Rank 0's out is left unchanged.
// Rank order is kept, so non-commutative operators are fine. Any p.
// Rounds: p-1. Cost: (p-1)(alpha + beta m + gamma m), m = bytes of the buffer.
// The builder is shared with scan (include/ranklab/detail/scan_util.hpp).
#include "patterns/scan_util.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::prefix::build_chain(a, rank, true); }

const algorithm info{
    .name = "linear",
    .coll = collective::exscan,
    .summary = "linear chain: p-1 rounds, (p-1)(alpha + (beta + gamma) m); rank 0's out unchanged; non-commutative operators allowed",
    .needs_commutative = false,
    .build = build,
    .cost = detail::prefix::cost_chain,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
