// Allreduce over a hierarchy of domains (ranklab/hierarchy.hpp, docs/hierarchy.md): a reduce
// to the leader in each innermost domain, then among the leaders of each domain one level
// out, and so on; an allreduce among the leaders of the outermost domains; then a broadcast
// back down, level by level. The SMP-aware scheme of Sistare, vandeVaart and Loh,
// "Optimization of MPI Collectives on Clusters of Large-Scale SMP's" (SC 1999), and of the
// leader-based components of Open MPI (han: Luo et al., "HAN: a Hierarchical AutotuNed
// Collective Communication Framework", CLUSTER 2020). Each phase is a registered one-ported
// algorithm, the cheapest for its group under its level's cost model
// (patterns/hierarchy_phases.hpp); the schedule is theirs, composed.
// Rounds: the sum of the phases' rounds. Cost, with d_l the largest group at level l and N
// the number of outermost domains: sum_l [reduce(m, d_l) + bcast(m, d_l)] under level l's
// alpha, beta, gamma, plus allreduce(m, N) under the top level's. Commutative operators
// only: a domain need not be a contiguous range of ranks.
#include "patterns/hierarchy_phases.hpp"
#include "patterns/reduce_blocks.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

using detail::hierarchy_phase;
using detail::phase_args;

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, a.count);
  const region out = detail::own_vector_in_out(s, a.count);
  const std::vector<hierarchy_phase> phases = detail::phases_up(a, rank);
  const region partial{s.scratch(a.count), 0, a.count};  // a reduce phase's result at its leader
  const std::size_t top = phases.size() - 1;
  for (std::size_t i = 0; i < top; ++i) {
    const hierarchy_phase& ph = phases[i];
    detail::add_phase(s, a, ph, collective::reduce, a.count, {out, partial}, true);
    if (ph.group.index == ph.leader_index && ph.group.members.size() > 1) s.copy(partial, out);
  }
  // In place on the partials; one tree for every leader (the generalized allreduce with
  // removed steps reduces along shifted trees, which for p not a power of two give the
  // ranks different last bits): every rank ends with the same bits.
  detail::add_phase(s, a, phases[top], collective::allreduce, a.count, {out, out}, top > 0,
                    [](coll_args& b, const std::vector<int>&) {
                      b.in_place = true;
                      b.params.removed_steps = 0;
                    });
  for (std::size_t i = top; i-- > 0;) detail::add_phase(s, a, phases[i], collective::bcast, a.count, {out, out}, i > 0);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::hierarchy_cost(a, elem, m, [&](const hierarchy_phase& ph, auto cost_of) {
    if (ph.top) return cost_of(collective::allreduce, a.count);
    return cost_of(collective::reduce, a.count) + cost_of(collective::bcast, a.count);
  });
}

const algorithm info{
    .name = "hierarchical",
    .coll = collective::allreduce,
    .summary =
        "reduce in each domain, allreduce among the leaders, bcast in each domain; each phase the "
        "cheapest one-ported algorithm under its level's cost model",
    .needs_commutative = true,
    .hierarchical = true,
    .composition = "reduce per level + allreduce (top) + bcast per level (Sistare et al. SC 1999; Open MPI han)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
