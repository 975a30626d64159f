// Scan and exscan through fence payloads (slots.hpp): every rank puts its input in its fence
// line and meets the fence; rank r then folds the payloads of ranks 0..r (scan) or 0..r-1
// (exscan; rank 0's output is left unchanged) in rank order, so non-commutative operators
// are fine. Vectors of at most fence_payload_capacity(p). Rounds: 1 fence.
// Cost: F + (p-1) m (beta + gamma) at the last rank.
#include "slots/slots.hpp"

namespace ranklab {
namespace {

std::uint64_t largest_payload(const coll_args& a);  // the largest payload of the call, bytes

schedule build(const coll_args& a, int rank) {
  const bool inclusive = a.coll == collective::scan;
  schedule s(rank, a.p, a.count, a.count);
  const region in{in_buffer, 0, a.count}, out{out_buffer, 0, a.count};
  if (a.p == 1 || a.count == 0) {
    if (inclusive) s.copy(in, out);
    return s;
  }
  const region carried{detail::carry(s, in, detail::wide(largest_payload(a))), 0, a.count};
  // x_0 (+) (x_1 (+) ( ... (+) x_last)), folded from the right.
  const int last = inclusive ? rank : rank - 1;
  for (int j = last; j >= 0; --j) {
    const combine how = j == last ? combine::copy : combine::reduce_in_left;
    if (j == rank)
      s.reduce(carried, out, how);
    else
      s.remote(j, carried, out, how);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem) * (a.p - 1);
  return detail::slots_cost(a, bytes, bytes, m);
}

std::uint64_t largest_payload(const coll_args& a) { return detail::payload_size(a, a.count); }

const algorithm info{
    .name = "slots",
    .serves = {collective::scan, collective::exscan},
    .summary = "shared memory: every input rides in its rank's fence line, rank r folds those of ranks 0..r; one fence",
    .one_ported = false,
    .payload_bytes = largest_payload,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
