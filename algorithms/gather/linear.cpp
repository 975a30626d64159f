// Gather and gatherv, linear: the root receives every other rank's block (the v collective:
// counts[j] elements, placed at block_offset j of its receive buffer) directly, one per round,
// in root-relative order (relative rank v sends in round v - 1): the flat tree of
// patterns/tree_blocks.hpp, upwards. Source: the trivial algorithm every MPI library keeps for
// small p (MPICH's and Open MPI's "linear").
// Rounds: p - 1. Cost: (p - 1) alpha + beta (total - root's block), that is
// (p - 1)(alpha + beta m) for gather.
#include "patterns/tree_blocks.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  return detail::tree_blocks(a, rank, detail::tree_shape::flat, detail::tree_order::up);
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::tree_blocks_cost(a, elem, m, a.p - 1);
}

const algorithm info{
    .name = "linear",
    .serves = {collective::gather, collective::gatherv},
    .summary = "root receives each block directly: p-1 rounds, (p-1) alpha + beta (total - root's block)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
