// Alltoall and alltoallv, 2-D mesh (the 5DV050 lecture "Algorithms for Collective
// Communication": all-to-all personalized on a mesh): ranks form the most square grid
// rows x cols = p (rank = row*cols + col; prime p: 1 x p). Phase 1, in every row: rank (R, C)
// sends to (R, C') all its blocks for column C' (rows blocks), as a shifted direct exchange
// over cols-1 rounds; blocks for itself go to out, the rest to scratch. Phase 2, in every
// column: rank (R, C) sends to (R', C) everything its row holds for (R', C) (cols blocks: its
// own from in, the others from scratch), rows-1 rounds, received straight into out. The
// lecture forwards along the ring within a row or column; in the fully connected model the
// direct exchange takes the same number of rounds and moves less.
// Rounds: (cols-1) + (rows-1). Cost: (cols-1)(alpha + beta rows m) + (rows-1)(alpha + beta cols m).
// See docs/algorithms.md, "alltoall".
#include <cstdint>
#include <vector>

#include "patterns/block_layout.hpp"
#include "patterns/mesh.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  using detail::mod;
  const detail::exchange_layout L(a, rank);
  schedule s = L.start(rank);
  const detail::grid g = detail::most_square_grid(a.p);
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
    detail::region_list out, in;
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
    detail::region_list out, in;
    for (int c = 0; c < g.cols; ++c) {
      out.add(c == col ? L.send_block(at(r_to, col)) : kept_block(c, r_to));
      in.add(L.recv_block(at(r_from, c)));
    }
    send_list(s, at(r_to, col), out);
    recv_list(s, at(r_from, col), in);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double b = detail::mean_block_bytes(a, elem);
  const detail::grid g = detail::most_square_grid(a.p);
  return (g.cols - 1) * (m.alpha + m.beta * b * g.rows) + (g.rows - 1) * (m.alpha + m.beta * b * g.cols);
}

const algorithm info{
    .name = "mesh2d",
    .serves = {collective::alltoall, collective::alltoallv},
    .summary =
        "mesh2d (5DV050 lecture): rows then columns of the most square grid p = rows x cols, blocks grouped per column "
        "then per row; (cols-1)+(rows-1) rounds",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
