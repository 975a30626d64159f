// Allreduce by a radix-k Bruck allgather then a local fold (Open MPI coll/base, PR 12337
// "adding bruck method with any fanout k for Allgather/Allreduce": the allreduce of that
// change is `ompi_coll_base_allreduce_intra_allgather_reduce`, which gathers with the comm's
// allgather, there the new `ompi_coll_base_allgather_intra_k_bruck`, and folds locally). Every
// rank gathers all p input vectors into a scratch buffer of p * count elements with ranklab's
// allgather k_bruck schedule (composed by patterns/compose.hpp, with this call's radix), then
// folds them in rank order: out = x_0, out = out (+) x_1, ..., out = out (+) x_{p-1}. The
// result is, bit for bit, the left fold in rank order on every rank: non-commutative
// operators and fixed-order calls are served. Radix k = algo_params::radix, default 2
// (allgather k_bruck's), where it is allreduce allgather_reduce round for round.
// In place: in is only read by the allgather rounds, out only written by the fold after the
// last round's messages.
// Rounds: Open MPI posts a phase's k-1 exchanges at once (k-1 ports): ceil(log_k p). One-ported
// R = #{(i, j) : 1 <= j < k, j k^i < p} <= (k-1) ceil(log_k p) ((k-1) log_k p for p = k^L).
// Cost: R alpha + beta m (p-1) + gamma m (p-1) (m = bytes of one vector), plus the rotation
// copy of about p m: every rank reduces everything, so it pays only for small vectors.
// See docs/algorithms.md, "allreduce".
#include <cstdint>
#include <vector>

#include "patterns/compose.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

constexpr const char* gather_algorithm = "k_bruck";

coll_args gather_args(const coll_args& a) {
  coll_args g;
  g.coll = collective::allgather;
  g.p = a.p;
  g.count = a.count;
  g.elem_size = a.elem_size;
  g.params.radix = a.params.radix;
  return g;
}

const algorithm& gatherer(int rank) {
  const algorithm* g = registry::find(collective::allgather, gather_algorithm);
  if (g == nullptr) throw usage_error(rank, "allreduce", "k_bruck: allgather k_bruck is not registered");
  return *g;
}

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const buffer_id all = s.scratch(n * static_cast<std::uint64_t>(a.p));
  const schedule phase = gatherer(rank).build(gather_args(a), rank);
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
  const algorithm& ga = gatherer(no_rank);
  const double gather = ga.cost != nullptr ? ga.cost(gather_args(a), elem, m) : 0.0;
  return gather + m.gamma * vec * (a.p - 1);
}

const algorithm info{
    .name = "k_bruck",
    .coll = collective::allreduce,
    .summary =
        "allgather k_bruck then a local left fold in rank order (Open MPI allgather_reduce over k_bruck; radix "
        "param, default 2): k-1 ports ceil(log_k p) rounds, one-ported <= (k-1)ceil(log_k p), fixed order; "
        "R alpha + beta m(p-1) + gamma m(p-1)",
    .fixed_order = true,
    .composition = "allgather k_bruck + local fold in rank order",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
