// Allreduce, ring (M. Barnett et al., "Global Combine on Mesh Architectures with Wormhole
// Routing"; P. Patarasuk and X. Yuan, "Bandwidth Optimal All-reduce Algorithms for Clusters
// of Workstations"; Open MPI's ring; in D. Kolmakov and X. Zhang, "A Generalization of the
// Allreduce Operation", the cyclic group with one generator applied p-1 times): a ring
// reduce-scatter on p near-equal chunks (in step t rank r sends chunk (r-t-1) mod p to r+1
// and combines chunk (r-t-2) mod p from r-1) followed by a ring allgather of the reduced
// chunks. Chunks are combined in cyclic rank order: commutative operators only.
// Bandwidth-optimal. Works in the receive buffer (in place ok).
// Rounds: 2(p-1). Cost: 2(p-1) alpha + (p-1)/p m (2 beta + gamma).
#include "patterns/reduce_scatter_phase.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, a.count);
  detail::block_store st(s, detail::equal_split(a.count, a.p), out_buffer, 0, /*out_may_alias_in=*/true);
  detail::ring_pass(st, rank, a.p, 1, detail::ring_mode::reduce_scatter);
  detail::ring_pass(st, rank, a.p, 1, detail::ring_mode::allgather);
  st.settle_all();  // p == 1
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double p = a.p, bytes = static_cast<double>(a.count * elem);
  return 2 * (p - 1) * m.alpha + (p - 1) / p * bytes * (2 * m.beta + m.gamma);
}

const algorithm info{
    .name = "ring",
    .coll = collective::allreduce,
    .summary =
        "ring reduce-scatter + ring allgather: 2(p-1) rounds, 2(p-1) alpha + (p-1)/p m (2 beta + gamma); "
        "commutative operators",
    .needs_commutative = true,
    .composition = "reduce-scatter ring + allgather ring",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
