// Reduce_scatter and reduce_scatter_block over a hierarchy of domains (ranklab/hierarchy.hpp,
// docs/hierarchy.md): every rank lays its vector out in the order of the domains (the
// blocks of one domain next to each other: patterns/hierarchy_phases.hpp, held_blocks);
// the whole vector is reduced to the leader in each innermost domain, then among the
// leaders level by level, as the hierarchical reduce does; a reduce_scatter among the
// leaders of the outermost domains leaves each the reduced blocks of its domain; and those
// are scattered back down the domains to their ranks. The leader-based reduce-scatter of
// the SMP-aware collectives (Sistare, vandeVaart and Loh, "Optimization of MPI Collectives on
// Clusters of Large-Scale SMP's", SC 1999). Each phase (reduce, reduce_scatter, scatterv) is
// a registered one-ported algorithm, the cheapest under its level's cost model or the one
// named. Commutative operators only: a domain need not be a contiguous range of ranks.
// Rounds: the sum of the phases'. Cost, with N the bytes of the vector: sum_l [reduce(N, d_l) +
// scatterv(share, d_l)] under level l's model, plus reduce_scatter(N, top) under the top's.
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
  const std::vector<hierarchy_phase> phases = detail::phases_up(a, rank);
  const auto held = detail::held_blocks(a.p, phases);
  const std::size_t top = phases.size() - 1;
  const region work{s.scratch(total), 0, total};     // this rank's vector in domain order, reduced so far
  const region partial{s.scratch(total), 0, total};  // a reduce phase's result at its leader
  const buffer_id part = s.scratch(total);           // the reduced blocks this rank holds, packed
  const buffer_id received = s.scratch(total);       // a scatter phase's result
  detail::pack_blocks(s, a, detail::packed_order(phases, held), work.buffer);
  for (std::size_t i = 0; i < top; ++i) {
    const hierarchy_phase& ph = phases[i];
    detail::add_phase(s, a, ph, collective::reduce, total, {work, partial}, true);
    if (ph.group.index == ph.leader_index && ph.group.members.size() > 1) s.copy(partial, work);
  }
  const hierarchy_phase& tp = phases[top];
  detail::add_phase(s, a, tp, collective::reduce_scatter, 0, {work, region{part, 0, 0}}, top > 0,
                    detail::counts_held(a, held[top]));
  if (tp.group.members.size() < 2 && tp.group.index >= 0) s.copy(work, region{part, 0, total});  // one leader
  detail::scatter_down(s, a, phases, held, top, part, received, rank);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const std::uint64_t total = total_count(a);
  return detail::hierarchy_cost(a, elem, m, [&](const hierarchy_phase& ph, auto cost_of) {
    const std::uint64_t share = detail::equal_share(ph, total);
    if (ph.top) return cost_of(collective::reduce_scatter_block, share);
    return cost_of(collective::reduce, total) + cost_of(collective::scatter, share);
  });
}

const algorithm info{
    .name = "hierarchical",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary =
        "the vector in domain order, reduced to the leaders level by level, reduce_scatter among the "
        "outermost leaders, scatterv back; each phase the cheapest one-ported algorithm of its level",
    .needs_commutative = true,
    .hierarchical = true,
    .composition = "reduce per level + reduce_scatter (top) + scatterv per level (Sistare et al. SC 1999)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
