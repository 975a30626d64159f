// Reduce_scatter (irregular blocks: counts[j] elements for rank j, packed in rank order in
// every send buffer), shared-memory direct (outside the one-ported model): rank r reduces
// block r of all p send buffers, read in place, straight into its receive buffer, in rank
// order (out = in_0 (+) (in_1 (+) ( ... (+) in_{p-1})), folded from the right), so
// non-commutative operators are fine.
// Fences, as in allreduce_direct.cpp: the first keeps anyone from reading a send buffer
// before its owner has entered the call (buffers published, input final); the last keeps
// every owner in the call until nobody reads its send buffer any more. Between them only
// receive buffers are written, each by its owner, and nobody reads them: two fences are
// the minimum, none when every block is empty. In place (in == out) is not supported.
// Rounds: 2 (fences, schedule::fence).
// Cost: 2 fences (about (1 + (p-1)/4) alpha each, detail::fence_alphas) + (p-1)(beta +
// gamma) m, m = bytes of the largest block (its owner finishes last).
#include <algorithm>

#include "patterns/rank_arithmetic.hpp"
#include "patterns/direct_fold.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const std::uint64_t n = block_count(a, rank);
  const region src{in_buffer, block_offset(a, rank), n};
  const region out{out_buffer, 0, n};
  if (a.p == 1 || total_count(a) == 0) {
    if (n > 0) s.copy(src, out);
    return s;
  }
  s.fence();  // every send buffer is published and final
  if (n > 0) detail::fold_all_ranks(s, src, src, out);
  s.fence();  // nobody returns while its send buffer is still read
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  std::uint64_t largest = 0;
  for (std::uint64_t c : a.counts) largest = std::max(largest, c);
  const double block = static_cast<double>(largest * elem);
  return 2 * detail::fence_alphas(a.p) * m.alpha + (a.p - 1) * (m.beta + m.gamma) * block;
}

const algorithm info{
    .name = "direct",
    .coll = collective::reduce_scatter,
    .summary = "shared memory (outside the one-ported model): rank r reduces block r of all send buffers in place, "
               "in rank order, between two fences; cost 2 fences + (p-1)(beta + gamma) largest block",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
