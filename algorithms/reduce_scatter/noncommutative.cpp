// Reduce-scatter for non-commutative operators, for irregular and equal blocks alike:
// recursive halving on rank-ordered ranges (the idea of J. L. Träff's "An Improved Algorithm
// for (Non-commutative) Reduce-Scatter with an Application", EuroPVM/MPI 2005, and of MPICH's
// noncommutative recursive halving), any p. Folding pairs neighbours (2i, 2i+1), so each of
// the p' survivors stands for a contiguous range of ranks, in rank order. The halving uses
// masks 1, 2, ..., p'/2: in the step with mask m, survivor v's partner belongs to the
// neighbouring aligned group of 2m survivors, so every partial covers a contiguous range of
// ranks and the lower range is always combined on the left — exactly the reference order
// x_0 (+) ... (+) x_{p-1}. The price of the increasing masks is that survivor v ends with
// piece bit_reverse(v); piece bit_reverse(v) is therefore made of survivor v's blocks, and a
// half is a strided set of blocks (several regions per message, no copies).
// Rounds: log2 p' (+2 when p is not a power of two); the same volume as recursive_halving.
// Cost: log2 p' alpha + (p'-1)/p' M (beta + gamma) (+ 2 alpha + M (beta + gamma) + M/p beta).
#include "patterns/reduce_scatter_phase.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::halving_reduce_scatter(a, rank, /*rank_ordered=*/true); }

const algorithm info{
    .name = "noncommutative",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary =
        "recursive halving on rank-ordered ranges (masks 1..p'/2), any p by folding: log2 p' (+2) rounds, "
        "same volume as recursive_halving; non-commutative operators",
    .needs_commutative = false,
    .build = build,
    .cost = detail::halving_reduce_scatter_cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
