// Allgatherv (irregular blocks, optional displacements), shared-memory direct (outside the
// one-ported model): every rank copies every other rank's block straight from that rank's
// send buffer to its place (block_offset) in its own receive buffer, between two fences;
// its own block it copies locally before the first fence.
// Fences, as in allreduce_direct.cpp: the first keeps anyone from reading a send buffer
// before its owner has entered the call (buffers published, input final); the last keeps
// every owner in the call until nobody reads its send buffer any more. Between them only
// receive buffers are written, each by its owner, and nobody reads them: two fences are
// the minimum, and none at all when nobody has anything to read (p = 1, or every block
// empty). Empty blocks are not read. Reads start at rank r+1 and wrap. In place
// (in == out) is not defined for allgatherv in ranklab and not supported here.
// Rounds: 2 (fences, schedule::fence).
// Cost: 2 fences (about (1 + (p-1)/4) alpha each, detail::fence_alphas) + beta (N - min_r
// N_r), N = bytes of the gathered result, N_r = rank r's block (the rank with the smallest
// block copies most).
#include <algorithm>

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
  if (block_count(a, rank) > 0) s.copy(block(in_buffer, rank), block(out_buffer, rank));
  // Somebody reads something iff some block is non-empty and there is another rank to read it.
  bool any_read = false;
  for (int j = 0; j < a.p; ++j) any_read = any_read || (a.p > 1 && block_count(a, j) > 0);
  if (!any_read) return s;
  s.fence();  // every send buffer is published and final
  for (int k = 1; k < a.p; ++k) {
    const int j = (rank + k) % a.p;
    if (block_count(a, j) > 0) s.remote(j, block(in_buffer, j), block(out_buffer, j));
  }
  s.fence();  // nobody returns while its send buffer is still read
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  std::uint64_t smallest = a.counts.empty() ? 0 : a.counts.front();
  for (std::uint64_t c : a.counts) smallest = std::min(smallest, c);
  const double copied = static_cast<double>((total_count(a) - smallest) * elem);
  return 2 * detail::fence_alphas(a.p) * m.alpha + m.beta * copied;
}

const algorithm info{
    .name = "direct",
    .coll = collective::allgatherv,
    .summary = "shared memory (outside the one-ported model): every rank copies every block straight from its "
               "owner's send buffer between two fences; cost 2 fences + beta (N - smallest block)",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
