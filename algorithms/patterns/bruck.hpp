// Bruck's index algorithm for alltoall (J. Bruck et al., "Efficient Algorithms for All-to-All
// Communications in Multiport Message-Passing Systems") as positional store-and-forward, and
// its hypercube twin (E-cube routing in the 5DV050 lecture "Algorithms for Collective
// Communication"). Every block keeps a fixed "position" t, its distance from its source
// (Bruck: dest - src mod p; hypercube: src XOR dest), and in step k all positions with bit k
// set move by 2^k (Bruck: to r + 2^k; hypercube: to r XOR 2^k). Before step k the block at
// position t on rank x came from x - (t mod 2^k) (resp. x XOR (t mod 2^k)).
// A position is read from in the first time it moves, lands in out the last time, and in
// between lives in one of two scratch buffers, alternating per move so that a round never
// receives where it sends. This replaces Bruck's two local rotations and its pack/unpack
// copies by multi-region messages: no local copies besides the rank's block to itself.
// Used by alltoall bruck and hypercube (both serving alltoallv too).
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "patterns/block_layout.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// How a distance moves a rank: Bruck's shift (any p) or the hypercube's XOR (p = 2^k).
struct index_steps {
  int p = 1;
  bool xor_partners = false;
  int ahead(int x, int d) const { return xor_partners ? (x ^ d) : mod(x + d, p); }
  int behind(int x, int d) const { return xor_partners ? (x ^ d) : mod(x - d, p); }
};

inline schedule bruck_index_exchange(const coll_args& a, int rank, index_steps step) {
  const exchange_layout L(a, rank);
  schedule s = L.start(rank);
  const int p = a.p;
  if (p == 1) return s;
  const int steps = ceil_log2(static_cast<std::uint64_t>(p));
  auto source = [&](int x, int t, int k) { return step.behind(x, t & ((1 << k) - 1)); };  // before step k
  auto highest = [](int t) { return static_cast<int>(std::bit_width(static_cast<unsigned>(t))) - 1; };
  auto lowest = [](int t) { return static_cast<int>(std::countr_zero(static_cast<unsigned>(t))); };
  auto size_after = [&](int t, int k) {  // elements at position t on this rank after step k
    const int src = source(rank, t, k + 1);
    return L.elements(src, step.ahead(src, t));
  };
  // Scratch slots: position t's slot holds the largest intermediate occupant.
  std::vector<std::uint64_t> slot(static_cast<std::size_t>(p) + 1, 0);
  for (int t = 1; t < p; ++t) {
    std::uint64_t n = 0;
    for (int k = lowest(t); k < highest(t); ++k)
      if (t >> k & 1) n = std::max(n, size_after(t, k));
    slot[t + 1] = slot[t] + n;
  }
  const buffer_id buf[2] = {s.scratch(slot[p]), s.scratch(slot[p])};
  auto moves_before = [&](int t, int k) { return std::popcount(static_cast<unsigned>(t & ((1 << k) - 1))); };

  for (int k = 0; k < steps; ++k) {
    const int dist = 1 << k;
    s.next_round();
    region_list out, in;
    for (int t = dist; t < p; ++t) {
      if (!(t >> k & 1)) continue;
      // Sending: where position t is now.
      const int src_now = source(rank, t, k);
      const std::uint64_t n_now = L.elements(src_now, step.ahead(src_now, t));
      if (k == lowest(t))
        out.add(L.send_block(step.ahead(rank, t)));
      else
        out.add(region{buf[(moves_before(t, k) - 1) % 2], slot[t], n_now});
      // Receiving: where position t goes.
      if (k == highest(t))
        in.add(L.recv_block(source(rank, t, k + 1)));
      else
        in.add(region{buf[moves_before(t, k) % 2], slot[t], size_after(t, k)});
    }
    send_list(s, step.ahead(rank, dist), out);
    recv_list(s, step.behind(rank, dist), in);
  }
  return s;
}

}  // namespace ranklab::detail
