// Scatterv, binomial tree: the binomial scatter (seed 001, MPICH) with irregular blocks.
// Every rank has all counts, so each can compute which bytes pass through it: an inner rank
// v receives the blocks of its subtree [v, v + min(lowbit v, p - v)) in one message (its own
// into out, its descendants' packed into scratch) and forwards each child's subtree as one
// contiguous scratch region. Any p, any root, zero counts, displacements.
// Rounds: ceil(log2 p). Cost: ceil(log2 p) alpha + beta (total - root's block).
#include "patterns/bcast_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::binomial_scatter(a, rank); }

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const auto moved = static_cast<double>((total_count(a) - block_count(a, a.root)) * elem);
  return static_cast<double>(detail::ceil_log2(static_cast<std::uint64_t>(a.p))) * m.alpha + m.beta * moved;
}

const algorithm info{
    .name = "binomial",
    .coll = collective::scatterv,
    .summary = "binomial tree with irregular blocks: ceil(log2 p) rounds, ceil(log2 p) alpha + beta (total - root's block)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
