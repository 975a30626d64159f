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
#include "patterns/allgather_fold.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

const algorithm& gatherer(int rank) { return detail::allgather_fold_gatherer("k_bruck", "k_bruck", rank); }

schedule build(const coll_args& a, int rank) {
  return detail::allgather_fold_build(a, rank, gatherer(rank), detail::allgather_fold_args(a, a.params.radix));
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::allgather_fold_cost(a, elem, m, gatherer(no_rank), detail::allgather_fold_args(a, a.params.radix));
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
