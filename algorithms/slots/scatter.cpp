// Scatter(v) through a fence payload (slots.hpp), any root: the root packs the other ranks'
// blocks in rank order into its fence line and meets the fence (waiting for all: slots.hpp,
// the root check); the others wait there for the root alone and copy their blocks from its
// line. At most fence_payload_capacity(p) of blocks for
// the non-roots. Rounds: 1 fence. Cost: F + beta (largest block).
#include <algorithm>
#include <vector>

#include "slots/slots.hpp"

namespace ranklab {
namespace {

std::uint64_t largest_payload(const coll_args& a);  // the largest payload of the call, bytes

// Where each rank's block lies in the root's payload (the root's own is not carried).
std::vector<std::uint64_t> packed_offsets(const coll_args& a) {
  std::vector<std::uint64_t> at(static_cast<std::size_t>(a.p) + 1, 0);
  for (int j = 0; j < a.p; ++j) at[j + 1] = at[j] + (j == a.root ? 0 : block_count(a, j));
  return at;
}

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  const detail::scattered_block mine(a, rank);
  if (rank == a.root) detail::copy_own(s, a, mine.src, mine.dst);
  if (total_count(a) == block_count(a, a.root)) return s;  // nothing crosses (also p = 1)
  const std::vector<std::uint64_t> at = packed_offsets(a);
  const buffer_id payload = s.fence_payload(rank == a.root ? at[a.p] : 0, detail::wide(largest_payload(a)));
  if (rank == a.root)
    for (int j = 0; j < a.p; ++j)
      if (j != a.root && block_count(a, j) > 0)
        s.copy(detail::scattered_block(a, j).src, region{payload, at[j], block_count(a, j)});
  if (rank == a.root)
    s.fence();
  else
    s.fence_for(a.root);
  if (rank != a.root && mine.dst.count > 0) s.remote(a.root, region{payload, at[rank], mine.dst.count}, mine.dst);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::slots_cost(a, static_cast<double>(detail::largest_block(a, a.root) * elem), 0, m);
}

std::uint64_t largest_payload(const coll_args& a) { return detail::payload_size(a, packed_offsets(a).back()); }

const algorithm info{
    .name = "slots",
    .serves = {collective::scatter, collective::scatterv},
    .summary = "shared memory: the root's blocks ride in its fence line, every rank copies its own; one fence",
    .one_ported = false,
    .payload_bytes = largest_payload,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
