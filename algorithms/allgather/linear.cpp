// Allgather and allgatherv, linear (direct): every rank sends its own block straight to every
// other rank, as LibNBC's linear algorithm does by posting all sends at once; one-ported, round
// k = 1..p-1 sends to r+k and receives from r-k. Any p.
// Rounds: p-1. Cost: (p-1) alpha + beta N (p-1)/p, N = bytes of the gathered result.
// See docs/algorithms.md, "allgather".
#include "patterns/block_layout.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const detail::gathered_layout L(a);
  schedule s = L.start(a, rank);
  const region mine{in_buffer, 0, L.count(rank)};
  for (int k = 1; k < a.p; ++k) {
    s.next_round();
    s.send(detail::mod(rank + k, a.p), mine);
    const int from = detail::mod(rank - k, a.p);
    s.recv(from, L.block(from));
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::gathered_cost(a, elem, m, a.p - 1);
}

const algorithm info{
    .name = "linear",
    .serves = {collective::allgather, collective::allgatherv},
    .summary = "linear direct exchange, round k to r+k: p-1 rounds, (p-1) alpha + beta N(p-1)/p",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
