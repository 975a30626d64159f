// Exscan, recursive doubling (seed 001's hypercube prefix, MPICH's exscan): as scan, but the
// result starts empty and the first partial arriving from below is received straight into
// out; later ones are combined on its left. Rank 0 never receives from below, so its out is
// left unchanged. Rank order is kept: non-commutative operators are fine. Any p.
// Rounds: ceil(log2 p). Cost: ceil(log2 p)(alpha + beta m + 2 gamma m), m = bytes of the buffer.
// The builder is shared with scan (include/ranklab/detail/scan_util.hpp).
#include "patterns/scan_util.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::prefix::build_recursive_doubling(a, rank, true); }

const algorithm info{
    .name = "recursive_doubling",
    .coll = collective::exscan,
    .summary = "recursive doubling (seed 001 hypercube prefix), any p: ceil(log2 p) rounds; rank 0's out unchanged; rank-ordered, non-commutative operators allowed",
    .needs_commutative = false,
    .build = build,
    .cost = detail::prefix::cost_recursive_doubling,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
