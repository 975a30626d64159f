// Allreduce through fence payloads (slots.hpp): every rank puts its input in its fence line
// (and a private copy aside), meets the fence and folds all p contributions from the right
// in rank order (detail::fold_all_ranks, so non-commutative operators are fine, and every
// rank gets the same bits). Vectors of at most fence_payload_capacity(p). Rounds: 1 fence.
// Cost: F + (p-1) m (beta + gamma).
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
  // Its own contribution is read from a private copy, not back from its payload line, which
  // the others have just fetched (a crossing: 8 bytes at p = 2, 262 -> 202 ns), and not from
  // its input, which in place the fold has overwritten by then. Every rank folds in the same
  // order, so all get the same bits.
  const region kept{s.scratch(a.count), 0, a.count};
  s.copy(in, kept);
  const region mine{detail::carry(s, in, detail::wide(largest_payload(a))), 0, a.count};
  detail::fold_all_ranks(s, mine, kept, out);
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
