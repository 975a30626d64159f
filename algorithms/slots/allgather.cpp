// Allgather(v) through fence payloads (slots.hpp): every rank puts its block in its fence
// line, meets the fence and copies the others' blocks to their places (block_offset) in its
// receive buffer; its own block it copies from its input. Blocks of at most
// fence_payload_capacity(p). Rounds: 1 fence. Cost: F + beta (N - smallest block), N = bytes of
// the gathered result.
#include <algorithm>

#include "slots/slots.hpp"

namespace ranklab {
namespace {

std::uint64_t largest_payload(const coll_args& a);  // the largest payload of the call, bytes

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  auto placed = [&](int j) { return region{out_buffer, block_offset(a, j), block_count(a, j)}; };
  const region own{in_buffer, 0, block_count(a, rank)};
  detail::copy_own(s, a, own, placed(rank));
  if (a.p == 1 || total_count(a) == 0) return s;
  const buffer_id payload = detail::carry(s, own, detail::wide(largest_payload(a)));
  detail::for_other_ranks(rank, a.p, [&](int j) {
    if (block_count(a, j) > 0) s.remote(j, region{payload, 0, block_count(a, j)}, placed(j));
  });
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  std::uint64_t smallest = block_count(a, 0);
  for (int j = 1; j < a.p; ++j) smallest = std::min(smallest, block_count(a, j));
  return detail::slots_cost(a, static_cast<double>((total_count(a) - smallest) * elem), 0, m);
}

std::uint64_t largest_payload(const coll_args& a) { return detail::payload_size(a, detail::largest_block(a)); }

const algorithm info{
    .name = "slots",
    .serves = {collective::allgather, collective::allgatherv},
    .summary = "shared memory: every block rides in its rank's fence line, every rank copies all; one fence",
    .one_ported = false,
    .payload_bytes = largest_payload,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
