// Allgather and allgatherv, Sparbit (W. J. Loch, G. P. Koslovski, "Sparbit: a new
// logarithmic-cost and data locality-based algorithm for MPI_Allgather", 2021; Open MPI
// coll/base, `ompi_coll_base_allgather_intra_sparbit`). The distances run the other way
// from Bruck's: with L = 2^(ceil(log2 p) - 1), step i uses d = L / 2^i, and every rank sends
// to r + d and receives from r - d (mod p). Before the step with distance d a rank holds n
// blocks, those of ranks r, r - 2d, r - 4d, ..., r - 2(n-1)d; it forwards them and receives
// r - d, r - 3d, ..., so afterwards it holds r - t d for t < 2n: the data doubles while the
// distance halves, and every block lands directly at its place in out (no rotation, no
// scratch). For p not a power of two some steps must not double: at distance 2^j the last
// block is left out when j is the lowest set bit of p or a higher bit of p is clear there
// (Open MPI's "ignore_steps" mask); it would otherwise arrive twice.
// Blocks of one message are not contiguous in out: one message with a region per block.
// Rounds: ceil(log2 p), any p. Cost: ceil(log2 p) alpha + beta N (p-1)/p, N = bytes of the
// gathered result, no local copies but the own block.
// See docs/algorithms.md, "allgather".
#include <bit>
#include <cstdint>

#include "patterns/block_layout.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

// Whether the step at distance 2^j leaves out its last block (see the header).
bool excluded(int p, int j) {
  const int low = std::countr_zero(static_cast<unsigned>(p));
  return j == low || (j > low && ((p >> j) & 1) == 0);
}

schedule build(const coll_args& a, int rank) {
  const detail::gathered_layout L(a);
  schedule s = L.start(a, rank);
  const int p = a.p;
  const int steps = detail::ceil_log2(static_cast<std::uint64_t>(p));
  std::int64_t held = 1;
  for (int i = 0; i < steps; ++i) {
    const int j = steps - 1 - i;
    const std::int64_t d = std::int64_t{1} << j;
    const std::int64_t n = held - (excluded(p, j) ? 1 : 0);
    s.next_round();
    detail::region_list out, in;
    for (std::int64_t t = 0; t < n; ++t) {
      const int mine = static_cast<int>(detail::mod(rank - 2 * t * d, p));
      const int theirs = static_cast<int>(detail::mod(rank - (2 * t + 1) * d, p));
      out.add(L.sent(mine, rank));
      in.add(L.block(theirs));
    }
    send_list(s, static_cast<int>(detail::mod(rank + d, p)), out);
    recv_list(s, static_cast<int>(detail::mod(rank - d, p)), in);
    held += n;
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::gathered_cost(a, elem, m, detail::ceil_log2(static_cast<std::uint64_t>(a.p)));
}

const algorithm info{
    .name = "sparbit",
    .serves = {collective::allgather, collective::allgatherv},
    .summary =
        "Sparbit (Loch, Koslovski; Open MPI): distances halving from 2^(ceil(log2 p)-1), data doubling, blocks "
        "in place: ceil(log2 p) rounds for any p; ceil(log2 p) alpha + beta N(p-1)/p",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
