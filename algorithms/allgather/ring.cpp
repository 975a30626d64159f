// Allgather and allgatherv, ring (the 5DV050 lecture "Algorithms for Collective
// Communication": all-to-all broadcast on a ring): in round k = 1..p-1 every rank passes the
// block it received last (its own first) to r+1 and receives block r-k from r-1. Any p.
// The own block goes out from the send buffer, not from its copy in out (gathered_layout::sent).
// Rounds: p-1. Cost: (p-1) alpha + beta N (p-1)/p, N = bytes of the gathered result.
// See docs/algorithms.md, "allgather".
#include "patterns/ring.hpp"
#include "patterns/block_layout.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const detail::gathered_layout L(a);
  schedule s = L.start(a, rank);
  const detail::ring r{a.p, rank};
  for (int t = 0; t + 1 < a.p; ++t) {
    s.next_round();
    s.send(r.right(), L.sent(r.allgather_sent(t), rank));
    s.recv(r.left(), L.block(r.allgather_received(t)));
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::gathered_cost(a, elem, m, a.p - 1);
}

const algorithm info{
    .name = "ring",
    .serves = {collective::allgather, collective::allgatherv},
    .summary = "ring (5DV050 lecture): p-1 rounds, (p-1) alpha + beta N(p-1)/p",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
