// Scatter and scatterv over a hierarchy of domains (ranklab/hierarchy.hpp,
// docs/hierarchy.md): the root packs the blocks in the order of the domains, sends each
// leader of an outermost domain that domain's blocks, and each leader passes on to the
// leaders one level in theirs, and so on down to the ranks of the innermost domains: the
// gather's groups in reverse (patterns/hierarchy_phases.hpp, held_blocks). The SMP-aware
// scatter of Sistare, vandeVaart and Loh, "Optimization of MPI Collectives on Clusters of
// Large-Scale SMP's" (SC 1999). Each phase is a registered one-ported scatterv, the
// cheapest under its level's cost model or the one named.
// Rounds: the sum of the phases'. Cost: sum over the levels (the top's included) of scatterv
// of the level's share of the blocks, each under its level's model.
#include <vector>

#include "patterns/hierarchy_phases.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

using detail::hierarchy_phase;

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const std::uint64_t total = total_count(a);
  const std::vector<hierarchy_phase> phases = detail::phases_up(a, rank, a.root);
  const auto held = detail::held_blocks(a.p, phases);
  const buffer_id packed = s.scratch(total);    // the blocks this rank passes on, packed
  const buffer_id received = s.scratch(total);  // a phase's result
  // The root packs every block in the order the phases hand them down.
  if (rank == a.root) detail::pack_blocks(s, a, detail::packed_order(phases, held), packed);
  detail::scatter_down(s, a, phases, held, phases.size(), packed, received, rank);  // the top group first
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const std::uint64_t total = total_count(a);
  return detail::hierarchy_cost(a, elem, m, [&](const hierarchy_phase& ph, auto cost_of) {
    return cost_of(collective::scatter, detail::equal_share(ph, total));
  });
}

const algorithm info{
    .name = "hierarchical",
    .serves = {collective::scatter, collective::scatterv},
    .summary =
        "scatterv from the root among the outermost leaders, then in each domain inwards; blocks "
        "packed; each phase the cheapest one-ported scatterv under its level's cost model",
    .hierarchical = true,
    .composition = "scatterv per level, outermost first (Sistare et al. SC 1999)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
