// Alltoall(v) through fence payloads (slots.hpp): every rank packs the blocks it has for
// the others, in destination order, into its fence line, meets the fence and copies the
// block each other rank has for it from that rank's payload; its own block it copies from
// its input. At most fence_payload_capacity(p) of outgoing blocks per rank. Rounds: 1 fence.
// Cost: F + beta max_r (bytes rank r receives from the others).
#include <algorithm>
#include <vector>

#include "slots/slots.hpp"

namespace ranklab {
namespace {

std::uint64_t largest_payload(const coll_args& a);  // the largest payload of the call, bytes

// Elements rank i sends to rank j: counts[i*p + j] for alltoallv, count for alltoall.
std::uint64_t elements(const coll_args& a, int i, int j) {
  if (!has_vector_counts(a.coll)) return a.count;
  return a.counts[static_cast<std::size_t>(i) * static_cast<std::size_t>(a.p) + static_cast<std::size_t>(j)];
}

// Where block (i -> j) starts in i's send buffer (all blocks) and in its payload (the
// others' blocks only).
std::uint64_t send_at(const coll_args& a, int i, int j) {
  std::uint64_t at = 0;
  for (int k = 0; k < j; ++k) at += elements(a, i, k);
  return at;
}
std::uint64_t payload_at(const coll_args& a, int i, int j) {
  std::uint64_t at = 0;
  for (int k = 0; k < j; ++k)
    if (k != i) at += elements(a, i, k);
  return at;
}

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  std::vector<std::uint64_t> recv_at(static_cast<std::size_t>(a.p) + 1, 0);
  for (int j = 0; j < a.p; ++j) recv_at[j + 1] = recv_at[j] + elements(a, j, rank);
  const std::uint64_t own = elements(a, rank, rank);
  detail::copy_own(s, a, region{in_buffer, send_at(a, rank, rank), own}, region{out_buffer, recv_at[rank], own});
  std::uint64_t crossing = 0;  // elements that change ranks, all of them
  for (int i = 0; i < a.p; ++i) crossing += payload_at(a, i, a.p);
  if (crossing == 0) return s;  // also p = 1
  const buffer_id payload = s.fence_payload(payload_at(a, rank, a.p), detail::wide(largest_payload(a)));
  for (int j = 0; j < a.p; ++j)
    if (j != rank && elements(a, rank, j) > 0)
      s.copy(region{in_buffer, send_at(a, rank, j), elements(a, rank, j)},
             region{payload, payload_at(a, rank, j), elements(a, rank, j)});
  s.fence();
  detail::for_other_ranks(rank, a.p, [&](int j) {
    const std::uint64_t c = elements(a, j, rank);
    if (c > 0) s.remote(j, region{payload, payload_at(a, j, rank), c}, region{out_buffer, recv_at[j], c});
  });
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
  return detail::slots_cost(a, static_cast<double>(most * elem), 0, m);
}

std::uint64_t largest_payload(const coll_args& a) {
  std::uint64_t largest = 0;
  for (int i = 0; i < a.p; ++i) largest = std::max(largest, payload_at(a, i, a.p));
  return detail::payload_size(a, largest);
}

const algorithm info{
    .name = "slots",
    .serves = {collective::alltoall, collective::alltoallv},
    .summary = "shared memory: every rank's outgoing blocks ride in its fence line, each copies its own; one fence",
    .one_ported = false,
    .payload_bytes = largest_payload,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
