// Schedule builders shared by scan (inclusive prefix) and exscan (exclusive prefix).
// Reference: rank r gets x_0 (+) x_1 (+) ... (+) x_r (exscan: ... (+) x_{r-1}; rank 0's out
// is left unchanged). Lower ranks' contributions are always combined on the left, so both
// builders are correct for non-commutative operators. The input is read only in the
// prologue, so in-place calls (in == out) work too.
#pragma once
#include <cstdint>
#include <vector>

#include "ranklab/collective.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail::prefix {

// ---- chain (linear) -------------------------------------------------------------------------
// Round k = 0..p-2: rank k sends its inclusive prefix to rank k+1, which combines it on the
// left of its own contribution. scan: rank r receives into out (holding x_r) with
// reduce_in_left. exscan: rank r receives x_0..x_{r-1} into out as is and forwards
// out (+) x_r, built in scratch. Rounds: p-1.
inline schedule build_chain(const coll_args& a, int rank, bool exclusive) {
  const std::uint64_t n = a.count;
  const int p = a.p;
  schedule s(rank, p, n, n);
  const region in{in_buffer, 0, n}, out{out_buffer, 0, n};
  if (!exclusive) {
    s.copy(in, out);
    for (int k = 0; k + 1 < p; ++k) {
      s.next_round();
      if (rank == k) s.send(k + 1, out);
      else if (rank == k + 1) s.recv(k, out, combine::reduce_in_left);
    }
    s.trim();
    return s;
  }
  // exscan
  const bool forwards = rank + 1 < p;
  region carry = in;  // what rank sends on: x_0 (+) ... (+) x_rank
  if (rank > 0 && forwards) {
    carry = region{s.scratch(n), 0, n};
    s.copy(in, carry);  // x_rank, saved before out is written (in may be out)
  }
  for (int k = 0; k + 1 < p; ++k) {
    s.next_round();
    if (rank == k) {
      s.send(k + 1, carry);
    } else if (rank == k + 1) {
      s.recv(k, out);
      if (forwards) s.reduce(out, carry, combine::reduce_in_left);  // carry = prefix (+) x_rank
    }
  }
  s.trim();
  return s;
}

// ---- recursive doubling (seed 001: prefix sum on a hypercube; MPICH's algorithm) ------------
// For mask = 1, 2, 4, ...: exchange the partial result (the combination of this rank's
// aligned group of size mask) with partner r XOR mask when it exists. A rank above its
// partner puts the partner's partial on the left of both its partial and its result; a rank
// below puts it on the right of its partial only. Works for any p: a partner >= p only ever
// means the missing ranks are above, and no rank above needs this rank's data from there.
// exscan: the result starts empty; the first partial from below is received into out as is.
// A partial that its owner never uses again is neither updated nor sent to it, so the last
// exchanges are one-way. Rounds: ceil(log2 p).
inline schedule build_recursive_doubling(const coll_args& a, int rank, bool exclusive) {
  const std::uint64_t n = a.count;
  const int p = a.p;
  schedule s(rank, p, n, n);
  const region in{in_buffer, 0, n}, out{out_buffer, 0, n};
  if (!exclusive) s.copy(in, out);
  if (p == 1) return s;
  // Whether rank x exchanges again after `mask` (otherwise its partial is never used again,
  // and neither updating it nor sending it data for it is needed).
  auto later = [&](int x, int mask) {
    for (int m2 = mask * 2; m2 < p; m2 *= 2)
      if ((x ^ m2) < p) return true;
    return false;
  };
  const region partial{s.scratch(n), 0, n};
  const region incoming{s.scratch(n), 0, n};
  s.copy(in, partial);
  bool have_result = !exclusive;
  for (int mask = 1; mask < p; mask *= 2) {
    s.next_round();
    const int partner = rank ^ mask;
    if (partner >= p) continue;
    const bool more = later(rank, mask);
    if (partner < rank) {  // the partner's partial covers the ranks just below this group
      if (later(partner, mask)) s.send(partner, partial);
      if (!have_result) {  // exscan's first contribution: receive straight into out
        s.recv(partner, out);
        if (more) s.reduce(out, partial, combine::reduce_in_left);
        have_result = true;
      } else {
        s.recv(partner, incoming);
        if (more) s.reduce(incoming, partial, combine::reduce_in_left);
        s.reduce(incoming, out, combine::reduce_in_left);
      }
    } else {  // the partner is above: it needs this partial; its own only matters if used later
      s.send(partner, partial);
      if (more) {
        s.recv(partner, incoming);
        s.reduce(incoming, partial, combine::reduce_in_right);
      }
    }
  }
  s.trim();
  return s;
}

// Costs: m = bytes of the buffer.
inline double cost_chain(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double b = static_cast<double>(a.count * elem);
  return (a.p - 1) * (m.alpha + (m.beta + m.gamma) * b);
}
inline double cost_recursive_doubling(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double b = static_cast<double>(a.count * elem);
  return ceil_log2(static_cast<std::uint64_t>(a.p)) * (m.alpha + m.beta * b + 2 * m.gamma * b);
}

}  // namespace ranklab::detail::prefix
