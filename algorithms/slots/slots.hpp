// What the fence-payload algorithms (algorithms/slots/, registered as "slots") have in
// common. They are the direct algorithms (direct/direct.hpp) for calls so small that each
// rank's part fits in its fence line: a rank copies what the others need into its fence
// payload (schedule::fence_payload, at most fence_payload_bytes in the line, or in teams of
// up to wide_fence_payload_ranks up to wide_fence_payload_bytes beside it), meets the one
// fence, and reads the others' payloads. Passing the fence already fetched each peer's
// line, so a payload in the line costs no further crossing between cores (a wide one costs
// its own lines, as any copy would), and the payload lives in the team, not in
// the caller's buffers, so no withdrawing fence is needed: one fence instead of two, and
// in place (in == out) is always safe. See docs/algorithms.md, "Fence-payload algorithms".
//
// Cost: one fence F (detail::fence_alphas) plus the reads, all ranks in parallel: the beta
// (and gamma) term of the busiest rank. In the rooted ones the root waits for all and the
// others for the root alone (schedule::fence_for), even where that rank reads nothing from
// the others (the root of bcast and scatter, the others of reduce and gather): the root
// check. Past the fence a root compares every rank's call signature with its own, and the
// others the root's, so that ranks disagreeing on the root meet a mismatch_error; without
// the waits, a gather where no rank believes it is the root, or a bcast with two ranks that
// do, would pass unnoticed.
#pragma once
#include <algorithm>
#include <cstdint>

#include "direct/direct.hpp"

namespace ranklab::detail {

// Bytes of `count` elements of the call.
inline std::uint64_t payload_size(const coll_args& a, std::uint64_t count) { return count * a.elem_size; }

// Cost of one fence and the busiest rank reading `read` bytes of which `reduced` are
// folded.
inline double slots_cost(const coll_args& a, double read, double reduced, const cost_model& m) {
  return fences_cost(1, a.p, m) + read * m.beta + reduced * m.gamma;
}

// The largest block of a gathered or scattered layout, leaving out rank `except`'s.
inline std::uint64_t largest_block(const coll_args& a, int except = no_rank) {
  std::uint64_t largest = 0;
  for (int j = 0; j < a.p; ++j)
    if (j != except) largest = std::max(largest, block_count(a, j));
  return largest;
}

// Whether a call whose largest payload is `bytes` carries it beside the fence lines (the
// same answer on every rank of the call).
inline bool wide(std::uint64_t bytes) { return bytes > fence_payload_bytes; }

// The fence payload holding `src` (this rank's contribution; `wide` as above), the one
// fence after it, which waits for `waits_for` (every_rank, the one rank whose payload this
// rank reads, or no_rank when it reads none).
inline buffer_id carry(schedule& s, region src, bool wide, int waits_for = every_rank) {
  const buffer_id payload = s.fence_payload(src.count, wide);
  s.copy(src, region{payload, 0, src.count});
  if (waits_for == every_rank)
    s.fence();
  else
    s.fence_for(waits_for);
  return payload;
}

// The rank-ordered fold of every other rank's `part` of its payload into `dst`, which must
// hold this rank's own contribution already, copied there from its input before the fence.
// Its own payload is left unread: the others have just fetched that line to read it, and
// loading it back cost a crossing (an 8-byte allreduce at p = 2: 259 -> 202 ns). The input
// is read before `dst` is written, so in place stays safe. By associativity, rank order
// holds: dst = own, then dst = dst (+) part_j for the ranks above this one, ascending, then
// dst = part_j (+) dst for the ranks below, descending.
inline void fold_onto_own(schedule& s, region part, region dst) {
  for (int j = s.rank() + 1; j < s.size(); ++j) s.remote(j, part, dst, combine::reduce_in_right);
  for (int j = s.rank() - 1; j >= 0; --j) s.remote(j, part, dst, combine::reduce_in_left);
}

}  // namespace ranklab::detail
