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

using detail::hierarchy_phase;

std::uint64_t elements(const coll_args& a, const std::vector<int>& ranks) {
  std::uint64_t n = 0;
  for (int j : ranks) n += block_count(a, j);
  return n;
}

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const std::uint64_t total = total_count(a);
  const std::vector<hierarchy_phase> phases = detail::phases_up(a, rank);
  // Whose blocks each rank's packed buffer holds so far, in their packed order: at first
  // its own; a leader's, after each level, its group's in group order.
  std::vector<std::vector<int>> held(static_cast<std::size_t>(a.p));
  for (int r = 0; r < a.p; ++r) held[static_cast<std::size_t>(r)] = {r};
  const buffer_id packed = s.scratch(total);    // this rank's blocks so far, packed
  const buffer_id gathered = s.scratch(total);  // a phase's result
  s.copy(region{in_buffer, 0, block_count(a, rank)}, region{packed, 0, block_count(a, rank)});
  const auto counts_of = [&](coll_args& b, const std::vector<int>& members) {
    b.counts.clear();
    for (int m : members) b.counts.push_back(elements(a, held[static_cast<std::size_t>(m)]));
  };
  const auto merge = [&](const hierarchy_phase& ph) {
    for (std::size_t g = 0; g < ph.groups.size(); ++g) {
      std::vector<int> all;
      for (int m : ph.groups[g])
        all.insert(all.end(), held[static_cast<std::size_t>(m)].begin(), held[static_cast<std::size_t>(m)].end());
      held[static_cast<std::size_t>(ph.groups[g][static_cast<std::size_t>(ph.leads[g])])] = std::move(all);
    }
  };
  const detail::phase_place into_gathered{region{packed, 0, 0}, region{gathered, 0, 0}};
  const std::size_t top = phases.size() - 1;
  for (std::size_t i = 0; i <= top; ++i) {
    const hierarchy_phase& ph = phases[i];
    const bool leads =
        ph.group.members.size() > 1 && (i == top ? ph.group.index >= 0 : ph.group.index == ph.leader_index);
    detail::add_phase(s, a, ph, i == top ? collective::allgatherv : collective::gatherv, 0, into_gathered,
                      i < top || top > 0, counts_of);
    merge(ph);
    if (leads) {
      const std::uint64_t n = elements(a, held[static_cast<std::size_t>(i == top ? ph.group.members.front() : rank)]);
      s.copy(region{gathered, 0, n}, region{packed, 0, n});
    }
  }
  const region whole{packed, 0, total};
  for (std::size_t i = top; i-- > 0;)
    detail::add_phase(s, a, phases[i], collective::bcast, total, {whole, whole}, true);
  // Every block to its place.
  std::uint64_t at = 0;
  for (int j : held[static_cast<std::size_t>(phases[top].group.members.front())]) {
    const std::uint64_t n = block_count(a, j);
    s.copy(region{packed, at, n}, region{out_buffer, block_offset(a, j), n});
    at += n;
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const std::uint64_t total = total_count(a);
  const int top = static_cast<int>(a.hierarchy ? a.hierarchy->levels.size() : 0);
  return detail::hierarchy_cost(a, elem, m, [&](const hierarchy_phase& ph, auto cost_of) {
    // Each of the level's participants holding an equal share of the blocks.
    std::uint64_t members = 0;
    for (const auto& g : ph.groups) members += g.size();
    const std::uint64_t share = members ? (total + members - 1) / members : 0;
    if (ph.level == top) return cost_of(collective::allgather, share);
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
