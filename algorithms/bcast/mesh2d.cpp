// Broadcast on a 2-D mesh (the 5DV050 lecture "Algorithms for Collective Communication": "use
// the ring algorithm on the root's mesh row, then on all mesh columns in parallel"; the ring
// algorithm there is the log-step doubling broadcast, the same on ring, mesh and hypercube).
// Root-relative ranks v are laid out row-major on a grid of c = ceil(p / r) columns,
// r = floor(sqrt p) (so r c >= p); rows = ceil(p / c) <= r, the last row may be incomplete.
// Phase 1: binomial broadcast along row 0 (the root's row) over its min(c, p) columns.
// Phase 2: binomial broadcast down every column x in parallel, over the ceil((p - x) / c)
// rows that have column x. Both phases use the doubling tree, as bcast binomial does.
// Rounds: ceil(log2 min(c, p)) + ceil(log2 rows), = log2 p when p is a power of four.
// Cost: rounds (alpha + beta m).
#include <algorithm>
#include <cmath>

#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

struct grid {
  int cols = 1, rows = 1;
  explicit grid(int p) {
    int r = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(p))));
    while (static_cast<std::int64_t>(r) * r > p) --r;  // floor(sqrt p) despite rounding
    while (static_cast<std::int64_t>(r + 1) * (r + 1) <= p) ++r;
    cols = (p + r - 1) / r;
    rows = (p + cols - 1) / cols;
  }
};

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const grid g(a.p);
  const int v = detail::relative(rank, a.root, a.p);
  const int row = v / g.cols, col = v % g.cols;
  const region all{out_buffer, 0, a.count};
  const detail::tree row0{detail::tree_shape::doubling, std::min(g.cols, a.p)};
  const detail::tree column{detail::tree_shape::doubling, (a.p - col + g.cols - 1) / g.cols};
  auto in_column = [&](int r) { return detail::absolute(r * g.cols + col, a.root, a.p); };
  if (row == 0) detail::add_tree_rounds(s, row0, col, detail::tree_order::down, detail::rooted_at{a.root, a.p}, all);
  detail::open_rounds(s, row0.rounds());  // the other rows wait for row 0
  detail::add_tree_rounds(s, column, row, detail::tree_order::down, in_column, all);
  s.trim();
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const grid g(a.p);
  const int rounds = detail::ceil_log2(static_cast<std::uint64_t>(std::min(g.cols, a.p))) +
                     detail::ceil_log2(static_cast<std::uint64_t>(g.rows));
  return rounds * (m.alpha + m.beta * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "mesh2d",
    .coll = collective::bcast,
    .summary =
        "2-D mesh, r = floor(sqrt p) x c = ceil(p/r): binomial along the root's row, then down all columns: "
        "ceil(log2 c) + ceil(log2 rows) rounds, rounds(alpha + beta m)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
