// Reduce over a hierarchy of domains (ranklab/hierarchy.hpp, docs/hierarchy.md): to the
// leader of each innermost domain, then among the leaders of each domain one level out, and
// so on, the root leading every group it is in, so that the last reduce, among the leaders
// of the outermost domains, ends at the root: the SMP-aware reduce of Sistare, vandeVaart
// and Loh, "Optimization of MPI Collectives on Clusters of Large-Scale SMP's" (SC 1999).
// Each phase is a registered one-ported reduce, the cheapest for its group under its level's
// cost model (patterns/hierarchy_phases.hpp). The partial travels in a temporary: only the
// root has a receive buffer.
// Rounds: the sum of the phases'. Cost: sum_l reduce(m, d_l) + reduce(m, N), each under its
// level's alpha, beta, gamma. Commutative operators only (domains need not be contiguous).
#include "patterns/hierarchy_phases.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

using detail::hierarchy_phase;
using detail::phase_args;

schedule build(const coll_args& a, int rank) {
  const bool root = rank == a.root;
  schedule s(rank, a.p, a.count, root ? a.count : 0);
  const region work{s.scratch(a.count), 0, a.count};     // this rank's partial so far
  const region partial{s.scratch(a.count), 0, a.count};  // a phase's result at its leader
  s.copy(region{in_buffer, 0, a.count}, work);
  const std::vector<hierarchy_phase> phases = detail::phases_up(a, rank, a.root);
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const hierarchy_phase& ph = phases[i];
    detail::add_phase(s, a, ph, collective::reduce, a.count, {work, partial}, i + 1 < phases.size());
    if (ph.group.index == ph.leader_index && ph.group.members.size() > 1) s.copy(partial, work);
  }
  if (root) s.copy(work, region{out_buffer, 0, a.count});
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::hierarchy_cost(
      a, elem, m, [&](const hierarchy_phase&, auto cost_of) { return cost_of(collective::reduce, a.count); });
}

const algorithm info{
    .name = "hierarchical",
    .coll = collective::reduce,
    .summary =
        "reduce in each domain, then among the leaders level by level, to the root; each phase the "
        "cheapest one-ported reduce under its level's cost model",
    .needs_commutative = true,
    .hierarchical = true,
    .composition = "reduce per level, innermost first (Sistare et al. SC 1999)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
