// Reduce-scatter(_block) through fence payloads (slots.hpp): every rank puts its whole input
// vector in its fence line, meets the fence and folds its own block (block_offset) of all
// p payloads in rank order (detail::fold_all_ranks: non-commutative operators are fine)
// into its receive buffer. Input vectors of at most fence_payload_capacity(p). Rounds: 1 fence.
// Cost: F + (p-1) m_r (beta + gamma), m_r = bytes of the largest block.
#include <algorithm>

#include "slots/slots.hpp"

namespace ranklab {
namespace {

std::uint64_t largest_payload(const coll_args& a);  // the largest payload of the call, bytes

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  const detail::scattered_block mine(a, rank);
  if (a.p == 1 || total_count(a) == 0) {
    detail::copy_own(s, a, mine.src, mine.dst);
    return s;
  }
  const buffer_id payload = detail::carry(s, region{in_buffer, 0, total_count(a)}, detail::wide(largest_payload(a)));
  const region block{payload, mine.src.offset, mine.src.count};
  if (block.count > 0) detail::fold_all_ranks(s, block, block, mine.dst);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(detail::largest_block(a) * elem) * (a.p - 1);
  return detail::slots_cost(a, bytes, bytes, m);
}

std::uint64_t largest_payload(const coll_args& a) { return detail::payload_size(a, total_count(a)); }

const algorithm info{
    .name = "slots",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary = "shared memory: every input vector rides in its rank's fence line, each rank folds its block; one fence",
    .one_ported = false,
    .payload_bytes = largest_payload,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
