// Reduce-scatter with equal blocks, pairwise exchange (MPICH's reduce_scatter for long
// messages): in step i = 1..p-1 rank r sends its raw contribution to block (r+i) mod p directly
// to that rank and receives rank (r-i) mod p's contribution to its own block. Contributions
// arrive in the order r-1, ..., 0, p-1, ..., r+1; a low accumulator (x_0 .. x_r, in the receive
// buffer) and a high one (x_{r+1} .. x_{p-1}, scratch) each grow to the left, and one local
// reduction joins them, so the result is rank-ordered: non-commutative operators are fine.
// reduce_scatter_block is reduce_scatter with equal counts: detail/reduce_scatter_util.hpp.
// Rounds: p-1. Cost: (p-1) alpha + (p-1)/p M beta + M gamma (p-1 blocks and the join).
#include "patterns/reduce_scatter_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::rs::pairwise(a, rank); }

const algorithm info{
    .name = "pairwise",
    .coll = collective::reduce_scatter_block,
    .summary = "pairwise exchange: p-1 rounds, (p-1) alpha + (p-1)/p M beta + M gamma; two accumulators keep rank "
               "order (non-commutative ok)",
    .needs_commutative = false,
    .build = build,
    .cost = detail::rs::pairwise_cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
