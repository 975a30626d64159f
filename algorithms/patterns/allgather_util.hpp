// Schedule builders shared by allgather and allgatherv: both gather every rank's block into
// the same layout (block_offset/block_count: fixed blocks for allgather; counts and optional
// displacements for allgatherv), so one builder serves both. Blocks are addressed where they
// finally belong in out; a message carrying several blocks is a list of regions, so no
// algorithm here needs staging copies (Bruck's final rotation excepted, see build_bruck).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ranklab/collective.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/mesh.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail::allgather {

// Where each rank's block lives in out (computed once per build: O(p), not O(p^2)).
struct layout {
  int p = 1;
  std::vector<std::uint64_t> offset, count;
  bool packed = true;  // blocks back to back in rank order from 0 (no displacements, no gaps)
  std::uint64_t total = 0;

  explicit layout(const coll_args& a) : p(a.p), offset(a.p), count(a.p) {
    const bool vector = a.coll == collective::allgatherv;
    std::uint64_t at = 0;
    for (int j = 0; j < p; ++j) {
      count[j] = vector ? a.counts[j] : a.count;
      offset[j] = a.displs.empty() ? at : a.displs[j];
      if (offset[j] != at) packed = false;
      at += count[j];
    }
    total = at;
  }
  region block(int j) const { return region{out_buffer, offset[j], count[j]}; }
  // Blocks lo, ..., hi-1 (no wrap-around).
  void add_range(region_list& l, int lo, int hi) const {
    for (int j = lo; j < hi; ++j) l.add(block(j));
  }
  region_list range(int lo, int hi) const {
    region_list l;
    add_range(l, lo, hi);
    return l;
  }
  // n blocks first, first+1, ... (mod p).
  region_list cyclic(int first, int n) const {
    region_list l;
    for (int i = 0; i < n; ++i) l.add(block((first + i) % p));
    return l;
  }
};

// The schedule with the prologue every algorithm here starts with: own block in -> out.
inline schedule start(const coll_args& a, int rank, const layout& L) {
  const buffer_extent e = buffer_extents(a, rank);
  schedule s(rank, a.p, e.in, e.out);
  s.copy(region{in_buffer, 0, L.count[rank]}, L.block(rank));
  return s;
}

// ---- linear ------------------------------------------------------------------------------
// Every rank sends its own block directly to every other rank (LibNBC's linear algorithm
// posts all of these at once; one-ported, they take p-1 rounds): round k sends to r+k and
// receives from r-k.
inline schedule build_linear(const coll_args& a, int rank) {
  const layout L(a);
  schedule s = start(a, rank, L);
  const region mine{in_buffer, 0, L.count[rank]};
  for (int k = 1; k < a.p; ++k) {
    s.next_round();
    s.send(mod(rank + k, a.p), mine);
    const int from = mod(rank - k, a.p);
    s.recv(from, L.block(from));
  }
  return s;
}

// ---- ring (seed 001) ---------------------------------------------------------------------
// Round k = 1..p-1: pass block r-k+1 to the right, receive block r-k from the left.
inline schedule build_ring(const coll_args& a, int rank) {
  const layout L(a);
  schedule s = start(a, rank, L);
  const int right = mod(rank + 1, a.p), left = mod(rank - 1, a.p);
  for (int k = 1; k < a.p; ++k) {
    s.next_round();
    s.send(right, L.block(mod(rank - k + 1, a.p)));
    s.recv(left, L.block(mod(rank - k, a.p)));
  }
  return s;
}

// ---- recursive doubling (seed 001, hypercube all-to-all broadcast) -------------------------
// p' = largest power of two <= p, rem = p - p'. When p is not a power of two the first
// 2*rem ranks pair up (the even one hands its block to the odd one, which stands for both),
// the p' survivors run log2 p' exchange rounds, and the odd ones finally hand everything
// the even ones lack back to them. Survivor v stands for real ranks [first(v), first(v+1)),
// so a survivor group of size 2^k stands for a contiguous rank range and every message is a
// list of that range's blocks. Rounds: log2 p' (+2 when p is not a power of two).
inline schedule build_recursive_doubling(const coll_args& a, int rank) {
  const layout L(a);
  schedule s = start(a, rank, L);
  const int p = a.p;
  const int pof2 = static_cast<int>(floor_pow2(static_cast<std::uint64_t>(p)));
  const int rem = p - pof2;
  const int v = rank < 2 * rem ? (rank % 2 == 1 ? rank / 2 : -1) : rank - rem;
  auto real = [&](int u) { return u < rem ? 2 * u + 1 : u + rem; };
  auto first = [&](int u) { return u < rem ? 2 * u : u + rem; };  // first(p') = p

  if (rem > 0) {
    s.next_round();
    if (rank < 2 * rem) {
      if (rank % 2 == 0) s.send(rank + 1, L.block(rank));
      else s.recv(rank - 1, L.block(rank - 1));
    }
  }
  for (int mask = 1; mask < pof2; mask *= 2) {
    s.next_round();
    if (v < 0) continue;
    const int partner = v ^ mask;
    const int mine = v & ~(mask - 1), theirs = partner & ~(mask - 1);
    send_list(s, real(partner), L.range(first(mine), first(mine + mask)));
    recv_list(s, real(partner), L.range(first(theirs), first(theirs + mask)));
  }
  if (rem > 0) {
    s.next_round();
    if (rank < 2 * rem) {
      const int even = rank - rank % 2;
      region_list missing = L.range(0, even);  // everything but the even rank's own block
      L.add_range(missing, even + 1, p);
      if (rank % 2 == 1) send_list(s, even, missing);
      else recv_list(s, rank + 1, missing);
    }
  }
  return s;
}

// ---- Bruck (seed 004) --------------------------------------------------------------------
// Rank i collects the blocks in rotated order (position t holds block i+t mod p): in step k
// it sends positions [0, n) to i - 2^k and receives positions [2^k, 2^k + n) from i + 2^k,
// n = min(2^k, p - 2^k) (the last step sends only the remaining blocks). Every message is
// one contiguous piece of the rotated buffer. Finally the rotated buffer is turned into
// rank order by local copies, as in the seed's LibNBC implementation: when the layout is
// packed the rotation happens in out itself (three copies through a scratch buffer of the
// smaller part, which the seed sizes at p-i blocks); with displacements the rotated buffer
// is scratch and each block is copied to its place. Rounds: ceil(log2 p).
inline schedule build_bruck(const coll_args& a, int rank) {
  const layout L(a);
  const buffer_extent e = buffer_extents(a, rank);
  schedule s(rank, a.p, e.in, e.out);
  const int p = a.p;
  // Offsets of the positions in the rotated buffer.
  std::vector<std::uint64_t> at(static_cast<std::size_t>(p) + 1, 0);
  for (int t = 0; t < p; ++t) at[t + 1] = at[t] + L.count[(rank + t) % p];
  const buffer_id rot = L.packed ? out_buffer : s.scratch(L.total);
  auto positions = [&](int lo, int n) { return region{rot, at[lo], at[lo + n] - at[lo]}; };

  s.copy(region{in_buffer, 0, L.count[rank]}, positions(0, 1));
  for (int dist = 1; dist < p; dist *= 2) {
    s.next_round();
    const int n = std::min(dist, p - dist);
    s.send(mod(rank - dist, p), positions(0, n));
    s.recv(mod(rank + dist, p), positions(dist, n));
  }
  // Final rotation (steps after the last round's messages, or the prologue when p == 1).
  if (!L.packed) {
    for (int t = 0; t < p; ++t) s.copy(positions(t, 1), L.block((rank + t) % p));
  } else if (rank != 0 && L.total > 0) {
    // rotated = [blocks i..p-1 | blocks 0..i-1] = [A | B]; wanted [B | A].
    const std::uint64_t size_a = L.total - L.offset[rank], size_b = L.offset[rank];
    const std::uint64_t small = std::min(size_a, size_b);
    const buffer_id tmp = s.scratch(small);
    if (size_a <= size_b) {
      s.copy(region{out_buffer, 0, size_a}, region{tmp, 0, size_a});
      s.copy(region{out_buffer, size_a, size_b}, region{out_buffer, 0, size_b});  // overlapping move
      s.copy(region{tmp, 0, size_a}, region{out_buffer, size_b, size_a});
    } else {
      s.copy(region{out_buffer, size_a, size_b}, region{tmp, 0, size_b});
      s.copy(region{out_buffer, 0, size_a}, region{out_buffer, size_b, size_a});  // overlapping move
      s.copy(region{tmp, 0, size_b}, region{out_buffer, 0, size_b});
    }
  }
  return s;
}

// ---- neighbor exchange (Chen, Yuan et al. 2005; Open MPI's allgather neighbor exchange) ----
// p even: in step 0 ranks 2q and 2q+1 swap their blocks; from then on every rank swaps a
// pair of blocks {2q, 2q+1} with its left and right neighbour alternately, the pair it sends
// being the one it received in the previous step. p/2 rounds.
// p odd (documented extension): the last rank first gives its block to rank p-2, which
// stands for both in a neighbor exchange among the even number p-1 of ranks (its "block" is
// blocks p-2 and p-1), and finally sends rank p-1 all blocks it lacks. (p-1)/2 + 2 rounds.
inline schedule build_neighbor_exchange(const coll_args& a, int rank) {
  const layout L(a);
  schedule s = start(a, rank, L);
  const int p = a.p;
  if (p == 1) return s;
  const bool odd = p % 2 == 1;
  const int q = odd ? p - 1 : p;  // ranks taking part in the exchange
  // Virtual block v (of the q participants) is real blocks [v, end(v)).
  auto end = [&](int v) { return v == q - 1 ? p : v + 1; };
  auto pair = [&](int start) { return L.range(start, end(start + 1)); };  // start even

  if (odd) {
    s.next_round();
    if (rank == p - 1) s.send(p - 2, L.block(p - 1));
    else if (rank == p - 2) s.recv(p - 1, L.block(p - 1));
  }
  if (rank < q) {
    const bool even_rank = rank % 2 == 0;
    int neighbor[2], recv_from[2], step[2];
    if (even_rank) {
      neighbor[0] = mod(rank + 1, q), neighbor[1] = mod(rank - 1, q);
      recv_from[0] = recv_from[1] = rank;
      step[0] = 2, step[1] = -2;
    } else {
      neighbor[0] = mod(rank - 1, q), neighbor[1] = mod(rank + 1, q);
      recv_from[0] = recv_from[1] = neighbor[0];
      step[0] = -2, step[1] = 2;
    }
    s.next_round();
    send_list(s, neighbor[0], L.range(rank, end(rank)));
    recv_list(s, neighbor[0], L.range(neighbor[0], end(neighbor[0])));
    int send_from = even_rank ? rank : recv_from[0];
    for (int i = 1; i < q / 2; ++i) {
      const int parity = i % 2;
      recv_from[parity] = mod(recv_from[parity] + step[parity], q);
      s.next_round();
      send_list(s, neighbor[parity], pair(send_from));
      recv_list(s, neighbor[parity], pair(recv_from[parity]));
      send_from = recv_from[parity];
    }
  } else {
    for (int i = 0; i < q / 2; ++i) s.next_round();  // idle while the others exchange
  }
  if (odd) {
    s.next_round();
    if (rank == p - 2) send_list(s, p - 1, L.range(0, p - 1));
    else if (rank == p - 1) recv_list(s, p - 2, L.range(0, p - 1));
  }
  return s;
}

// ---- 2-D mesh (seed 001) ------------------------------------------------------------------
// Ranks form the most square grid rows x cols = p (rank = row*cols + col; prime p gives a
// 1 x p grid, i.e. the ring). First a ring allgather in every row (cols-1 rounds of one
// block), then a ring allgather in every column whose unit is a whole row's blocks
// (rows-1 rounds of cols blocks). Rounds: (cols-1) + (rows-1).
inline schedule build_mesh2d(const coll_args& a, int rank) {
  const layout L(a);
  schedule s = start(a, rank, L);
  const grid g = most_square_grid(a.p);
  const int row = rank / g.cols, col = rank % g.cols;
  auto at = [&](int r, int c) { return r * g.cols + c; };
  for (int k = 1; k < g.cols; ++k) {
    s.next_round();
    s.send(at(row, mod(col + 1, g.cols)), L.block(at(row, mod(col - k + 1, g.cols))));
    s.recv(at(row, mod(col - 1, g.cols)), L.block(at(row, mod(col - k, g.cols))));
  }
  auto row_blocks = [&](int r) { return L.range(at(r, 0), at(r, 0) + g.cols); };
  for (int k = 1; k < g.rows; ++k) {
    s.next_round();
    send_list(s, at(mod(row + 1, g.rows), col), row_blocks(mod(row - k + 1, g.rows)));
    recv_list(s, at(mod(row - 1, g.rows), col), row_blocks(mod(row - k, g.rows)));
  }
  return s;
}

// ---- costs --------------------------------------------------------------------------------
// N = bytes of the whole gathered result; every algorithm here receives (p-1)/p of it at
// every rank (irregular allgatherv counts are modelled by their average).
inline double gathered_bytes(const coll_args& a, std::size_t elem) {
  std::uint64_t n = 0;
  if (a.coll == collective::allgatherv)
    for (auto c : a.counts) n += c;
  else
    n = a.count * static_cast<std::uint64_t>(a.p);
  return static_cast<double>(n * elem);
}
inline double cost_rounds(const coll_args& a, std::size_t elem, const cost_model& m, double rounds,
                          double extra_bytes = 0) {
  const double n = gathered_bytes(a, elem);
  return rounds * m.alpha + m.beta * (n * (a.p - 1) / a.p + extra_bytes);
}
inline double cost_linear(const coll_args& a, std::size_t e, const cost_model& m) {
  return cost_rounds(a, e, m, a.p - 1);
}
inline double cost_ring(const coll_args& a, std::size_t e, const cost_model& m) {
  return cost_rounds(a, e, m, a.p - 1);
}
inline double cost_recursive_doubling(const coll_args& a, std::size_t e, const cost_model& m) {
  const auto pof2 = floor_pow2(static_cast<std::uint64_t>(a.p));
  const bool folded = pof2 != static_cast<std::uint64_t>(a.p);
  // Folding adds a round with one block and a round with p-1 blocks.
  const double extra = folded ? gathered_bytes(a, e) : 0;
  return cost_rounds(a, e, m, ceil_log2(pof2) + (folded ? 2 : 0), extra);
}
inline double cost_bruck(const coll_args& a, std::size_t e, const cost_model& m) {
  return cost_rounds(a, e, m, ceil_log2(static_cast<std::uint64_t>(a.p)));
}
inline double cost_neighbor_exchange(const coll_args& a, std::size_t e, const cost_model& m) {
  if (a.p % 2 == 0) return cost_rounds(a, e, m, a.p / 2);
  return cost_rounds(a, e, m, (a.p - 1) / 2 + (a.p > 1 ? 2 : 0), a.p > 1 ? gathered_bytes(a, e) : 0);
}
inline double cost_mesh2d(const coll_args& a, std::size_t e, const cost_model& m) {
  const grid g = most_square_grid(a.p);
  return cost_rounds(a, e, m, (g.rows - 1) + (g.cols - 1));
}

}  // namespace ranklab::detail::allgather
