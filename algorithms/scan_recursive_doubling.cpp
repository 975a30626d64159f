// Scan, recursive doubling (seed 001: prefix sum on a hypercube; MPICH's algorithm): for
// mask = 1, 2, 4, ... exchange partial results with r XOR mask; a rank above its partner puts
// the partner's partial on the left of its partial and its result, a rank below on the right
// of its partial. Partners >= p are skipped, which is sound for any p (the missing ranks are
// always above). Partials never used again are neither updated nor sent, so a rank's last
// exchanges are one-way. Rank order is kept: non-commutative operators are fine.
// Rounds: ceil(log2 p). Cost: ceil(log2 p)(alpha + beta m + 2 gamma m), m = bytes of the buffer.
// The builder is shared with exscan (include/ranklab/detail/scan_util.hpp).
#include "patterns/scan_util.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::prefix::build_recursive_doubling(a, rank, false); }

const algorithm info{
    .name = "recursive_doubling",
    .coll = collective::scan,
    .summary = "recursive doubling (seed 001 hypercube prefix), any p: ceil(log2 p) rounds, ceil(log2 p)(alpha + beta m + 2 gamma m); rank-ordered, non-commutative operators allowed",
    .needs_commutative = false,
    .build = build,
    .cost = detail::prefix::cost_recursive_doubling,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
