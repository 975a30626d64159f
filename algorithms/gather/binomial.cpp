// Gather and gatherv, binomial tree (the 5DV050 lecture "Algorithms for Collective
// Communication": "analogous to scatter, reverse the order and the direction of
// communications"; MPICH's binomial gather). Bottom-up over root-relative ranks: in round j
// (mask 2^j) a rank v with v % 2mask == mask sends its whole subtree [v, v + min(mask, p - v))
// to v - mask: its own block from its send buffer and its descendants' from scratch, in one
// message. The root receives straight into its receive buffer (displacements allowed). Any p,
// any root, irregular blocks, zero counts: the scatter's transfers upwards
// (patterns/tree_blocks.hpp).
// Rounds: ceil(log2 p). Cost: ceil(log2 p) alpha + beta (total - root's block), that is
// beta (p - 1) m for gather: the root's incoming volume.
#include "patterns/tree_blocks.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  return detail::tree_blocks(a, rank, detail::tree_shape::binomial, detail::tree_order::up);
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::tree_blocks_cost(a, elem, m, detail::ceil_log2(static_cast<std::uint64_t>(a.p)));
}

const algorithm info{
    .name = "binomial",
    .serves = {collective::gather, collective::gatherv},
    .summary =
        "binomial tree, each subtree's blocks reach the root in one message: "
        "any p and root, irregular blocks; ceil(log2 p) rounds, "
        "ceil(log2 p) alpha + beta (total - root's block)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
