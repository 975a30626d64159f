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
#include "patterns/allgather_fold.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

const algorithm& gatherer(int rank) { return detail::allgather_fold_gatherer("bruck", "allgather_reduce", rank); }

schedule build(const coll_args& a, int rank) {
  return detail::allgather_fold_build(a, rank, gatherer(rank), detail::allgather_fold_args(a, 0));
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::allgather_fold_cost(a, elem, m, gatherer(no_rank), detail::allgather_fold_args(a, 0));
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
