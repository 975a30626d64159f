// Barrier, dissemination (D. Hensgen, R. Finkel, U. Manber, "Two Algorithms for Barrier
// Synchronization", 1988).
// Round k: send an empty message to r + 2^k, receive from r - 2^k (mod p).
// Rounds: ceil(log2 p), any p. Cost: ceil(log2 p) * alpha.
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, 0);
  for (std::int64_t dist = 1; dist < a.p; dist *= 2) {
    s.next_round();
    s.send(detail::mod(rank + dist, a.p), region{out_buffer, 0, 0});
    s.recv(detail::mod(rank - dist, a.p), region{out_buffer, 0, 0});
  }
  return s;
}

double cost(const coll_args& a, std::size_t, const cost_model& m) { return detail::ceil_log2(a.p) * m.alpha; }

const algorithm info{
    .name = "dissemination",
    .coll = collective::barrier,
    .summary = "dissemination: ceil(log2 p) rounds of empty messages to r+2^k",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
