// Helpers shared by the broadcast, scatter(v) and gather(v) builders: the top-down binomial
// scatter tree over root-relative ranks, the split of a broadcast buffer into p chunks, region
// lists, and the generic linear/binomial scatter and gather schedules (the plain and the v
// collectives differ only in block_count()/block_offset()).
//
// Binomial scatter tree (MPICH's, and seed 003's Figures 1-2): with L = ceil(log2 p) rounds,
// round j uses mask = 2^(L-1-j); a relative rank v with v % (2 mask) == 0 that has the data
// sends the chunks of v + mask's subtree to v + mask. The parent of v is v - lowbit(v), v's
// subtree is the contiguous range [v, v + subtree_size(v)) with subtree_size(v) =
// min(lowbit(v), p - v) (p for the root), and v has popcount(v) proper ancestors.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "ranklab/collective.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// ---- binomial scatter tree over relative ranks ---------------------------------------------
inline std::int64_t lowbit(std::int64_t v) { return v & -v; }

// Number of relative ranks in v's subtree of the top-down binomial scatter tree.
inline int scatter_subtree_size(int v, int p) {
  if (v == 0) return p;
  return static_cast<int>(std::min<std::int64_t>(lowbit(v), p - v));
}

// ---- a broadcast buffer split into p chunks -------------------------------------------------
// Chunk i (owned by relative rank i) has count/p elements, plus one for the first count % p
// chunks; chunks are stored in order, so the chunks of a subtree form one contiguous range.
// count < p leaves the last chunks empty; count 0 leaves all of them empty.
struct chunking {
  std::uint64_t count = 0;
  int p = 1;
  std::uint64_t offset(std::int64_t i) const {
    const std::uint64_t q = count / static_cast<std::uint64_t>(p), r = count % static_cast<std::uint64_t>(p);
    const auto u = static_cast<std::uint64_t>(i);
    return u * q + std::min(u, r);
  }
  std::uint64_t size(std::int64_t i) const { return offset(i + 1) - offset(i); }
  // Chunks [first, first + n) without wrap-around (first + n <= p), as one region of out.
  region range(std::int64_t first, std::int64_t n) const {
    return region{out_buffer, offset(first), offset(first + n) - offset(first)};
  }
};

// Chunks [first, first + n) modulo p of a chunked out buffer (at most two pieces).
inline void add_chunks(region_list& l, const chunking& ch, std::int64_t first, std::int64_t n) {
  first = mod(first, ch.p);
  const std::int64_t head = std::min<std::int64_t>(n, ch.p - first);
  l.add(ch.range(first, head));
  if (n > head) l.add(ch.range(0, n - head));
}

inline region_list single(region r) {
  region_list l;
  l.add(r);
  return l;
}

// Top-down binomial scatter of the chunks of a broadcast buffer held in the root's out buffer:
// ceil(log2 p) rounds, after which relative rank v holds the chunks of its whole subtree
// [v, v + scatter_subtree_size(v)) in its out buffer (at their final places).
inline void add_chunk_scatter(schedule& s, const chunking& ch, int v, int root) {
  const int p = ch.p;
  const int rounds = ceil_log2(static_cast<std::uint64_t>(p));
  for (int j = 0; j < rounds; ++j) {
    const std::int64_t mask = std::int64_t{1} << (rounds - 1 - j);
    s.next_round();
    if (v % (2 * mask) == 0 && v + mask < p) {
      const auto child = static_cast<int>(v + mask);
      s.send(absolute(child, root, p), ch.range(child, scatter_subtree_size(child, p)));
    } else if (v % (2 * mask) == mask) {
      s.recv(absolute(static_cast<int>(v - mask), root, p), ch.range(v, scatter_subtree_size(v, p)));
    }
  }
}

// Ring allgather of the chunks after add_chunk_scatter: p - 1 steps; in step t relative rank
// v passes chunk (v - t) mod p to v + 1 and takes chunk (v - 1 - t) mod p from v - 1.
// Native (MPICH): every chunk goes to every rank, p(p - 1) chunk transfers. Tuned (seed 003):
// a transfer happens only when the receiver lacks the chunk, i.e. the chunk lies outside
// the receiver's scatter subtree; both ends know the subtrees, so the sender skips exactly
// the transfers the receiver skips. A rank forwards in step t the chunk it received in step
// t - 1 (or its own in step 0); it has it in the tuned ring too, because a chunk it did not
// receive lies in its own subtree.
inline bool in_scatter_subtree(std::int64_t chunk, int v, int p) {
  return chunk >= v && chunk < v + scatter_subtree_size(v, p);
}

inline void add_chunk_ring(schedule& s, const chunking& ch, int v, int root, bool only_missing) {
  const int p = ch.p;
  if (p == 1) return;
  const int next = (v + 1) % p, prev = (v - 1 + p) % p;
  for (int t = 0; t + 1 < p; ++t) {
    s.next_round();
    const int out_chunk = mod(v - t, p), in_chunk = mod(v - 1 - t, p);
    if (!only_missing || !in_scatter_subtree(out_chunk, next, p))
      s.send(absolute(next, root, p), ch.range(out_chunk, 1));
    if (!only_missing || !in_scatter_subtree(in_chunk, v, p))
      s.recv(absolute(prev, root, p), ch.range(in_chunk, 1));
  }
}

// ---- scatter(v) / gather(v) ------------------------------------------------------------------
// Rank blocks seen from the root: relative rank w's block in the root's layout.
struct rooted_blocks {
  const coll_args& a;
  int abs(std::int64_t w) const { return absolute(static_cast<int>(w), a.root, a.p); }
  std::uint64_t count(std::int64_t w) const { return block_count(a, abs(w)); }
  std::uint64_t offset(std::int64_t w) const { return block_offset(a, abs(w)); }
  region in_root(std::int64_t w) const { return region{in_buffer, offset(w), count(w)}; }
  region out_root(std::int64_t w) const { return region{out_buffer, offset(w), count(w)}; }
};

// A non-root rank v of the binomial tree keeps the blocks of its descendants v+1 .. v+n-1
// packed in relative order in one scratch buffer; place(w) is block w's offset there.
struct subtree_stage {
  std::vector<std::uint64_t> starts;  // starts[i]: offset of block v+1+i; starts.back(): total
  int v = 0;
  buffer_id buffer = out_buffer;
  subtree_stage(schedule& s, const rooted_blocks& b, int v_, int n) : v(v_) {
    starts.push_back(0);
    for (int i = 1; i < n; ++i) starts.push_back(starts.back() + b.count(v + i));
    if (starts.back() > 0) buffer = s.scratch(starts.back());
  }
  std::uint64_t total() const { return starts.back(); }
  // Blocks [w, w + n) (all inside v's proper subtree) as one scratch region.
  region blocks(std::int64_t w, std::int64_t n) const {
    const std::uint64_t from = starts[static_cast<std::size_t>(w - v - 1)];
    const std::uint64_t to = starts[static_cast<std::size_t>(w - v - 1 + n)];
    return region{buffer, from, to - from};
  }
  region all() const { return region{buffer, 0, total()}; }
};

// Scatter / scatterv, root sends every block itself: p - 1 rounds.
inline schedule linear_scatter(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const rooted_blocks b{a};
  const int v = relative(rank, a.root, a.p);
  if (v == 0) s.copy(b.in_root(0), region{out_buffer, 0, b.count(0)});
  for (int w = 1; w < a.p; ++w) {
    s.next_round();
    if (v == 0) send_list(s, b.abs(w), single(b.in_root(w)));
    else if (v == w) recv_list(s, a.root, single(region{out_buffer, 0, b.count(v)}));
  }
  s.trim();
  return s;
}

// Gather / gatherv, root receives every block itself: p - 1 rounds.
inline schedule linear_gather(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const rooted_blocks b{a};
  const int v = relative(rank, a.root, a.p);
  if (v == 0) s.copy(region{in_buffer, 0, b.count(0)}, b.out_root(0));
  for (int w = 1; w < a.p; ++w) {
    s.next_round();
    if (v == 0) recv_list(s, b.abs(w), single(b.out_root(w)));
    else if (v == w) send_list(s, a.root, single(region{in_buffer, 0, b.count(v)}));
  }
  s.trim();
  return s;
}

// Scatter / scatterv along the top-down binomial tree: ceil(log2 p) rounds. The root sends
// straight from its send buffer (one message = the subtree's blocks, up to two pieces when
// packed); an inner rank receives its own block into out and its descendants' into scratch.
inline schedule binomial_scatter(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const rooted_blocks b{a};
  const int p = a.p;
  const int v = relative(rank, a.root, p);
  const int n = scatter_subtree_size(v, p);
  const subtree_stage stage = v == 0 ? subtree_stage(s, b, 0, 1) : subtree_stage(s, b, v, n);
  if (v == 0) s.copy(b.in_root(0), region{out_buffer, 0, b.count(0)});
  const int rounds = ceil_log2(static_cast<std::uint64_t>(p));
  for (int j = 0; j < rounds; ++j) {
    const std::int64_t mask = std::int64_t{1} << (rounds - 1 - j);
    s.next_round();
    if (v % (2 * mask) == 0 && v + mask < p) {
      const std::int64_t child = v + mask;
      const int m = scatter_subtree_size(static_cast<int>(child), p);
      region_list msg;
      if (v == 0)
        for (std::int64_t w = child; w < child + m; ++w) msg.add(b.in_root(w));
      else
        msg.add(stage.blocks(child, m));
      send_list(s, b.abs(child), msg);
    } else if (v % (2 * mask) == mask) {
      region_list msg;
      msg.add(region{out_buffer, 0, b.count(v)});
      msg.add(stage.all());
      recv_list(s, b.abs(v - mask), msg);
    }
  }
  return s;
}

// Gather / gatherv along the same tree, bottom-up: ceil(log2 p) rounds. The root receives
// straight into its receive buffer; an inner rank sends its own block from its send buffer
// and its descendants' from scratch in one message.
inline schedule binomial_gather(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const rooted_blocks b{a};
  const int p = a.p;
  const int v = relative(rank, a.root, p);
  const int n = scatter_subtree_size(v, p);
  const subtree_stage stage = v == 0 ? subtree_stage(s, b, 0, 1) : subtree_stage(s, b, v, n);
  if (v == 0) s.copy(region{in_buffer, 0, b.count(0)}, b.out_root(0));
  const int rounds = ceil_log2(static_cast<std::uint64_t>(p));
  for (int j = 0; j < rounds; ++j) {
    const std::int64_t mask = std::int64_t{1} << j;
    s.next_round();
    if (v % (2 * mask) == mask) {
      region_list msg;
      msg.add(region{in_buffer, 0, b.count(v)});
      msg.add(stage.all());
      send_list(s, b.abs(v - mask), msg);
    } else if (v % (2 * mask) == 0 && v + mask < p) {
      const std::int64_t child = v + mask;
      const int m = scatter_subtree_size(static_cast<int>(child), p);
      region_list msg;
      if (v == 0)
        for (std::int64_t w = child; w < child + m; ++w) msg.add(b.out_root(w));
      else
        msg.add(stage.blocks(child, m));
      recv_list(s, b.abs(child), msg);
    }
  }
  return s;
}

}  // namespace ranklab::detail
