// Allreduce, ring (Barnett et al. 1993, Patarasuk and Yuan 2009; Open MPI's ring; seed 002
// section 6: the cyclic group with one generator applied p-1 times): a ring reduce-scatter
// on p near-equal chunks (in step t rank r sends chunk (r-t-1) mod p to r+1 and combines
// chunk (r-t-2) mod p from r-1) followed by a ring allgather of the reduced chunks. Chunks
// are combined in cyclic rank order: commutative operators only. Bandwidth-optimal.
// Works in the receive buffer (in place ok).
// Rounds: 2(p-1). Cost: 2(p-1) alpha + (p-1)/p m (2 beta + gamma).
#include "patterns/ring_allreduce_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::rs::ring_allreduce(a, rank, 0); }

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::rs::ring_allreduce_cost(a, elem, m, 0);
}

const algorithm info{
    .name = "ring",
    .coll = collective::allreduce,
    .summary = "ring reduce-scatter + ring allgather: 2(p-1) rounds, 2(p-1) alpha + (p-1)/p m (2 beta + gamma); "
               "commutative operators",
    .needs_commutative = true,
    .composition = "reduce-scatter ring + allgather ring",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
