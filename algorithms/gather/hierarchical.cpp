// Gather and gatherv over a hierarchy of domains (ranklab/hierarchy.hpp, docs/hierarchy.md):
// the blocks of each innermost domain gathered, packed, to its leader; then the leaders'
// packed blocks to the leader of each domain one level out, and so on to the root, which
// leads every group it is in; the root puts every block in its place (block_offset: both
// layouts, any displacements, gaps untouched). The SMP-aware gather of Sistare, vandeVaart
// and Loh, "Optimization of MPI Collectives on Clusters of Large-Scale SMP's" (SC 1999).
// Each phase is a registered one-ported gatherv, the cheapest under its level's cost model
// or the one named (patterns/hierarchy_phases.hpp).
// Rounds: the sum of the phases'. Cost: sum over the levels (the top's included) of
// gatherv of the level's share of the blocks, each under its level's model.
#include <vector>

#include "patterns/hierarchy_phases.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

using detail::block_elements;
using detail::hierarchy_phase;

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const std::uint64_t total = total_count(a);
  const std::vector<hierarchy_phase> phases = detail::phases_up(a, rank, a.root);
  const auto held = detail::held_blocks(a.p, phases);
  const buffer_id packed = s.scratch(total);    // this rank's blocks so far, packed
  const buffer_id gathered = s.scratch(total);  // a phase's result at its leader
  s.copy(region{in_buffer, 0, block_count(a, rank)}, region{packed, 0, block_count(a, rank)});
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const hierarchy_phase& ph = phases[i];
    detail::add_phase(s, a, ph, collective::gatherv, 0, {region{packed, 0, 0}, region{gathered, 0, 0}},
                      i + 1 < phases.size(), detail::counts_held(a, held[i]));
    if (ph.group.members.size() > 1 && ph.group.index == ph.leader_index) {
      const std::uint64_t n = block_elements(a, held[i + 1][static_cast<std::size_t>(rank)]);
      s.copy(region{gathered, 0, n}, region{packed, 0, n});
    }
  }
  if (rank == a.root) detail::unpack_blocks(s, a, detail::packed_order(phases, held), packed);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const std::uint64_t total = total_count(a);
  return detail::hierarchy_cost(a, elem, m, [&](const hierarchy_phase& ph, auto cost_of) {
    return cost_of(collective::gather, detail::equal_share(ph, total));
  });
}

const algorithm info{
    .name = "hierarchical",
    .serves = {collective::gather, collective::gatherv},
    .summary =
        "gatherv in each domain, then among the leaders level by level, to the root; blocks packed; "
        "each phase the cheapest one-ported gatherv under its level's cost model",
    .hierarchical = true,
    .composition = "gatherv per level, innermost first (Sistare et al. SC 1999)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
