// Broadcast, shared-memory direct (outside the one-ported model): after a fence every
// non-root copies the root's buffer straight into its own, then a second fence keeps the
// root from returning while others still read. The physical-limit reference in one
// address space: p - 1 copies of m bytes, all in parallel, no intermediate hops.
// Rounds: 2 (fences, schedule::fence). Cost: 2 fences (about (1 + (p-1)/4) alpha each) + beta m.
#include "ranklab/detail/algorithm_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1 || a.count == 0) return s;
  const region all{out_buffer, 0, a.count};
  s.fence();  // the root has entered the call: its buffer is published and final
  if (rank != a.root) s.remote(a.root, all, all);
  s.fence();  // nobody reads the root's buffer any more
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return 2 * detail::fence_alphas(a.p) * m.alpha + m.beta * static_cast<double>(a.count * elem);
}

const algorithm info{
    .name = "direct",
    .coll = collective::bcast,
    .summary = "shared memory: every rank copies from the root's buffer between two fences",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
