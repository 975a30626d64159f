// Allreduce, segmented ring (Open MPI's ring_segmented): the ring allreduce with every ring
// step cut into S sub-rounds of at most a.params.segment elements, S = ceil(ceil(m/p) /
// segment), so no message exceeds one segment (bounded buffers, cache-sized reductions).
// In the round model every ring link is busy in every step, so segments cannot overlap
// steps: the rounds multiply by S while the volume stays that of the ring. Default segment:
// 1 MiB worth of elements, so small and medium calls are the plain ring. Commutative
// operators only (cyclic order).
// Rounds: 2(p-1) S. Cost: 2(p-1) S alpha + (p-1)/p m (2 beta + gamma).
#include <algorithm>

#include "patterns/ring_allreduce_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

std::uint64_t segment_of(const coll_args& a) {
  if (a.params.segment > 0) return a.params.segment;
  return std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / std::max<std::size_t>(a.elem_size, 1));
}

schedule build(const coll_args& a, int rank) { return detail::rs::ring_allreduce(a, rank, segment_of(a)); }

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::rs::ring_allreduce_cost(a, elem, m, segment_of(a));
}

const algorithm info{
    .name = "segmented_ring",
    .coll = collective::allreduce,
    .summary = "ring with every step cut into S sub-rounds of <= segment elements (segment param, default 1 MiB): "
               "2(p-1)S rounds, 2(p-1)S alpha + (p-1)/p m (2 beta + gamma); commutative operators",
    .needs_commutative = true,
    .composition = "reduce-scatter ring + allgather ring, segmented",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
