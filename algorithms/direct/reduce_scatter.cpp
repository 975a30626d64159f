// Reduce_scatter(_block), shared-memory direct (outside the one-ported model; the fence
// protocol is in direct/direct.hpp): between two fences rank r folds block r of all p send
// buffers, read in place, straight into its receive buffer, in rank order
// (detail::fold_all_ranks), so non-commutative operators are fine. The blocks are packed
// in rank order in every send buffer: counts[j] elements for rank j, or count each for
// reduce_scatter_block. In place (in == out) is not supported: a rank would overwrite its
// block 0 while rank 0 reads it.
// Rounds: 2 fences. Cost: 2 F + (p-1)(beta + gamma) m, m = bytes of the largest block (its
// owner finishes last).
#include <algorithm>

#include "direct/direct.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  const detail::scattered_block mine(a, rank);
  if (a.p == 1 || total_count(a) == 0) {
    detail::copy_own(s, a, mine.src, mine.dst);
    return s;
  }
  s.fence();  // publish
  if (mine.src.count > 0) detail::fold_all_ranks(s, mine.src, mine.src, mine.dst);
  s.fence();  // withdraw
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  std::uint64_t largest = 0;
  for (int j = 0; j < a.p; ++j) largest = std::max(largest, block_count(a, j));
  const double block = static_cast<double>(largest * elem);
  return detail::fences_cost(2, a.p, m) + (a.p - 1) * (m.beta + m.gamma) * block;
}

const algorithm info{
    .name = "direct",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary =
        "shared memory (outside the one-ported model): rank r reduces block r of all send buffers in place, "
        "in rank order, between two fences; cost 2 fences + (p-1)(beta + gamma) largest block",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
