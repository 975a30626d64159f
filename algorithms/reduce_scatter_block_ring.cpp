// Reduce-scatter with equal blocks, ring (seed 001: all-to-all reduction on a ring; the ring of
// MPICH and Open MPI). In step t = 0..p-2 rank r sends its partial of block (r-t-1) mod p to
// r+1 and combines the partial of block (r-t-2) mod p arriving from r-1 with its own
// contribution; its own block arrives last, directly into the receive buffer. Block b is
// combined in the cyclic order b+1, ..., p-1, 0, ..., b, so the operator must be commutative.
// reduce_scatter_block is reduce_scatter with equal counts: detail/reduce_scatter_util.hpp.
// Rounds: p-1. Cost: (p-1) alpha + (p-1)/p M (beta + gamma), M = all blocks' bytes.
#include "patterns/reduce_scatter_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::rs::ring(a, rank); }

const algorithm info{
    .name = "ring",
    .coll = collective::reduce_scatter_block,
    .summary = "ring: p-1 rounds, (p-1) alpha + (p-1)/p M (beta + gamma); cyclic combination order, commutative "
               "operators",
    .needs_commutative = true,
    .build = build,
    .cost = detail::rs::ring_cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
