// The Swing peer sequence (D. De Sensi, T. Bonato, D. Saam, T. Hoefler, "Swing: Short-cutting
// Rings for Higher Bandwidth Allreduce", NSDI 2024): in step s = 0 .. log2 p - 1 rank r talks
// to pi(r, s) = r + rho(s) (r even) or r - rho(s) (r odd), mod p, with
// rho(s) = sum_{i=0..s} (-2)^i = (1 - (-2)^(s+1)) / 3 = 1, -1, 3, -5, 11, -21, ...
// rho(s) is odd, so for even p the peer has the other parity and pi(., s) is an involution:
// the two ranks of a step agree on each other without a message.
//
// swing_owned(p, r, s): the blocks rank r is responsible for after reduce-scatter step s - 1
// (equivalently: holds before allgather step s - 1 of the reversed allgather), found by
// simulating the allgather backwards from "rank x holds block x" (s = log2 p):
//   B(x, L) = {x},   B(x, s) = B(x, s+1) u B(pi(x, s), s+1).
// Reduce-scatter step s: r sends B(pi(r,s), s+1) to its peer and combines B(r, s+1);
// allgather step s (s = L-1 .. 0) is the same exchange backwards. The union must be disjoint
// at every step (then every rank's contribution to block b follows exactly one path, ending
// at rank b); the builder checks it rather than assume it.
#pragma once
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "patterns/rank_arithmetic.hpp"

namespace ranklab::detail {

inline std::int64_t swing_rho(int s) {
  std::int64_t pow = 1, sum = 0;  // pow = (-2)^i
  for (int i = 0; i <= s; ++i) {
    sum += pow;
    pow *= -2;
  }
  return sum;
}

inline int swing_peer(int r, int s, int p) {
  const std::int64_t rho = swing_rho(s);
  return mod(r % 2 == 0 ? std::int64_t{r} + rho : std::int64_t{r} - rho, p);
}

inline int swing_steps(int p) { return p <= 1 ? 0 : std::bit_width(static_cast<unsigned>(p)) - 1; }

// Appends B(x, s) to `out` (see above); L = swing_steps(p).
inline void swing_collect(int x, int s, int p, int L, std::vector<int>& out) {
  if (s >= L) {
    out.push_back(x);
    return;
  }
  swing_collect(x, s + 1, p, L, out);
  swing_collect(swing_peer(x, s, p), s + 1, p, L, out);
}

// B(x, s), checked to have 2^(L-s) distinct members (disjoint unions all the way down).
inline std::vector<int> swing_owned(int x, int s, int p) {
  const int L = swing_steps(p);
  std::vector<int> out;
  swing_collect(x, s, p, L, out);
  std::vector<char> seen(static_cast<std::size_t>(p), 0);
  for (int b : out) {
    if (seen[static_cast<std::size_t>(b)]) throw std::logic_error("swing: block sets of a step overlap");
    seen[static_cast<std::size_t>(b)] = 1;
  }
  return out;
}

}  // namespace ranklab::detail
