// Alltoall(v), shared-memory direct (outside the one-ported model; the fence protocol is in
// direct/direct.hpp): between two fences every rank copies the non-empty block each other
// rank has for it straight from that rank's send buffer into its own receive buffer. Send
// blocks are packed in destination order, receive blocks in source order; the offsets in
// the other ranks' buffers come from the counts, which every rank has. In place is not
// supported (a rank would overwrite blocks others still read).
// Rounds: 2 fences. Cost: 2 F + beta max_r (bytes rank r receives from the others):
// 2 F + (p-1) beta m for equal blocks of m bytes.
#include <algorithm>
#include <utility>
#include <vector>

#include "direct/direct.hpp"

namespace ranklab {
namespace {

// Elements rank i sends to rank j: counts[i*p + j] for alltoallv, count for alltoall.
std::uint64_t elements(const coll_args& a, int i, int j) {
  if (!has_vector_counts(a.coll)) return a.count;
  return a.counts[static_cast<std::size_t>(i) * static_cast<std::size_t>(a.p) + static_cast<std::size_t>(j)];
}

bool any_off_diagonal(const coll_args& a) {
  for (int i = 0; i < a.p; ++i)
    for (int j = 0; j < a.p; ++j)
      if (i != j && elements(a, i, j) > 0) return true;
  return false;
}

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  // Where block (i -> j) starts in i's send buffer and in j's receive buffer.
  auto send_at = [&](int i, int j) {
    std::uint64_t at = 0;
    for (int k = 0; k < j; ++k) at += elements(a, i, k);
    return at;
  };
  std::vector<std::uint64_t> recv_at(static_cast<std::size_t>(a.p) + 1, 0);
  for (int j = 0; j < a.p; ++j) recv_at[j + 1] = recv_at[j] + elements(a, j, rank);
  auto from = [&](int j) {
    const std::uint64_t c = elements(a, j, rank);
    return std::pair{region{in_buffer, send_at(j, rank), c}, region{out_buffer, recv_at[j], c}};
  };
  const auto [own_src, own_dst] = from(rank);
  detail::copy_own(s, a, own_src, own_dst);
  if (!any_off_diagonal(a)) return s;
  s.fence();  // publish
  detail::for_other_ranks(rank, a.p, [&](int j) {
    const auto [src, dst] = from(j);
    if (src.count > 0) s.remote(j, src, dst);
  });
  s.fence();  // withdraw
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
  return detail::fences_cost(2, a.p, m) + m.beta * static_cast<double>(most * elem);
}

const algorithm info{
    .name = "direct",
    .serves = {collective::alltoall, collective::alltoallv},
    .summary =
        "shared memory (outside the one-ported model): every rank copies its block straight from each "
        "rank's send buffer between two fences; cost 2 fences + beta (largest receive volume)",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
