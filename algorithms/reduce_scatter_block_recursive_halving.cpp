// Reduce-scatter with equal blocks, recursive halving (seed 001's all-to-all reduction on a
// hypercube; MPICH's reduce_scatter for commutative operators), any p: the first 2 rem ranks
// (rem = p - p', p' the largest power of two <= p) fold pairwise (2i -> 2i+1 sends everything,
// 2i+1 combines), the p' survivors halve with masks p'/2, ..., 1 on contiguous halves (survivor
// v keeps the blocks of the ranks it stands for), and each paired survivor hands its partner's
// block back. Partners p'/2 apart are combined first: commutative operators only.
// reduce_scatter_block is reduce_scatter with equal counts: detail/reduce_scatter_util.hpp.
// Rounds: log2 p' (+2 when p is not a power of two).
// Cost: log2 p' alpha + (p'-1)/p' M (beta + gamma) (+ 2 alpha + M (beta + gamma) + M/p beta).
#include "patterns/reduce_scatter_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  return detail::rs::recursive_halving(a, rank, /*increasing=*/false);
}

const algorithm info{
    .name = "recursive_halving",
    .coll = collective::reduce_scatter_block,
    .summary = "recursive halving, any p by pairwise folding: log2 p' (+2) rounds, log2 p' alpha + (p'-1)/p' M (beta"
               " + gamma) (+ folding); commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = detail::rs::halving_cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
