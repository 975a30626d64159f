// Allreduce by allgather then a local fold (Open MPI coll/base,
// `ompi_coll_base_allreduce_intra_allgather_reduce`). Every rank gathers all p input vectors
// into a scratch buffer of p * count elements with ranklab's allgather bruck schedule (a
// phase composed by patterns/compose.hpp, not a re-written Bruck), then folds them locally
// in rank order: out = x_0, out = out (+) x_1, ..., out = out (+) x_{p-1}. The result is,
// bit for bit, the left fold ((x_0 (+) x_1) (+) x_2) ..., the same on every rank, so the
// algorithm is safe for non-commutative operators and fixed-order (reproducible) calls.
// In place: in is only read by the allgather rounds, and out only written by the fold after
// the last round's messages.
// Rounds: ceil(log2 p) (bruck's), any p. Cost: ceil(log2 p) alpha + beta m (p-1) +
// gamma m (p-1) (m = bytes of one vector), plus Bruck's rotation copy of about p m: every
// rank reduces everything, so it pays only for small vectors, where it is latency-optimal
// and ordered.
// See docs/algorithms.md, "allreduce".
#include <vector>
#include <cstdint>

#include "patterns/compose.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

constexpr const char* gather_algorithm = "bruck";

coll_args gather_args(const coll_args& a) {
  coll_args g;
  g.coll = collective::allgather;
  g.p = a.p;
  g.count = a.count;
  g.elem_size = a.elem_size;
  return g;
}

const algorithm& gatherer(int rank) {
  const algorithm* g = registry::find(collective::allgather, gather_algorithm);
  if (g == nullptr) throw usage_error(rank, "allreduce", "allgather_reduce: allgather bruck is not registered");
  return *g;
}

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const buffer_id all = s.scratch(n * static_cast<std::uint64_t>(a.p));
  const coll_args g = gather_args(a);
  const schedule phase = gatherer(rank).build(g, rank);
  std::vector<int> members(static_cast<std::size_t>(a.p));
  for (int i = 0; i < a.p; ++i) members[static_cast<std::size_t>(i)] = i;
  detail::phase_place at;
  at.in = region{in_buffer, 0, n};
  at.out = region{all, 0, n * static_cast<std::uint64_t>(a.p)};
  detail::append_phase(s, phase, members, at, detail::phase_length(phase));
  // The fold, after the last round's messages (p = 1: in the prologue's round).
  if (n > 0) {
    s.copy(region{all, 0, n}, region{out_buffer, 0, n});
    for (int j = 1; j < a.p; ++j)
      s.reduce(region{all, n * static_cast<std::uint64_t>(j), n}, region{out_buffer, 0, n}, combine::reduce_in_right);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double vec = static_cast<double>(a.count * elem);
  const coll_args g = gather_args(a);
  const algorithm& ga = gatherer(no_rank);
  const double gather = ga.cost != nullptr ? ga.cost(g, elem, m) : 0.0;
  return gather + m.gamma * vec * (a.p - 1);
}

const algorithm info{
    .name = "allgather_reduce",
    .coll = collective::allreduce,
    .summary =
        "allgather (bruck) then a local left fold in rank order (Open MPI allgather_reduce): ceil(log2 p) rounds, "
        "fixed order; ceil(log2 p) alpha + beta m(p-1) + gamma m(p-1)",
    .fixed_order = true,
    .composition = "allgather bruck + local fold in rank order",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
