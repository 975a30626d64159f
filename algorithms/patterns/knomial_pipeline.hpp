// The pipelined k-nomial tree of MPICH's segmented bcast and reduce: bcast knomial's tree
// (tree_knomial.hpp) with the buffer cut into S segments that follow each other down it, each
// rank forwarding a segment to its children in child order, one message per round, as early
// as it can (trees_binary.hpp's forward_rounds). The reduce runs the same rounds backwards.
// Used by bcast knomial_segmented and reduce knomial_segmented.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "patterns/chunking.hpp"
#include "patterns/tree_knomial.hpp"
#include "patterns/trees_binary.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::detail {

struct knomial_pipeline {
  knomial_tree tree;
  std::int64_t fanout;  // C: the root's children, also the rounds of one segment
  segmenting seg;

  // S C rounds in all (p >= 2): every rank forwards a segment before the next one arrives.
  std::int64_t rounds() const { return tree.p <= 1 ? 0 : seg.segments() * fanout; }

  // The broadcast rounds in which relative rank v receives segments 0 .. S-1 (all -1 for the
  // root, which holds them before the call), followed along the path from the root to v.
  std::vector<std::int64_t> arrival(std::int64_t v) const {
    std::vector<std::int64_t> path;
    for (std::int64_t u = v; u != 0; u = tree.parent(u)) path.push_back(u);
    std::reverse(path.begin(), path.end());
    std::vector<std::int64_t> at(static_cast<std::size_t>(seg.segments()), -1);
    std::int64_t above = 0;
    for (const std::int64_t u : path) {
      const std::vector<std::int64_t> kids = tree.children(above);
      const auto index = std::find(kids.begin(), kids.end(), u) - kids.begin();
      at = child_arrival(at, static_cast<int>(kids.size()), static_cast<int>(index));
      above = u;
    }
    return at;
  }
};

// The pipeline of a call: radix algo_params::radix (default 4; at least 2), segments of
// algo_params::segment elements (default one segment). `op` names the collective in errors.
inline knomial_pipeline knomial_pipeline_of(const coll_args& a, int rank, const char* op) {
  const int k = a.params.radix == 0 ? default_knomial_radix : a.params.radix;
  if (k < 2) throw usage_error(rank, op, fmt::format("knomial_segmented: radix {} (need at least 2)", k));
  knomial_tree t(a.p, k);
  const auto fanout = static_cast<std::int64_t>(t.children(0).size());
  segmenting seg{a.count, segment_size(a.count, a.params.segment, 1.0)};
  return knomial_pipeline{std::move(t), fanout, seg};
}

}  // namespace ranklab::detail
