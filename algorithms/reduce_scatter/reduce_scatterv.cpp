// Reduce-scatter and reduce_scatter_block, reduce to rank 0 then scatter(v) (Open MPI
// coll/base: `ompi_coll_base_reduce_scatter_intra_nonoverlapping`, tuned's "non-overlapping"
// reduce_scatter, a reduce to rank 0 followed by a scatterv; and
// `ompi_coll_base_reduce_scatter_block_basic_linear`, reduce + scatter). Composed of two
// registered schedules (patterns/compose.hpp), not re-written: the whole vector is reduced
// to rank 0 by reduce inorder_binomial (at root 0 the plain binomial tree, rank r with lowest
// set bit 2^k sending in round k; its partials are contiguous rank ranges combined in rank
// order, so non-commutative operators are fine) into a scratch buffer there, from which
// scatter(v) binomial hands every rank its block (each subtree's blocks in one message).
// Open MPI calls whatever reduce and scatterv the communicator has; binomial trees are the
// logarithmic choice for both.
// Rounds: 2 ceil(log2 p), one-ported (Open MPI's name: the two phases do not overlap).
// Cost: ceil(log2 p)(alpha + (beta + gamma) M) + ceil(log2 p) alpha + beta (M - M_0),
// M = all blocks' bytes, M_0 = rank 0's block: the whole vector on every tree level. In the
// model it never beats recursive_halving or noncommutative (log2 p' (+2) rounds, less
// volume); kept as Open MPI's baseline.
// See docs/algorithms.md, "reduce_scatter".
#include <cstdint>
#include <vector>

#include "patterns/compose.hpp"
#include "patterns/hierarchy_phases.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

constexpr const char* reduce_algorithm = "inorder_binomial";
constexpr const char* scatter_algorithm = "binomial";

const algorithm& phase(collective c, const char* name, int rank) {
  const algorithm* x = registry::find(c, name);
  if (x == nullptr)
    throw usage_error(rank, "reduce_scatter", std::string("reduce_scatterv: ") + std::string(ranklab::name(c)) + " " +
                                                  name + " is not registered");
  return *x;
}

std::uint64_t total(const coll_args& a) {
  std::uint64_t n = 0;
  for (int j = 0; j < a.p; ++j) n += block_count(a, j);
  return n;
}

coll_args reduce_args(const coll_args& a) { return detail::phase_args(a, collective::reduce, a.p, total(a), 0); }

coll_args scatter_args(const coll_args& a) {
  if (a.coll == collective::reduce_scatter_block) return detail::phase_args(a, collective::scatter, a.p, a.count, 0);
  coll_args b = detail::phase_args(a, collective::scatterv, a.p, 0, 0);
  b.counts = a.counts;
  return b;
}

schedule build(const coll_args& a, int rank) {
  const buffer_extent e = buffer_extents(a, rank);
  schedule s(rank, a.p, e.in, e.out);
  const std::uint64_t n = total(a);
  if (a.p == 1) {
    if (e.out > 0) s.copy(region{in_buffer, 0, e.out}, region{out_buffer, 0, e.out});
    return s;
  }
  std::vector<int> everyone(static_cast<std::size_t>(a.p));
  for (int r = 0; r < a.p; ++r) everyone[static_cast<std::size_t>(r)] = r;
  // Rank 0's reduced vector: the reduce's out there, the scatter's in.
  const region reduced = rank == 0 ? region{s.scratch(n), 0, n} : region{out_buffer, 0, 0};

  const coll_args r = reduce_args(a);
  const algorithm& ra = phase(collective::reduce, reduce_algorithm, rank);
  detail::append_phase(s, ra.build(r, rank), everyone, {region{in_buffer, 0, 0}, reduced},
                       detail::longest_phase(ra, r));

  const coll_args c = scatter_args(a);
  const algorithm& ca = phase(c.coll, scatter_algorithm, rank);
  const schedule sc = ca.build(c, rank);
  detail::append_phase(s, sc, everyone, {reduced, region{out_buffer, 0, 0}}, detail::phase_length(sc));
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const coll_args r = reduce_args(a), c = scatter_args(a);
  const algorithm &ra = phase(collective::reduce, reduce_algorithm, no_rank), &ca = phase(c.coll, scatter_algorithm, no_rank);
  return (ra.cost ? ra.cost(r, elem, m) : 0.0) + (ca.cost ? ca.cost(c, elem, m) : 0.0);
}

const algorithm info{
    .name = "reduce_scatterv",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary = "reduce to rank 0 (inorder_binomial) + scatter(v) binomial (Open MPI non-overlapping / basic_linear): "
               "2 ceil(log2 p) rounds, ceil(log2 p)(2 alpha + (beta + gamma) M) + beta (M - M_0); non-commutative ok",
    .composition = "reduce inorder_binomial (root 0) + scatterv binomial (Open MPI non-overlapping)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
