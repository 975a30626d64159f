// Broadcast = binomial scatter + ring allgather, as MPICH does it for long messages
// (MPIR_Bcast_intra_scatter_ring_allgather; seed 003, Section III, "MPI_Bcast_native").
// The buffer is cut into p chunks (chunk v for root-relative rank v: floor or ceil of
// count/p elements, the last ones empty when count < p), scattered down the top-down binomial
// tree, then a ring allgather of p - 1 steps: in step t rank v sends chunk (v - t) mod p to
// v + 1 and receives chunk (v - 1 - t) mod p from v - 1. Every chunk reaches every rank,
// even those that already hold it from the scatter: p(p - 1) chunk transfers in the ring.
// Rounds: ceil(log2 p) + p - 1. Cost: (ceil(log2 p) + p - 1) alpha + 2 beta m (p - 1)/p.
#include "patterns/bcast_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const detail::chunking ch{a.count, a.p};
  const int v = detail::relative(rank, a.root, a.p);
  detail::add_chunk_scatter(s, ch, v, a.root);
  detail::add_chunk_ring(s, ch, v, a.root, /*only_missing=*/false);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  const double rounds = detail::ceil_log2(static_cast<std::uint64_t>(a.p)) + a.p - 1;
  return rounds * m.alpha + 2 * m.beta * bytes * (a.p - 1) / a.p;
}

const algorithm info{
    .name = "scatter_ring",
    .coll = collective::bcast,
    .summary = "MPICH long-message bcast: binomial scatter + ring allgather, p(p-1) chunk transfers: "
               "ceil(log2 p)+p-1 rounds, (ceil(log2 p)+p-1) alpha + 2 beta m (p-1)/p",
    .composition = "scatter + allgather (seed 001 improved broadcast; MPICH scatter + ring allgather, seed 003)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
