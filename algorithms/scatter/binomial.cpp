// Scatter and scatterv, binomial tree (the 5DV050 lecture "Algorithms for Collective
// Communication": "send half of the messages in the first step, one quarter in the second
// ..."; MPICH's binomial scatter). Top-down tree over root-relative ranks: in round j (mask
// 2^(L-1-j), L = ceil(log2 p)) a rank v with v % 2mask == 0 forwards the blocks of
// v + mask's subtree [v + mask, v + mask + min(mask, p - v - mask)) in one message. Any p and
// any root (relabelling by subtraction mod p), irregular blocks, zero counts, displacements:
// every rank has all counts, so each can compute which blocks pass through it. The root sends
// straight from its send buffer, inner ranks stage their descendants' blocks in scratch
// (patterns/tree_blocks.hpp, shared with gather, which makes the same transfers upwards).
// Rounds: ceil(log2 p). Cost: ceil(log2 p) alpha + beta (total - root's block), that is
// beta (p - 1) m for scatter: the root's outgoing volume.
#include "patterns/tree_blocks.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  return detail::tree_blocks(a, rank, detail::tree_shape::binomial, detail::tree_order::down);
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::tree_blocks_cost(a, elem, m, detail::ceil_log2(static_cast<std::uint64_t>(a.p)));
}

const algorithm info{
    .name = "binomial",
    .serves = {collective::scatter, collective::scatterv},
    .summary =
        "binomial tree, the root sends each subtree's blocks in one message: "
        "any p and root, irregular blocks; ceil(log2 p) rounds, "
        "ceil(log2 p) alpha + beta (total - root's block)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
