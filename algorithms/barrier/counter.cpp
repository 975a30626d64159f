// Barrier, shared-memory counter (outside the one-ported model): one fence round. Every
// rank increments the team's fence counter for the call's slot; the rank whose increment
// completes the count wakes the sleepers, the others spin, yield, then sleep until the count
// is complete. The counter only grows, and the j-th fence of a slot completes at j * p,
// so there is no sense flag to reset: the call number's slot plays the role of the sense.
// Rounds: 1 (a fence; no messages). Cost: about (1 + (p - 1) / 4) alpha: p increments of
// one cache line, then one store seen by all; oversubscribed it needs one wake-up, where
// dissemination needs ceil(log2 p) in sequence.
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, 0);
  if (a.p > 1) s.fence();
  return s;
}

double cost(const coll_args& a, std::size_t, const cost_model& m) { return detail::fence_alphas(a.p) * m.alpha; }

const algorithm info{
    .name = "counter",
    .coll = collective::barrier,
    .summary = "shared memory: one atomic counter per call slot, the last arrival wakes the rest",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
