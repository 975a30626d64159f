// Reduce-scatter, ring (the 5DV050 lecture "Algorithms for Collective Communication":
// all-to-all reduction on a ring; the ring of MPICH and Open MPI), for irregular and equal
// blocks alike. In step t = 0..p-2 rank r sends its partial of block (r-t-1) mod p to r+1
// and combines the partial of block (r-t-2) mod p arriving from r-1 with its own
// contribution; its own block arrives last, directly into the receive buffer. Block b is
// combined in the cyclic order b+1, ..., p-1, 0, ..., b, so the operator must be commutative.
// Rounds: p-1. Cost: (p-1) alpha + (p-1)/p M (beta + gamma), M = all blocks' bytes.
#include "patterns/reduce_scatter_phase.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s = detail::reduce_scatter_schedule(a, rank);
  detail::block_store st = detail::result_store(s, rank, detail::result_blocks(a));
  detail::ring_pass(st, rank, a.p, 1, detail::ring_mode::reduce_scatter);
  st.settle(rank);  // p == 1
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double M = detail::result_bytes(a, elem), p = a.p;
  return (p - 1) * m.alpha + (p - 1) / p * M * (m.beta + m.gamma);
}

const algorithm info{
    .name = "ring",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary =
        "ring: p-1 rounds, (p-1) alpha + (p-1)/p M (beta + gamma); cyclic combination order, commutative "
        "operators",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
