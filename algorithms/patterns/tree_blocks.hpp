// Scatter(v) and gather(v) along a tree (patterns/tree_rounds.hpp): every rank's block moves
// between the root's buffer and the rank, down the tree for scatter and up it for gather.
// The two collectives make the same transfers in opposite directions, and the plain and the v
// collectives differ only in block_count() / block_offset(), so one builder serves scatter,
// scatterv, gather and gatherv, linear (flat tree) and binomial.
//
// With the flat tree the root exchanges each block with its owner. In the binomial tree the
// subtree of relative rank v is the contiguous range [v, v + subtree_size(v)), so a transfer
// between v and its parent carries v's block and those of its descendants as one message: v
// keeps its descendants' blocks packed in relative order in one scratch buffer, the root
// reads or writes the blocks in place in its own buffer (several pieces when they are not
// adjacent there).
#pragma once
#include <cstdint>
#include <vector>

#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"
#include "patterns/tree_rounds.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// Rank blocks seen from the root: relative rank w's block in the root's layout.
struct rooted_blocks {
  const coll_args& a;
  int abs(std::int64_t w) const { return absolute(static_cast<int>(w), a.root, a.p); }
  std::uint64_t count(std::int64_t w) const { return block_count(a, abs(w)); }
  std::uint64_t offset(std::int64_t w) const { return block_offset(a, abs(w)); }
};

// The blocks of a non-root rank v's descendants v+1 .. v+n-1, packed in relative order in one
// scratch buffer (none when they are all empty).
struct subtree_stage {
  std::vector<std::uint64_t> starts;  // starts[i]: offset of block v+1+i; starts.back(): total
  int v = 0;
  buffer_id buffer = out_buffer;
  subtree_stage(schedule& s, const rooted_blocks& b, int v_, int n) : v(v_) {
    starts.push_back(0);
    for (int i = 1; i < n; ++i) starts.push_back(starts.back() + b.count(v + i));
    if (starts.back() > 0) buffer = s.scratch(starts.back());
  }
  // Blocks [w, w + n) (all inside v's proper subtree) as one scratch region.
  region blocks(std::int64_t w, std::int64_t n) const {
    const std::uint64_t from = starts[static_cast<std::size_t>(w - v - 1)];
    const std::uint64_t to = starts[static_cast<std::size_t>(w - v - 1 + n)];
    return region{buffer, from, to - from};
  }
  region all() const { return region{buffer, 0, starts.back()}; }
};

// Scatter(v) (order down) or gather(v) (order up) along tree `shape`: rounds as the tree has.
inline schedule tree_blocks(const coll_args& a, int rank, tree_shape shape, tree_order order) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const rooted_blocks b{a};
  const tree t{shape, a.p};
  const int v = relative(rank, a.root, a.p);
  const subtree_stage stage(s, b, v, v == 0 ? 1 : t.subtree_size(v));
  // The root's p blocks, and the rank's own block (at offset 0 of its receive or send buffer).
  const buffer_id root_buffer = order == tree_order::down ? in_buffer : out_buffer;
  const region own{order == tree_order::down ? out_buffer : in_buffer, 0, b.count(v)};
  auto root_block = [&](std::int64_t w) { return region{root_buffer, b.offset(w), b.count(w)}; };
  if (v == 0) {
    if (order == tree_order::down)
      s.copy(root_block(0), own);
    else
      s.copy(own, root_block(0));
  }
  add_tree_rounds(s, t, v, order, rooted_at{a.root, a.p}, [&](const tree_step& st) {
    region_list msg;
    if (st.peer < v) {  // with the parent: this rank's subtree
      msg.add(own);
      msg.add(stage.all());
    } else if (v == 0) {  // the root with a child: the child's subtree, in place
      for (std::int64_t w = st.peer; w < st.peer + t.subtree_size(st.peer); ++w) msg.add(root_block(w));
    } else {
      msg.add(stage.blocks(st.peer, t.subtree_size(st.peer)));
    }
    return msg;
  });
  if (shape == tree_shape::flat) s.trim();
  return s;
}

// Scatter(v) and gather(v) cost: `rounds` messages in sequence at the root, and every block
// but the root's own through the root's port.
inline double tree_blocks_cost(const coll_args& a, std::size_t elem, const cost_model& m, int rounds) {
  const auto moved = static_cast<double>((total_count(a) - block_count(a, a.root)) * elem);
  return static_cast<double>(rounds) * m.alpha + m.beta * moved;
}

}  // namespace ranklab::detail
