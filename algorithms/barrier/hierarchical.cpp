// Barrier over a hierarchy of domains (ranklab/hierarchy.hpp, docs/hierarchy.md): a barrier
// in each innermost domain, then among the leaders of each domain one level out, and so on
// to the leaders of the outermost domains; then the same barriers again in reverse order,
// which hold every rank of a domain until its leader has passed the barrier above (a
// leader arrives at its domain's second barrier only then). Each phase is a registered
// one-ported barrier, the cheapest for its group under its level's cost model
// (patterns/hierarchy_phases.hpp).
// Rounds: the sum of the phases', the levels below the top twice. Cost: barrier(N) at the top
// plus 2 sum_l barrier(d_l), each under its level's alpha.
#include "patterns/hierarchy_phases.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

using detail::hierarchy_phase;
using detail::phase_args;

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, 0);
  const std::vector<hierarchy_phase> phases = detail::phases_up(a, rank);
  const std::size_t top = phases.size() - 1;
  for (std::size_t i = 0; i <= top; ++i) detail::add_phase(s, a, phases[i], collective::barrier, 0, {}, top > 0);
  for (std::size_t i = top; i-- > 0;) detail::add_phase(s, a, phases[i], collective::barrier, 0, {}, i > 0);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::hierarchy_cost(a, elem, m, [&](const hierarchy_phase& ph, auto cost_of) {
    return (ph.top ? 1 : 2) * cost_of(collective::barrier, 0);
  });
}

const algorithm info{
    .name = "hierarchical",
    .coll = collective::barrier,
    .summary =
        "barriers up the domains to the outermost leaders, then back down; each phase the cheapest "
        "one-ported barrier under its level's cost model",
    .hierarchical = true,
    .composition = "barrier per level, up and down",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
