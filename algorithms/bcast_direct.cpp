// Broadcast, shared-memory direct (outside the one-ported model): after a fence every
// non-root copies the root's buffer straight into its own, then a second fence keeps the
// root from returning while others still read. The physical-limit reference in one
// address space: p - 1 copies of m bytes, all in parallel, no intermediate hops.
// Rounds: 2 ceil(log2 p) (the fences' empty messages). Cost: 2 ceil(log2 p) alpha + beta m.
#include "ranklab/detail/algorithm_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1 || a.count == 0) return s;
  const region all{out_buffer, 0, a.count};
  s.fence_rounds();
  if (rank != a.root) s.remote(a.root, all, all);
  s.fence_rounds();
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return 2 * detail::ceil_log2(a.p) * m.alpha + m.beta * static_cast<double>(a.count * elem);
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
