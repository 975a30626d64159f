// Broadcast over a hierarchy of domains (ranklab/hierarchy.hpp, docs/hierarchy.md): from the
// root among the leaders of the outermost domains (the root leads its own), then in each
// domain from its leader, level by level inwards: the SMP-aware broadcast of Sistare,
// vandeVaart and Loh, "Optimization of MPI Collectives on Clusters of Large-Scale SMP's"
// (SC 1999). Each phase is a registered one-ported bcast, the cheapest for its group under
// its level's cost model (patterns/hierarchy_phases.hpp).
// Rounds: the sum of the phases'. Cost: bcast(m, N) at the top plus sum_l bcast(m, d_l),
// each under its level's alpha and beta (d_l the largest group at level l).
#include "patterns/hierarchy_phases.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

using detail::hierarchy_phase;
using detail::phase_args;

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const region out{out_buffer, 0, a.count};
  const std::vector<hierarchy_phase> phases = detail::phases_up(a, rank, a.root);
  for (std::size_t i = phases.size(); i-- > 0;)  // the top group first, then inwards
    detail::add_phase(s, a, phases[i], collective::bcast, a.count, {out, out}, i > 0);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::hierarchy_cost(
      a, elem, m, [&](const hierarchy_phase&, auto cost_of) { return cost_of(collective::bcast, a.count); });
}

const algorithm info{
    .name = "hierarchical",
    .coll = collective::bcast,
    .summary =
        "bcast among the outermost leaders, then in each domain inwards; each phase the cheapest "
        "one-ported bcast under its level's cost model",
    .hierarchical = true,
    .composition = "bcast per level, outermost first (Sistare et al. SC 1999)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
