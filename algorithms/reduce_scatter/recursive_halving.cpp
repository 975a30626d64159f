// Reduce-scatter, recursive halving (the 5DV050 lecture "Algorithms for Collective
// Communication": all-to-all reduction on a hypercube; MPICH's reduce_scatter for commutative
// operators), for irregular and equal blocks alike, any p: the first 2 rem ranks (rem = p - p',
// p' the largest power of two <= p) fold pairwise (2i sends everything to 2i+1, which
// combines), the p' survivors halve with masks p'/2, ..., 1 on contiguous halves (survivor v
// keeps the blocks of the ranks it stands for), and each paired survivor hands its partner's
// block back. Partners p'/2 apart are combined first: commutative operators only.
// Rounds: log2 p' (+2 when p is not a power of two).
// Cost: log2 p' alpha + (p'-1)/p' M (beta + gamma) (+ 2 alpha + M (beta + gamma) + M/p beta),
// M = all blocks' bytes.
#include "patterns/reduce_scatter_phase.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::halving_reduce_scatter(a, rank, /*rank_ordered=*/false); }

const algorithm info{
    .name = "recursive_halving",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary =
        "recursive halving, any p by pairwise folding: log2 p' (+2) rounds, log2 p' alpha + (p'-1)/p' M (beta"
        " + gamma) (+ folding); commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = detail::halving_reduce_scatter_cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
