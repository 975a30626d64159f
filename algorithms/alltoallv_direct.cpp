// Alltoallv (counts[i*p + j] = elements rank i sends to rank j; send blocks packed in
// destination order, receive blocks in source order), shared-memory direct (outside the
// one-ported model): every rank copies the block each other rank has for it straight from
// that rank's send buffer into its own receive buffer, between two fences; its own block it
// copies locally first. Offsets in the other ranks' buffers come from the counts matrix,
// which every rank has.
// Fences, as in allreduce_direct.cpp: the first keeps anyone from reading a send buffer
// before its owner has entered the call (buffers published, input final); the last keeps
// every owner in the call until nobody reads its send buffer any more. Between them only
// receive buffers are written, each by its owner, and nobody reads them: two fences are
// the minimum, none when no off-diagonal block is non-empty. Empty blocks are not read.
// Reads start at rank r+1 and wrap. In place (in == out) is not supported.
// Rounds: 2 (fences, schedule::fence).
// Cost: 2 fences (about (1 + (p-1)/4) alpha each, detail::fence_alphas) + beta max_r (bytes
// rank r receives from the others) (all ranks in parallel).
#include <algorithm>
#include <vector>

#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

std::uint64_t elements(const coll_args& a, int i, int j) {
  return a.counts[static_cast<std::size_t>(i) * static_cast<std::size_t>(a.p) + static_cast<std::size_t>(j)];
}

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  // Where block (i -> j) starts in i's send buffer and in j's receive buffer.
  auto send_at = [&](int i, int j) {
    std::uint64_t at = 0;
    for (int k = 0; k < j; ++k) at += elements(a, i, k);
    return at;
  };
  std::vector<std::uint64_t> recv_at(static_cast<std::size_t>(a.p) + 1, 0);
  for (int j = 0; j < a.p; ++j) recv_at[j + 1] = recv_at[j] + elements(a, j, rank);
  const std::uint64_t own = elements(a, rank, rank);
  if (own > 0) s.copy(region{in_buffer, send_at(rank, rank), own}, region{out_buffer, recv_at[rank], own});
  bool any_read = false;
  for (int i = 0; i < a.p && !any_read; ++i)
    for (int j = 0; j < a.p; ++j) any_read = any_read || (i != j && elements(a, i, j) > 0);
  if (!any_read) return s;
  s.fence();  // every send buffer is published and final
  for (int k = 1; k < a.p; ++k) {
    const int j = (rank + k) % a.p;
    const std::uint64_t c = elements(a, j, rank);
    if (c > 0) s.remote(j, region{in_buffer, send_at(j, rank), c}, region{out_buffer, recv_at[j], c});
  }
  s.fence();  // nobody returns while its send buffer is still read
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  std::uint64_t most = 0;
  for (int r = 0; r < a.p; ++r) {
    std::uint64_t in = 0;
    for (int j = 0; j < a.p; ++j)
      if (j != r) in += elements(a, j, r);
    most = std::max(most, in);
  }
  return 2 * detail::fence_alphas(a.p) * m.alpha + m.beta * static_cast<double>(most * elem);
}

const algorithm info{
    .name = "direct",
    .coll = collective::alltoallv,
    .summary = "shared memory (outside the one-ported model): every rank copies its block straight from each "
               "rank's send buffer between two fences; cost 2 fences + beta (largest receive volume)",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
