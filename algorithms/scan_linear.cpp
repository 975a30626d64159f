// Scan, linear chain: rank k sends its inclusive prefix x_0 (+) ... (+) x_k to k+1 in round
// k, which combines it on the left of its own x_{k+1} while receiving (reduce_in_left). Rank
// order is kept, so non-commutative operators are fine. Any p.
// Rounds: p-1. Cost: (p-1)(alpha + beta m + gamma m), m = bytes of the buffer.
// The builder is shared with exscan (include/ranklab/detail/scan_util.hpp).
#include "patterns/scan_util.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::prefix::build_chain(a, rank, false); }

const algorithm info{
    .name = "linear",
    .coll = collective::scan,
    .summary = "linear chain: p-1 rounds, (p-1)(alpha + (beta + gamma) m); rank-ordered, non-commutative operators allowed",
    .needs_commutative = false,
    .build = build,
    .cost = detail::prefix::cost_chain,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
