// Allgather and allgatherv, 2-D mesh (the 5DV050 lecture "Algorithms for Collective
// Communication"): ranks form the most square grid rows x cols = p (rows the largest divisor
// <= sqrt(p), rank = row*cols + col; a prime p gives 1 x p, i.e. the ring). A ring allgather
// in every row, then a ring allgather in every column whose unit is a whole row's blocks.
// A rank's own block always goes out from its send buffer, not from its copy in out
// (gathered_layout::sent).
// Rounds: (cols-1) + (rows-1) (2(sqrt(p)-1) for a square p).
// Cost: (cols-1)(alpha + beta n) + (rows-1)(alpha + beta cols n) = ((rows-1) + (cols-1)) alpha
// + beta N (p-1)/p, n = bytes of a block, N = bytes of the gathered result.
// See docs/algorithms.md, "allgather".
#include "patterns/block_layout.hpp"
#include "patterns/mesh.hpp"
#include "patterns/ring.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const detail::gathered_layout L(a);
  schedule s = L.start(a, rank);
  const detail::grid g = detail::most_square_grid(a.p);
  const int row = rank / g.cols, col = rank % g.cols;
  auto at = [&](int r, int c) { return r * g.cols + c; };
  const detail::ring in_row{g.cols, col}, in_column{g.rows, row};
  for (int t = 0; t + 1 < g.cols; ++t) {
    s.next_round();
    s.send(at(row, in_row.right()), L.sent(at(row, in_row.allgather_sent(t)), rank));
    s.recv(at(row, in_row.left()), L.block(at(row, in_row.allgather_received(t))));
  }
  auto row_blocks = [&](int r) { return L.range(at(r, 0), at(r, 0) + g.cols); };
  auto row_sent = [&](int r) { return L.sent_range(at(r, 0), at(r, 0) + g.cols, rank); };
  for (int t = 0; t + 1 < g.rows; ++t) {
    s.next_round();
    send_list(s, at(in_column.right(), col), row_sent(in_column.allgather_sent(t)));
    recv_list(s, at(in_column.left(), col), row_blocks(in_column.allgather_received(t)));
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const detail::grid g = detail::most_square_grid(a.p);
  return detail::gathered_cost(a, elem, m, (g.rows - 1) + (g.cols - 1));
}

const algorithm info{
    .name = "mesh2d",
    .serves = {collective::allgather, collective::allgatherv},
    .summary =
        "mesh2d (5DV050 lecture): ring in rows then columns of the most square grid p = rows x cols (prime p: ring); "
        "(rows-1)+(cols-1) rounds",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
