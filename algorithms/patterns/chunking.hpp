// Cutting one buffer into pieces that travel separately:
// - chunking: p nearly equal chunks, one per root-relative rank, first scattered down the
//   binomial tree; the scatter half of the scatter + allgather ("improved") broadcast of the
//   5DV050 lecture "Algorithms for Collective Communication". Used by bcast scatter_allgather
//   and scatter_ring.
// - segmenting: S equal segments (the last one shorter) that follow each other through a
//   pipeline. Used by bcast chain and reduce chain.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "patterns/tree_rounds.hpp"
#include "patterns/trees_binary.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// Chunk i (owned by relative rank i) has count/p elements, plus one for the first count % p
// chunks; chunks are stored in order, so the chunks of a binomial subtree form one contiguous
// range. count < p leaves the last chunks empty; count 0 leaves all of them empty.
struct chunking {
  std::uint64_t count = 0;
  int p = 1;
  std::uint64_t offset(std::int64_t i) const {
    const std::uint64_t q = count / static_cast<std::uint64_t>(p), r = count % static_cast<std::uint64_t>(p);
    const auto u = static_cast<std::uint64_t>(i);
    return u * q + std::min(u, r);
  }
  // Chunks [first, first + n) without wrap-around (first + n <= p), as one region of out.
  region range(std::int64_t first, std::int64_t n) const {
    return region{out_buffer, offset(first), offset(first + n) - offset(first)};
  }
};

// Top-down binomial scatter of the chunks of a broadcast buffer held in the root's out buffer:
// ceil(log2 p) rounds, after which relative rank v holds the chunks of its whole subtree
// [v, v + subtree_size(v)) in its out buffer, at their final places.
inline void add_chunk_scatter(schedule& s, const chunking& ch, int v, int root) {
  const tree t{tree_shape::binomial, ch.p};
  add_tree_rounds(s, t, v, tree_order::down, rooted_at{root, ch.p}, [&](const tree_step& st) {
    const int top = st.sends ? st.peer : v;  // the subtree below this transfer
    return ch.range(top, t.subtree_size(top));
  });
}

// `count` elements in segments of `size` elements.
struct segmenting {
  std::uint64_t count = 0;
  std::uint64_t size = 1;
  std::int64_t segments() const {
    return static_cast<std::int64_t>(std::max<std::uint64_t>(1, (count + size - 1) / size));
  }
  region piece(buffer_id b, std::int64_t i) const {
    const std::uint64_t from = std::min(static_cast<std::uint64_t>(i) * size, count);
    return region{b, from, std::min(size, count - from)};
  }
};

// Elements per segment: the segment parameter when given, else `count` cut into
// round(ideal_segments) segments (the pipeline's choice from the cost model), clamped to
// 1 .. count. count 0 is one empty segment.
inline std::uint64_t segment_size(std::uint64_t count, std::uint64_t param, double ideal_segments) {
  if (count == 0) return 1;
  if (param > 0) return std::min(param, count);
  const auto segments = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::llround(ideal_segments)), 1, count);
  return (count + segments - 1) / segments;
}

// One rank's part of a pipelined tree broadcast of `seg`'s segments: segment i arrives from
// `parent` in round arrival[i] (parent < 0: the root, which holds them all), and goes to each
// of the rank's `children` children (child c is rank child_rank(c)) as early as it can, one
// message per round, segment after segment, children in order (forward_rounds). Used by
// bcast kary, pipelined_binary_tree, chain_fanout and knomial_segmented.
template <class ChildRank>
void pipelined_tree_rounds(schedule& s, const segmenting& seg, int parent, const std::vector<std::int64_t>& arrival,
                           int children, ChildRank child_rank) {
  const std::vector<std::int64_t> sends = forward_rounds(arrival, children);
  std::size_t r = parent < 0 ? arrival.size() : 0, q = 0;
  while (r < arrival.size() || q < sends.size()) {  // both ascend by round: merge them
    const std::int64_t tr = r < arrival.size() ? arrival[r] : INT64_MAX;
    const std::int64_t tq = q < sends.size() ? sends[q] : INT64_MAX;
    const std::int64_t now = std::min(tr, tq);
    open_rounds(s, now + 1);
    if (tq == now) {
      const auto i = static_cast<std::int64_t>(q / static_cast<std::size_t>(children));
      s.send(child_rank(static_cast<int>(q % static_cast<std::size_t>(children))), seg.piece(out_buffer, i));
      ++q;
    }
    if (tr == now) {
      s.recv(parent, seg.piece(out_buffer, static_cast<std::int64_t>(r)));
      ++r;
    }
  }
}

}  // namespace ranklab::detail
