// Reduce-scatter, pairwise exchange (MPICH's reduce_scatter for long messages), for irregular
// and equal blocks alike: in step i = 1..p-1 rank r sends its raw contribution to block
// (r+i) mod p directly to that rank and receives rank (r-i) mod p's contribution to its own
// block. Contributions arrive in the order r-1, ..., 0, p-1, ..., r+1; a low accumulator
// (x_0 (+) ... (+) x_r, in the receive buffer) and a high one (x_{r+1} (+) ... (+) x_{p-1},
// scratch) each grow to the left, and one local reduction joins them, so the result is
// rank-ordered: non-commutative operators are fine.
// Rounds: p-1. Cost: (p-1) alpha + (p-1)/p M beta + M gamma (p-1 blocks and the join, each
// ~M/p), M = all blocks' bytes.
#include "patterns/rank_arithmetic.hpp"
#include "patterns/reduce_scatter_phase.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

using detail::mod;

schedule build(const coll_args& a, int rank) {
  schedule s = detail::reduce_scatter_schedule(a, rank);
  const int p = a.p;
  const std::vector<detail::elem_range> blocks = detail::result_blocks(a);
  const detail::elem_range own = blocks[static_cast<std::size_t>(rank)];
  const region low{out_buffer, 0, own.count};
  if (own.count > 0) s.copy(region{in_buffer, own.offset, own.count}, low);
  const bool has_high = rank + 1 < p;
  const region high{has_high ? s.scratch(own.count) : out_buffer, 0, has_high ? own.count : 0};
  for (int i = 1; i < p; ++i) {
    s.next_round();
    const int to = mod(rank + i, p), from = mod(rank - i, p);
    const detail::elem_range give = blocks[static_cast<std::size_t>(to)];
    s.send(to, region{in_buffer, give.offset, give.count});
    if (from < rank)
      s.recv(from, low, combine::reduce_in_left);
    else if (from == p - 1)
      s.recv(from, high, combine::copy);
    else
      s.recv(from, high, combine::reduce_in_left);
  }
  if (has_high && own.count > 0) s.reduce(high, low, combine::reduce_in_right);  // low (+) high
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double M = detail::result_bytes(a, elem), p = a.p;
  return (p - 1) * m.alpha + (p - 1) / p * M * m.beta + M * m.gamma;
}

const algorithm info{
    .name = "pairwise",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary =
        "pairwise exchange: p-1 rounds, (p-1) alpha + (p-1)/p M beta + M gamma; two accumulators keep rank "
        "order (non-commutative ok)",
    .needs_commutative = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
