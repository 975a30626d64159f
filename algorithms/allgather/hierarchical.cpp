// Allgather and allgatherv over a hierarchy of domains (ranklab/hierarchy.hpp,
// docs/hierarchy.md): the blocks of each innermost domain gathered to its leader, then the
// leaders' gathered blocks to the leader of each domain one level out, and so on; an
// allgatherv among the leaders of the outermost domains; then the whole, packed, broadcast
// back down level by level, and every rank puts the blocks in their places (block_offset,
// so both layouts and any displacements). The leader-based allgather of Open MPI's han and
// of Sistare, vandeVaart and Loh, "Optimization of MPI Collectives on Clusters of
// Large-Scale SMP's" (SC 1999). Each phase (gatherv, allgatherv, bcast) is a registered
// one-ported algorithm, the cheapest under its level's cost model or the one named
// (patterns/hierarchy_phases.hpp). Blocks travel packed: a domain need not be a contiguous
// range of ranks, and the gaps of the receive buffer are never written.
// Rounds: the sum of the phases'. Cost, with N the bytes of all blocks: sum_l [gatherv of the
// level's share + bcast(N)] under level l's model, plus allgatherv(N) under the top's.
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
  const std::vector<hierarchy_phase> phases = detail::phases_up(a, rank);
  const auto held = detail::held_blocks(a.p, phases);
  const buffer_id packed = s.scratch(total);    // this rank's blocks so far, packed
  const buffer_id gathered = s.scratch(total);  // a phase's result
  s.copy(region{in_buffer, 0, block_count(a, rank)}, region{packed, 0, block_count(a, rank)});
  const detail::phase_place into_gathered{region{packed, 0, 0}, region{gathered, 0, 0}};
  const std::size_t top = phases.size() - 1;
  for (std::size_t i = 0; i <= top; ++i) {
    const hierarchy_phase& ph = phases[i];
    detail::add_phase(s, a, ph, i == top ? collective::allgatherv : collective::gatherv, 0, into_gathered,
                      i < top || top > 0, detail::counts_held(a, held[i]));
    const bool receives =
        ph.group.members.size() > 1 && (i == top ? ph.group.index >= 0 : ph.group.index == ph.leader_index);
    if (receives) {
      const std::uint64_t n = block_elements(
          a, held[i + 1][static_cast<std::size_t>(ph.group.members[static_cast<std::size_t>(ph.leader_index)])]);
      s.copy(region{gathered, 0, n}, region{packed, 0, n});
    }
  }
  const region whole{packed, 0, total};
  for (std::size_t i = top; i-- > 0;)
    detail::add_phase(s, a, phases[i], collective::bcast, total, {whole, whole}, true);
  detail::unpack_blocks(s, a, detail::packed_order(phases, held), packed);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const std::uint64_t total = total_count(a);
  return detail::hierarchy_cost(a, elem, m, [&](const hierarchy_phase& ph, auto cost_of) {
    const std::uint64_t share = detail::equal_share(ph, total);
    if (ph.top) return cost_of(collective::allgather, share);
    return cost_of(collective::gather, share) + cost_of(collective::bcast, total);
  });
}

const algorithm info{
    .name = "hierarchical",
    .serves = {collective::allgather, collective::allgatherv},
    .summary =
        "gatherv in each domain, then among the leaders level by level, allgatherv among the outermost "
        "leaders, bcast back; blocks packed; each phase the cheapest one-ported algorithm of its level",
    .hierarchical = true,
    .composition = "gatherv per level + allgatherv (top) + bcast per level (Sistare et al. SC 1999; Open MPI han)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
