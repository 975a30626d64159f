// Allreduce through fence payloads (slots.hpp): every rank puts its input in its fence line
// and a copy in its output, meets the fence and folds the other p - 1 payloads onto it in
// rank order (detail::fold_onto_own, so non-commutative operators are fine). Vectors of at
// most fence_payload_capacity(p). Rounds: 1 fence. Cost: F + (p-1) m (beta + gamma).
#include "slots/slots.hpp"

namespace ranklab {
namespace {

std::uint64_t largest_payload(const coll_args& a);  // the largest payload of the call, bytes

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, a.count);
  const region in{in_buffer, 0, a.count}, out{out_buffer, 0, a.count};
  if (a.p == 1 || a.count == 0) {
    s.copy(in, out);
    return s;
  }
  s.copy(in, out);  // this rank's contribution, read from its input (detail::fold_onto_own)
  const region mine{detail::carry(s, in, detail::wide(largest_payload(a))), 0, a.count};
  detail::fold_onto_own(s, mine, out);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem) * (a.p - 1);
  return detail::slots_cost(a, bytes, bytes, m);
}

std::uint64_t largest_payload(const coll_args& a) { return detail::payload_size(a, a.count); }

const algorithm info{
    .name = "slots",
    .coll = collective::allreduce,
    .summary = "shared memory: every input rides in its rank's fence line, every rank folds all p; one fence",
    .one_ported = false,
    .payload_bytes = largest_payload,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
