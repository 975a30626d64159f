// Broadcast through a fence payload (slots.hpp), any root: the root puts its buffer in its
// fence line and meets the fence (waiting for all: slots.hpp, the root check); the others
// wait there for the root alone and copy the buffer from its line. Buffers of at most fence_payload_capacity(p).
// Rounds: 1 fence. Cost: F + beta m.
#include "slots/slots.hpp"

namespace ranklab {
namespace {

std::uint64_t largest_payload(const coll_args& a);  // the largest payload of the call, bytes

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1 || a.count == 0) return s;
  const region buffer{out_buffer, 0, a.count};
  if (rank == a.root) {
    detail::carry(s, buffer, detail::wide(largest_payload(a)));
  } else {
    const buffer_id payload =
        s.fence_payload(0, detail::wide(largest_payload(a)));  // the root's id; this rank carries nothing
    s.fence_for(a.root);
    s.remote(a.root, region{payload, 0, a.count}, buffer);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::slots_cost(a, static_cast<double>(a.count * elem), 0, m);
}

std::uint64_t largest_payload(const coll_args& a) { return detail::payload_size(a, a.count); }

const algorithm info{
    .name = "slots",
    .coll = collective::bcast,
    .summary = "shared memory: the root's buffer rides in its fence line, the others copy it; one fence",
    .one_ported = false,
    .payload_bytes = largest_payload,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
