// Reduce through fence payloads (slots.hpp), any root: every rank puts its input in its
// fence line; the root waits at the fence for all and folds the other payloads in rank
// order onto its own input in its receive buffer (detail::fold_onto_own: non-commutative
// operators are fine), the others wait for the root's arrival only (slots.hpp: the root
// check).
// Vectors of at most fence_payload_capacity(p). Rounds: 1 fence. Cost: F + (p-1) m (beta + gamma).
#include "slots/slots.hpp"

namespace ranklab {
namespace {

std::uint64_t largest_payload(const coll_args& a);  // the largest payload of the call, bytes

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  const bool root = rank == a.root;
  const region in{in_buffer, 0, a.count}, out{out_buffer, 0, root ? a.count : 0};
  if (a.p == 1 || a.count == 0) {
    if (root) s.copy(in, out);
    return s;
  }
  if (root) s.copy(in, out);  // the root's contribution, read from its input (detail::fold_onto_own)
  const region mine{detail::carry(s, in, detail::wide(largest_payload(a)), root ? every_rank : a.root), 0, a.count};
  if (root) detail::fold_onto_own(s, mine, out);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem) * (a.p - 1);
  return detail::slots_cost(a, bytes, bytes, m);
}

std::uint64_t largest_payload(const coll_args& a) { return detail::payload_size(a, a.count); }

const algorithm info{
    .name = "slots",
    .coll = collective::reduce,
    .summary = "shared memory: every input rides in its rank's fence line, the root folds all p; one fence",
    .one_ported = false,
    .payload_bytes = largest_payload,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
