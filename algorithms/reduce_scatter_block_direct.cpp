// Reduce_scatter_block, shared-memory direct (outside the one-ported model): rank r reduces
// block r of all p send buffers, read in place, straight into its receive buffer, in rank
// order (out = in_0 (+) (in_1 (+) ( ... (+) in_{p-1})), folded from the right), so
// non-commutative operators are fine.
// Fences, as in allreduce_direct.cpp: the first keeps anyone from reading a send buffer
// before its owner has entered the call (buffers published, input final); the last keeps
// every owner in the call until nobody reads its send buffer any more. Between them only
// receive buffers are written, each by its owner, and nobody reads them: two fences are
// the minimum. In place (in == out, the result in the first block) is not supported: a
// rank would overwrite its block 0 while rank 0 reads it.
// Rounds: 2 (fences, schedule::fence; none when p = 1 or m = 0).
// Cost: 2 fences (about (1 + (p-1)/4) alpha each, detail::fence_alphas) + (p-1) (beta +
// gamma) m, m = bytes of a block.
#include "patterns/rank_arithmetic.hpp"
#include "patterns/direct_fold.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const std::uint64_t n = a.count;
  const region src{in_buffer, n * static_cast<std::uint64_t>(rank), n};
  const region out{out_buffer, 0, n};
  if (a.p == 1 || n == 0) {
    s.copy(src, out);
    return s;
  }
  s.fence();  // every send buffer is published and final
  detail::fold_all_ranks(s, src, src, out);
  s.fence();  // nobody returns while its send buffer is still read
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double block = static_cast<double>(a.count * elem);
  return 2 * detail::fence_alphas(a.p) * m.alpha + (a.p - 1) * (m.beta + m.gamma) * block;
}

const algorithm info{
    .name = "direct",
    .coll = collective::reduce_scatter_block,
    .summary = "shared memory (outside the one-ported model): rank r reduces block r of all send buffers in place, "
               "in rank order, between two fences; cost 2 fences + (p-1)(beta + gamma) m",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
