// Binary trees of Open MPI coll/base and the one-ported pipeline down them.
// - ompi_bintree: the fanout-2 tree of Open MPI's ompi_coll_base_topo_build_tree on
//   root-relative ranks. Level l holds the ranks [2^l - 1, 2^(l+1) - 1); a rank at level l
//   has the children v + 2^l (child 0) and v + 2^(l+1) (child 1) when they are < p. A rank's
//   position inside its level, written in binary, lists the child indices on its path from
//   the root (bit l: which child was taken at level l).
// - tree_pipeline: segments flowing down any tree one-ported. A rank forwards each segment to
//   its children in child order, one message per round, segment after segment, each as early
//   as it can (the round after the segment arrived, the round after its previous send).
//   Used by bcast pipelined_binary_tree and split_binary_tree.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace ranklab::detail {

struct ompi_bintree {
  int p = 1;
  static int level(int v) { return std::bit_width(static_cast<unsigned>(v) + 1) - 1; }
  // child c (0 or 1) of v, or -1
  int child(int v, int c) const {
    const std::int64_t ch = static_cast<std::int64_t>(v) + (std::int64_t{1} << level(v)) * (c + 1);
    return ch < p ? static_cast<int>(ch) : -1;
  }
  int children(int v) const { return (child(v, 0) >= 0) + (child(v, 1) >= 0); }
  // -1 for the root
  static int parent(int v) {
    if (v == 0) return -1;
    const int l = level(v);
    const int j = v - ((1 << l) - 1);  // position in the level
    const int half = 1 << (l - 1);
    return half - 1 + j % half;
  }
  // which child of its parent v is (0 or 1)
  static int child_index(int v) {
    const int l = level(v);
    return (v - ((1 << l) - 1)) >> (l - 1);
  }
};

// Rounds in which a rank whose segments arrive at `arrival` (ascending; -1: held before the
// call) sends each segment to its `children` children: result[i * children + c] is the round
// of segment i to child c.
inline std::vector<std::int64_t> forward_rounds(const std::vector<std::int64_t>& arrival, int children) {
  std::vector<std::int64_t> out;
  out.reserve(arrival.size() * static_cast<std::size_t>(children));
  std::int64_t last = -1;
  for (std::int64_t a : arrival)
    for (int c = 0; c < children; ++c) {
      last = std::max(last + 1, a + 1);
      out.push_back(last);
    }
  return out;
}

// The rounds in which child c receives its segments, from its parent's arrival rounds.
inline std::vector<std::int64_t> child_arrival(const std::vector<std::int64_t>& arrival, int children, int c) {
  const std::vector<std::int64_t> f = forward_rounds(arrival, children);
  std::vector<std::int64_t> out(arrival.size());
  for (std::size_t i = 0; i < arrival.size(); ++i) out[i] = f[i * static_cast<std::size_t>(children) + c];
  return out;
}

}  // namespace ranklab::detail
