// Schedule builders shared by alltoall and alltoallv. Both are described by the matrix
// C(i, j) = elements rank i sends to rank j (alltoall: count everywhere; alltoallv: the
// counts every rank passes), with each rank's send blocks packed in destination order in in
// and its receive blocks packed in source order in out. Store-and-forward algorithms (ring,
// Bruck, hypercube, mesh) need C for other ranks' blocks too, which alltoallv provides.
// Messages are lists of regions: blocks are sent from where they are and received where they
// are needed next (intermediate blocks in scratch, final ones straight into out), so apart
// from a rank's block to itself no algorithm here copies data locally.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "ranklab/collective.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/mesh.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail::alltoall {

struct layout {
  int p = 1;
  int rank = 0;
  const coll_args* args = nullptr;
  std::vector<std::uint64_t> in_at, out_at;  // this rank's block offsets (p + 1 entries)

  layout(const coll_args& a, int r) : p(a.p), rank(r), args(&a), in_at(a.p + 1, 0), out_at(a.p + 1, 0) {
    for (int j = 0; j < p; ++j) {
      in_at[j + 1] = in_at[j] + elements(rank, j);
      out_at[j + 1] = out_at[j] + elements(j, rank);
    }
  }
  // C(i, j): elements rank i sends to rank j.
  std::uint64_t elements(int i, int j) const {
    if (args->coll != collective::alltoallv) return args->count;
    return args->counts[static_cast<std::size_t>(i) * static_cast<std::size_t>(p) + static_cast<std::size_t>(j)];
  }
  region send_block(int to) const { return region{in_buffer, in_at[to], in_at[to + 1] - in_at[to]}; }
  region recv_block(int from) const { return region{out_buffer, out_at[from], out_at[from + 1] - out_at[from]}; }
  double mean_block_bytes(std::size_t elem) const {
    if (args->coll != collective::alltoallv) return static_cast<double>(args->count * elem);
    std::uint64_t n = 0;
    for (auto c : args->counts) n += c;
    return static_cast<double>(n * elem) / (static_cast<double>(p) * p);
  }
};

inline schedule start(const coll_args& a, int rank, const layout& L) {
  const buffer_extent e = buffer_extents(a, rank);
  schedule s(rank, a.p, e.in, e.out);
  s.copy(L.send_block(rank), L.recv_block(rank));
  return s;
}

// ---- direct exchanges: linear and pairwise --------------------------------------------------
// Round k = 1..p-1: send the block for to(k) straight from in, receive the block of from(k)
// straight into out.
template <class To, class From>
schedule build_direct(const coll_args& a, int rank, To to, From from) {
  const layout L(a, rank);
  schedule s = start(a, rank, L);
  for (int k = 1; k < a.p; ++k) {
    s.next_round();
    const int t = to(k), f = from(k);
    s.send(t, L.send_block(t));
    s.recv(f, L.recv_block(f));
  }
  return s;
}

// Linear: every rank sends each block directly to its destination (as Open MPI's basic
// linear alltoall posts them all at once); one-ported, round k goes to r+k, from r-k.
inline schedule build_linear(const coll_args& a, int rank) {
  return build_direct(
      a, rank, [&](int k) { return mod(rank + k, a.p); }, [&](int k) { return mod(rank - k, a.p); });
}

// Pairwise exchange: p a power of two: round k exchanges with r XOR k (seed 001's
// volume-optimal hypercube algorithm, each pair swaps both directions); otherwise the shifted
// exchange, send to r+k and receive from r-k.
inline schedule build_pairwise(const coll_args& a, int rank) {
  if ((a.p & (a.p - 1)) == 0)
    return build_direct(a, rank, [&](int k) { return rank ^ k; }, [&](int k) { return rank ^ k; });
  return build_linear(a, rank);
}

// ---- ring, store-and-forward (seed 001: all-to-all personalized on a ring) ------------------
// Each rank's p-1 outgoing blocks travel to the right as one packet that shrinks by a block
// per hop: in step k = 1..p-1 rank r forwards the packet of source r-k+1 (blocks for
// r+1 .. r+p-k) and receives the packet of source r-k (blocks for r .. r+p-k-1), whose first
// block lands in out and the rest in scratch, alternating two scratch buffers because a
// round's receive must not overwrite what it sends. Rounds: p-1.
inline schedule build_ring(const coll_args& a, int rank) {
  const layout L(a, rank);
  schedule s = start(a, rank, L);
  const int p = a.p;
  if (p == 1) return s;
  // The packet kept at step k holds the blocks of source r-k for r+1 .. r+p-k-1.
  auto kept = [&](int k, int i) { return L.elements(mod(rank - k, p), mod(rank + i, p)); };  // i = 1..p-k-1
  std::uint64_t largest = 0;
  for (int k = 1; k < p; ++k) {
    std::uint64_t n = 0;
    for (int i = 1; i <= p - k - 1; ++i) n += kept(k, i);
    largest = std::max(largest, n);
  }
  const buffer_id buf[2] = {s.scratch(largest), s.scratch(largest)};
  const int right = mod(rank + 1, p), left = mod(rank - 1, p);
  for (int k = 1; k < p; ++k) {
    s.next_round();
    region_list out;
    if (k == 1) {
      for (int i = 1; i < p; ++i) out.add(L.send_block(mod(rank + i, p)));
    } else {  // what was kept in step k-1
      std::uint64_t at = 0;
      for (int i = 1; i <= p - k; ++i) {
        const std::uint64_t n = kept(k - 1, i);
        out.add(region{buf[(k - 1) % 2], at, n});
        at += n;
      }
    }
    send_list(s, right, out);
    region_list in;
    in.add(L.recv_block(mod(rank - k, p)));
    std::uint64_t at = 0;
    for (int i = 1; i <= p - k - 1; ++i) {
      const std::uint64_t n = kept(k, i);
      in.add(region{buf[k % 2], at, n});
      at += n;
    }
    recv_list(s, left, in);
  }
  return s;
}

// ---- positional store-and-forward: Bruck and hypercube --------------------------------------
// Both algorithms keep each block at a fixed "position" t = its distance from its source
// (Bruck: dest - src mod p; hypercube: src XOR dest) and, in step k, move all positions with
// bit k set by 2^k (Bruck: to r + 2^k; hypercube: to r XOR 2^k). Before step k the block at
// position t on rank x came from x - (t mod 2^k) (resp. x XOR (t mod 2^k)). A position is
// read from in the first time it moves, lands in out the last time, and in between lives in
// one of two scratch buffers, alternating per move so a round never receives where it sends.
// This replaces Bruck's two local rotations and its pack/unpack copies by multi-region
// messages: no local copies besides the rank's block to itself.
inline schedule build_positional(const coll_args& a, int rank, bool hypercube) {
  const layout L(a, rank);
  schedule s = start(a, rank, L);
  const int p = a.p;
  if (p == 1) return s;
  const int steps = ceil_log2(static_cast<std::uint64_t>(p));
  auto source = [&](int x, int t, int k) {  // origin of position t on rank x before step k
    const int low = t & ((1 << k) - 1);
    return hypercube ? (x ^ low) : mod(x - low, p);
  };
  auto dest = [&](int src, int t) { return hypercube ? (src ^ t) : mod(src + t, p); };
  auto highest = [](int t) { return static_cast<int>(std::bit_width(static_cast<unsigned>(t))) - 1; };
  auto lowest = [](int t) { return static_cast<int>(std::countr_zero(static_cast<unsigned>(t))); };
  auto size_after = [&](int t, int k) {  // elements at position t on this rank after step k
    const int src = source(rank, t, k + 1);
    return L.elements(src, dest(src, t));
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
      const std::uint64_t n_now = L.elements(src_now, dest(src_now, t));
      if (k == lowest(t)) out.add(L.send_block(dest(rank, t)));
      else out.add(region{buf[(moves_before(t, k) - 1) % 2], slot[t], n_now});
      // Receiving: where position t goes.
      const int src_next = source(rank, t, k + 1);
      if (k == highest(t)) in.add(L.recv_block(src_next));
      else in.add(region{buf[moves_before(t, k) % 2], slot[t], size_after(t, k)});
    }
    const int to = hypercube ? (rank ^ dist) : mod(rank + dist, p);
    const int from = hypercube ? (rank ^ dist) : mod(rank - dist, p);
    send_list(s, to, out);
    recv_list(s, from, in);
  }
  return s;
}

inline schedule build_bruck(const coll_args& a, int rank) { return build_positional(a, rank, false); }

inline schedule build_hypercube(const coll_args& a, int rank) {
  if ((a.p & (a.p - 1)) != 0)
    throw usage_error(rank, std::string(name(a.coll)),
                      fmt::format("algorithm 'hypercube' needs p to be a power of two (p = {})", a.p));
  return build_positional(a, rank, true);
}

// ---- 2-D mesh (seed 001: all-to-all personalized on a mesh) ---------------------------------
// Ranks form the most square grid rows x cols = p (rank = row*cols + col; prime p: 1 x p).
// Phase 1, in every row: rank (R, C) sends to (R, C') all its blocks for column C' (rows
// blocks), as a shifted direct exchange over cols-1 rounds; blocks for itself go to out, the
// rest to scratch. Phase 2, in every column: rank (R, C) sends to (R', C) everything its row
// holds for (R', C) (cols blocks: its own from in, the others from scratch), rows-1 rounds,
// received straight into out. Rounds: (cols-1) + (rows-1). (The seed forwards along the
// ring within a row or column; in the fully connected model the direct exchange takes the
// same number of rounds and moves less.)
inline schedule build_mesh2d(const coll_args& a, int rank) {
  const layout L(a, rank);
  schedule s = start(a, rank, L);
  const grid g = most_square_grid(a.p);
  const int row = rank / g.cols, col = rank % g.cols;
  auto at = [&](int r, int c) { return r * g.cols + c; };
  // Scratch slot of the block from (row, c) to (r, col), c != col, r != row.
  std::vector<std::uint64_t> slot(static_cast<std::size_t>(a.p) + 1, 0);  // indexed c*rows + r
  auto index = [&](int c, int r) { return static_cast<std::size_t>(c) * g.rows + r; };
  for (int c = 0; c < g.cols; ++c)
    for (int r = 0; r < g.rows; ++r) {
      const bool kept = c != col && r != row;
      slot[index(c, r) + 1] = slot[index(c, r)] + (kept ? L.elements(at(row, c), at(r, col)) : 0);
    }
  const buffer_id tmp = s.scratch(slot[a.p]);
  auto kept_block = [&](int c, int r) {
    return region{tmp, slot[index(c, r)], slot[index(c, r) + 1] - slot[index(c, r)]};
  };

  for (int k = 1; k < g.cols; ++k) {
    s.next_round();
    const int c_to = mod(col + k, g.cols), c_from = mod(col - k, g.cols);
    region_list out, in;
    for (int r = 0; r < g.rows; ++r) {
      out.add(L.send_block(at(r, c_to)));
      in.add(r == row ? L.recv_block(at(row, c_from)) : kept_block(c_from, r));
    }
    send_list(s, at(row, c_to), out);
    recv_list(s, at(row, c_from), in);
  }
  for (int k = 1; k < g.rows; ++k) {
    s.next_round();
    const int r_to = mod(row + k, g.rows), r_from = mod(row - k, g.rows);
    region_list out, in;
    for (int c = 0; c < g.cols; ++c) {
      out.add(c == col ? L.send_block(at(r_to, col)) : kept_block(c, r_to));
      in.add(L.recv_block(at(r_from, c)));
    }
    send_list(s, at(r_to, col), out);
    recv_list(s, at(r_from, col), in);
  }
  return s;
}

// ---- costs (m = mean block in bytes) --------------------------------------------------------
inline double cost_direct(const coll_args& a, std::size_t e, const cost_model& m) {
  const double b = layout(a, 0).mean_block_bytes(e);
  return (a.p - 1) * (m.alpha + m.beta * b);
}
inline double cost_ring(const coll_args& a, std::size_t e, const cost_model& m) {
  const double b = layout(a, 0).mean_block_bytes(e);
  return (a.p - 1) * m.alpha + m.beta * b * a.p * (a.p - 1) / 2.0;
}
inline double cost_bruck(const coll_args& a, std::size_t e, const cost_model& m) {
  const double b = layout(a, 0).mean_block_bytes(e);
  const int steps = ceil_log2(static_cast<std::uint64_t>(a.p));
  return steps * (m.alpha + m.beta * b * a.p / 2.0);
}
inline double cost_mesh2d(const coll_args& a, std::size_t e, const cost_model& m) {
  const double b = layout(a, 0).mean_block_bytes(e);
  const grid g = most_square_grid(a.p);
  return (g.cols - 1) * (m.alpha + m.beta * b * g.rows) + (g.rows - 1) * (m.alpha + m.beta * b * g.cols);
}

}  // namespace ranklab::detail::alltoall
