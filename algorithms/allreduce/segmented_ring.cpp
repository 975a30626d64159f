// Allreduce, segmented ring (Open MPI's ring_segmented): the ring allreduce with every ring
// step cut into S sub-rounds of at most a.params.segment elements, S = ceil(ceil(m/p) /
// segment), so no message exceeds one segment (bounded buffers, cache-sized reductions).
// In the round model every ring link is busy in every step, so segments cannot overlap
// steps: the rounds multiply by S while the volume stays that of the ring. Default segment:
// 1 MiB worth of elements, so small and medium calls are the plain ring. Commutative
// operators only (cyclic order). Works in the receive buffer (in place ok).
// Rounds: 2(p-1) S. Cost: 2(p-1) S alpha + (p-1)/p m (2 beta + gamma).
#include <algorithm>
#include <vector>

#include "patterns/reduce_scatter_phase.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

std::uint64_t segment_of(const coll_args& a) {
  if (a.params.segment > 0) return a.params.segment;
  return std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / std::max<std::size_t>(a.elem_size, 1));
}

// S: sub-rounds per ring step, for the largest chunk.
int segments(const coll_args& a) {
  const std::uint64_t largest = (a.count + static_cast<std::uint64_t>(a.p) - 1) / static_cast<std::uint64_t>(a.p);
  return static_cast<int>(std::max<std::uint64_t>(1, (largest + segment_of(a) - 1) / segment_of(a)));
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, a.count);
  const std::uint64_t seg = segment_of(a);
  const int subs = segments(a);
  // Block c * subs + k = elements [k seg, (k+1) seg) of chunk c (possibly empty).
  std::vector<detail::elem_range> blocks;
  for (const detail::elem_range& c : detail::equal_split(a.count, a.p))
    for (int k = 0; k < subs; ++k) {
      const std::uint64_t from = std::min(c.count, static_cast<std::uint64_t>(k) * seg);
      blocks.push_back(detail::elem_range{c.offset + from, std::min(seg, c.count - from)});
    }
  detail::block_store st(s, blocks, out_buffer, 0, /*out_may_alias_in=*/true);
  detail::ring_pass(st, rank, a.p, subs, detail::ring_mode::reduce_scatter);
  detail::ring_pass(st, rank, a.p, subs, detail::ring_mode::allgather);
  st.settle_all();  // p == 1
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double p = a.p, bytes = static_cast<double>(a.count * elem);
  return 2 * (p - 1) * segments(a) * m.alpha + (p - 1) / p * bytes * (2 * m.beta + m.gamma);
}

const algorithm info{
    .name = "segmented_ring",
    .coll = collective::allreduce,
    .summary =
        "ring with every step cut into S sub-rounds of <= segment elements (segment param, default 1 MiB): "
        "2(p-1)S rounds, 2(p-1)S alpha + (p-1)/p m (2 beta + gamma); commutative operators",
    .needs_commutative = true,
    .composition = "reduce-scatter ring + allgather ring, segmented",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
