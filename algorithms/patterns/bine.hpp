// Bine (binomial negabinary) trees and butterflies (D. De Sensi, S. Pasqualoni, L. Piarulli,
// T. Bonato, S. Ba, M. Turisini, J. Domke, T. Hoefler, "Bine Trees: Enhancing Collective
// Operations by Optimizing Communication Locality", SC 2025, arXiv 2508.17311), the rank
// arithmetic shared by the algorithms/<collective>/bine.cpp builders. See docs/algorithms.md.
//
// Negabinary: an s-bit pattern b stands for sum_i b_i (-2)^i; the 2^s patterns of s bits
// take 2^s consecutive values, so every residue mod 2^s has exactly one s-bit pattern
// (bine_nb). Flipping the low m bits of a pattern whose low m bits are all equal moves its
// value by +-rho(m-1), rho(t) = sum_{i<=t} (-2)^i = 1, -1, 3, -5, 11, ... (Swing's distances,
// patterns/swing.hpp).
//
// Trees (bcast, scatter; reversed: reduce, gather), on q = 2^s ranks, relative rank v
// (v = r - root mod q), x = bine_nb(v): in step i = 0 .. s-1 the peer is the rank whose
// pattern is x with its low s-i bits flipped (distance |rho(s-1-i)|: halving). A rank
// receives in the first step i whose low s-i bits of x are all equal (0..0 or 1..1) and sends
// in every later step; the root (x = 0) sends in every step. Depth s, every edge of length
// |rho(t)| for some t. The subtree of a rank received in step i is {w : bine_nb(w) agrees
// with x above bit s-i-2}: 2^(s-i-1) ranks.
//
// Butterflies (reduce-scatter, allgather, allreduce): step k = 0 .. s-1 pairs r with
// swing_peer(r, k, q) = r +- rho(k) (+ for even r), distance doubling. Blocks are relabelled
// by nu(r) = bit_reverse_s(gray(bine_nb(r odd ? r : -r))): after reduce-scatter step k rank r
// holds the 2^(s-1-k) blocks whose label agrees with nu(r) in the top k+1 bits, a contiguous
// range of labels, and its peer the neighbouring range (bine_butterfly_consistent checks it).
//
// Other p: the rank counts the builders serve are folded to q = the largest power of two
// <= p (patterns/folding.hpp): ranks 2i, 2i+1 (i < p - q) pair up and one of them stands for
// both in the Bine steps; one extra round before (reductions, gathers) or after (broadcasts,
// scatters). The authors' code (github.com/HLC-Lab/bine-trees, github.com/HLC-Lab/pico
// libbine) folds the same way in its latency-optimal allreduce and takes only powers of two
// in its trees and its bandwidth-optimal butterflies.
#pragma once
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "patterns/folding.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/swing.hpp"

namespace ranklab::detail {

inline constexpr std::uint64_t bine_alt_mask = 0xAAAAAAAAAAAAAAAAull;

// s-bit negabinary pattern of v mod 2^s (s <= 30).
inline std::uint32_t bine_nb(std::int64_t v, int s) {
  const std::uint64_t q = std::uint64_t{1} << s;
  const std::uint64_t x = static_cast<std::uint64_t>(
      ((v % static_cast<std::int64_t>(q)) + static_cast<std::int64_t>(q)) % static_cast<std::int64_t>(q));
  return static_cast<std::uint32_t>(((bine_alt_mask + x) ^ bine_alt_mask) & (q - 1));
}

// The value of a negabinary pattern.
inline std::int64_t bine_nb_value(std::uint32_t bits) {
  return static_cast<std::int64_t>((bine_alt_mask ^ std::uint64_t{bits}) - bine_alt_mask);
}

inline std::uint32_t bine_low_mask(int m) {
  return m <= 0 ? 0u : static_cast<std::uint32_t>((std::uint64_t{1} << m) - 1);
}

// The tree on q = 2^s ranks, relative ranks 0 .. q-1 (0 the root).
struct bine_tree {
  int q = 1, s = 0;
  explicit bine_tree(int q_) : q(q_), s(q_ <= 1 ? 0 : std::bit_width(static_cast<unsigned>(q_)) - 1) {
    if (q_ < 1 || (q_ & (q_ - 1)) != 0) throw std::logic_error("bine_tree: q must be a power of two");
  }
  // The step in which v receives; -1 for the root.
  int recv_step(int v) const {
    if (v == 0) return -1;
    const std::uint32_t x = bine_nb(v, s);
    for (int i = 0; i < s; ++i) {
      const std::uint32_t m = bine_low_mask(s - i), low = x & m;
      if (low == 0 || low == m) return i;
    }
    throw std::logic_error("bine_tree: no receive step");
  }
  // v's peer in step i (its parent if i == recv_step(v), its child if i is later).
  int peer(int v, int i) const { return mod(bine_nb_value(bine_nb(v, s) ^ bine_low_mask(s - i)), q); }
  int parent(int v) const { return v == 0 ? -1 : peer(v, recv_step(v)); }
  // The relative ranks of v's subtree (v first).
  std::vector<int> subtree(int v) const {
    const int free_bits = v == 0 ? s : s - recv_step(v) - 1;
    const std::uint32_t x = bine_nb(v, s), high = x & ~bine_low_mask(free_bits);
    std::vector<int> out{v};
    for (std::uint32_t low = 0; low < (std::uint32_t{1} << free_bits); ++low) {
      const int w = mod(bine_nb_value(high | low), q);
      if (w != v) out.push_back(w);
    }
    return out;
  }
};

// A tree collective's ranks folded to q = floor_pow2(p) (the root's pair keeps the root), and
// relabelled relative to the root among the q survivors.
struct bine_tree_plan {
  fold_plan f;
  bine_tree t;
  int root_new = 0;

  bine_tree_plan(int p, int root)
      : f(p, (root < 2 * (p - static_cast<int>(floor_pow2(static_cast<std::uint64_t>(p)))) && root % 2 == 0) ? root / 2
                                                                                                             : -1),
        t(f.pof2),
        root_new(f.newrank(root)) {}

  // rank's relative rank among the survivors, or -1 for a rank folded away.
  int rel(int rank) const {
    const int v = f.newrank(rank);
    return v < 0 ? -1 : mod(v - root_new, f.pof2);
  }
  // The real rank of relative survivor w.
  int real(int w) const { return f.real(mod(w + root_new, f.pof2)); }
  // The real ranks relative survivor w stands for (itself and its folded-away partner).
  std::vector<int> members(int w) const {
    const int v = mod(w + root_new, f.pof2);
    std::vector<int> out;
    for (int r = f.first_rank(v); r <= f.last_rank(v); ++r) out.push_back(r);
    return out;
  }
  // The real ranks of w's subtree, ascending.
  std::vector<int> subtree_ranks(int w) const {
    std::vector<char> in(static_cast<std::size_t>(f.p), 0);
    for (int x : t.subtree(w))
      for (int r : members(x)) in[static_cast<std::size_t>(r)] = 1;
    std::vector<int> out;
    for (int r = 0; r < f.p; ++r)
      if (in[static_cast<std::size_t>(r)]) out.push_back(r);
    return out;
  }
  int rounds() const { return t.s + (f.rem > 0 ? 1 : 0); }
};

// ---- butterflies -------------------------------------------------------------------------

inline std::uint32_t bine_bit_reverse(std::uint32_t x, int s) {
  std::uint32_t y = 0;
  for (int i = 0; i < s; ++i)
    if (x & (std::uint32_t{1} << i)) y |= std::uint32_t{1} << (s - 1 - i);
  return y;
}

// nu(r): the block label of rank r among q = 2^s butterfly ranks.
inline std::uint32_t bine_nu(int r, int s) {
  const std::uint32_t x = bine_nb(r % 2 != 0 ? std::int64_t{r} : -std::int64_t{r}, s);
  return bine_bit_reverse(x ^ (x >> 1), s);
}

inline int bine_butterfly_peer(int r, int k, int q) { return swing_peer(r, k, q); }

// The labels rank r holds after reduce-scatter step k (= before allgather step k):
// [first, first + count).
struct bine_label_range {
  int first = 0, count = 0;
};
inline bine_label_range bine_kept(int r, int k, int s) {
  const int width = s - 1 - k;
  const std::uint32_t first = bine_nu(r, s) & ~bine_low_mask(width);
  return {static_cast<int>(first), 1 << width};
}

// Rank r and its step-k peer split r's labels before step k into two halves.
inline bool bine_butterfly_consistent(int r, int k, int q) {
  const int s = swing_steps(q), width = s - 1 - k;
  const int peer = bine_butterfly_peer(r, k, q);
  if (bine_butterfly_peer(peer, k, q) != r) return false;
  return (bine_nu(peer, s) >> width) == ((bine_nu(r, s) >> width) ^ 1u);
}

// The ranks labelled [range.first, range.first + range.count), as a list (label order).
inline std::vector<int> bine_ranks_of(bine_label_range range, int q) {
  const int s = swing_steps(q);
  std::vector<int> by_label(static_cast<std::size_t>(q));
  for (int r = 0; r < q; ++r) by_label[bine_nu(r, s)] = r;
  return {by_label.begin() + range.first, by_label.begin() + range.first + range.count};
}

}  // namespace ranklab::detail
