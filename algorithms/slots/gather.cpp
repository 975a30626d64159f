// Gather(v) through fence payloads (slots.hpp), any root: every rank puts its block in its
// fence line and arrives at the fence; the root waits there for all and copies the others'
// blocks to their places (block_offset) in its receive buffer, its own from its input. The
// others wait for the root's arrival only (slots.hpp: the root check).
// Blocks of at most fence_payload_capacity(p). Rounds: 1 fence. Cost: F + beta (N - root's
// block).
#include <algorithm>

#include "slots/slots.hpp"

namespace ranklab {
namespace {

std::uint64_t largest_payload(const coll_args& a);  // the largest payload of the call, bytes

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  const bool root = rank == a.root;
  auto placed = [&](int j) { return region{out_buffer, block_offset(a, j), block_count(a, j)}; };
  const region own{in_buffer, 0, block_count(a, rank)};
  if (root) detail::copy_own(s, a, own, placed(rank));
  if (total_count(a) == block_count(a, a.root)) return s;  // nothing crosses (also p = 1)
  const buffer_id payload = detail::carry(s, own, detail::wide(largest_payload(a)), root ? every_rank : a.root);
  if (root)
    detail::for_other_ranks(rank, a.p, [&](int j) {
      if (block_count(a, j) > 0) s.remote(j, region{payload, 0, block_count(a, j)}, placed(j));
    });
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::slots_cost(a, static_cast<double>((total_count(a) - block_count(a, a.root)) * elem), 0, m);
}

std::uint64_t largest_payload(const coll_args& a) { return detail::payload_size(a, detail::largest_block(a)); }

const algorithm info{
    .name = "slots",
    .serves = {collective::gather, collective::gatherv},
    .summary = "shared memory: every block rides in its rank's fence line, the root copies them; one fence",
    .one_ported = false,
    .payload_bytes = largest_payload,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
