// The halving circulant of J. L. Träff, "Optimal, Non-pipelined Reduce-scatter and Allreduce
// Algorithms" (arXiv 2410.14234, 2024): the skips s_0 = p, s_{k+1} = ceil(s_k / 2), down to
// s_q = 1 after q = ceil(log2 p) halvings, and which blocks travel in each round.
//
// Rank r names block (r + j) mod p by its relative index j. Before round k of the
// reduce-scatter, r holds partials for the relative indices 0 .. s_k - 1; in round k
// (skip h = s_{k+1}) it hands the upper part j = h .. s_k - 1 to r + h, where they are the
// indices 0 .. s_k - h - 1, and combines what r - h hands it into its own indices
// 0 .. s_k - h - 1. Afterwards it keeps 0 .. h - 1. Every round moves floor(s_k / 2) blocks,
// so each rank sends, receives and combines sum_k (s_k - s_{k+1}) = p - 1 blocks in all.
// A contribution of rank x to block b starts at relative index t = b - x (mod p) and moves
// whenever its index is >= h, losing h: a greedy decomposition of t into skips, so it ends
// at index 0 of rank b exactly once (no contribution is counted twice or lost).
// The allgather runs the rounds backwards: in round k, r sends 0 .. s_k - h - 1 to r - h and
// receives h .. s_k - 1 from r + h. The alltoall moves every element along the same route,
// without combining.
//
// Pure arithmetic: no schedule is built here. Used by reduce_scatter, allreduce and
// alltoall circulant_halving. See docs/algorithms.md, "reduce_scatter".
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace ranklab::detail {

// One round of the halving circulant: `size` = s_k relative indices are live before it,
// `skip` = s_{k+1} = ceil(s_k / 2) of them after it; partners are r + skip and r - skip.
struct halving_round {
  int size = 1;
  int skip = 1;
  int moved() const { return size - skip; }  // floor(s_k / 2): blocks sent in this round
};

// The rounds for p ranks, k = 0 .. q-1, q = ceil(log2 p) (none for p = 1).
inline std::vector<halving_round> halving_rounds(int p) {
  std::vector<halving_round> r;
  for (int s = p; s > 1; s = (s + 1) / 2) r.push_back(halving_round{s, (s + 1) / 2});
  return r;
}

inline int cyclic(long long a, int p) { return static_cast<int>(((a % p) + p) % p); }

// The absolute blocks (r + j) mod p for relative indices j = lo .. hi-1, in that order.
inline std::vector<int> relative_blocks(int r, int lo, int hi, int p) {
  std::vector<int> b;
  b.reserve(static_cast<std::size_t>(std::max(0, hi - lo)));
  for (int j = lo; j < hi; ++j) b.push_back(cyclic(static_cast<long long>(r) + j, p));
  return b;
}

// Relative index of distance t (= destination - source mod p) before round k (k = 0 .. q).
inline int halving_position(const std::vector<halving_round>& rounds, int t, int k) {
  for (int i = 0; i < k; ++i)
    if (t >= rounds[static_cast<std::size_t>(i)].skip) t -= rounds[static_cast<std::size_t>(i)].skip;
  return t;
}

// The largest sum of `len` cyclically consecutive entries of `counts` (0 for len <= 0): the
// most elements any rank sends in a round that moves `len` consecutive relative blocks.
inline std::uint64_t max_cyclic_window(const std::vector<std::uint64_t>& counts, int len) {
  const int p = static_cast<int>(counts.size());
  if (len <= 0 || p == 0) return 0;
  std::uint64_t w = 0;
  for (int j = 0; j < len; ++j) w += counts[static_cast<std::size_t>(j % p)];
  std::uint64_t best = w;
  for (int r = 1; r < p; ++r) {
    w += counts[static_cast<std::size_t>((r + len - 1) % p)];
    w -= counts[static_cast<std::size_t>(r - 1)];
    best = std::max(best, w);
  }
  return best;
}

}  // namespace ranklab::detail
