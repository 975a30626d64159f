// Allgather, shared-memory direct (outside the one-ported model): every rank copies every
// other rank's block straight from that rank's send buffer into its own receive buffer,
// between two fences; its own block it copies locally before the first fence.
// Fences, as in allreduce_direct.cpp: the first keeps anyone from reading a send buffer
// before its owner has entered the call (buffers published, input final); the last keeps
// every owner in the call until nobody reads its send buffer any more. Between them only
// receive buffers are written, each by its owner, and nobody reads them: two fences are
// the minimum. Reads start at rank r+1 and wrap, so the ranks do not all read rank 0 first.
// In place (in == out) is not defined for allgather in ranklab and not supported here.
// Rounds: 2 (fences, schedule::fence; none when p = 1 or m = 0).
// Cost: 2 fences (about (1 + (p-1)/4) alpha each, detail::fence_alphas) + (p-1) beta m, m =
// bytes of a block (all ranks in parallel).
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  auto block = [&](buffer_id b, int j) {
    return region{b, b == in_buffer ? 0 : block_offset(a, j), block_count(a, j)};
  };
  s.copy(block(in_buffer, rank), block(out_buffer, rank));
  if (a.p == 1 || a.count == 0) return s;
  s.fence();  // every send buffer is published and final
  for (int k = 1; k < a.p; ++k) {
    const int j = (rank + k) % a.p;
    s.remote(j, block(in_buffer, j), block(out_buffer, j));
  }
  s.fence();  // nobody returns while its send buffer is still read
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double block = static_cast<double>(a.count * elem);
  return 2 * detail::fence_alphas(a.p) * m.alpha + m.beta * (a.p - 1) * block;
}

const algorithm info{
    .name = "direct",
    .coll = collective::allgather,
    .summary = "shared memory (outside the one-ported model): every rank copies every block straight from its "
               "owner's send buffer between two fences; cost 2 fences + (p-1) beta m",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
