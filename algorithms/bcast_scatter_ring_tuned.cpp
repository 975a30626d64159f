// Broadcast = binomial scatter + tuned ring allgather (seed 003, "MPI_Bcast_opt"): as
// scatter_ring, but the ring moves only the chunks a rank lacks. After the top-down binomial
// scatter, relative rank v holds the chunks of its subtree [v, v + min(lowbit v, p - v))
// (all p for the root); in ring step t it would receive chunk (v - 1 - t) mod p from v - 1,
// and it does so only when that chunk lies outside its subtree. The sender computes the same
// test for its successor and skips the same transfers, so no message is wasted and the ring
// still takes p - 1 steps (a rank holding one chunk receives in every step).
// Chunk transfers in the ring: sum over v of (p - subtree(v)) = p(p - 1) - sum_{v<p}
// popcount(v), since v has popcount(v) proper ancestors in the scatter tree and
// sum_v subtree(v) = sum_v (1 + ancestors(v)); e.g. p = 8: 44 instead of 56, p = 10: 75
// instead of 90 (the paper's Figures 4 and 5). Every chunk reaches every rank exactly once.
// Rounds: ceil(log2 p) + p - 1. Cost (model time, same critical path as scatter_ring):
// (ceil(log2 p) + p - 1) alpha + 2 beta m (p - 1)/p; total volume (p(p-1) - sum popcount) m/p.
#include "patterns/bcast_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const detail::chunking ch{a.count, a.p};
  const int v = detail::relative(rank, a.root, a.p);
  detail::add_chunk_scatter(s, ch, v, a.root);
  detail::add_chunk_ring(s, ch, v, a.root, /*only_missing=*/true);
  s.trim();
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  const double rounds = detail::ceil_log2(static_cast<std::uint64_t>(a.p)) + a.p - 1;
  return rounds * m.alpha + 2 * m.beta * bytes * (a.p - 1) / a.p;
}

const algorithm info{
    .name = "scatter_ring_tuned",
    .coll = collective::bcast,
    .summary = "seed 003 tuned bcast: binomial scatter + ring allgather that moves only missing chunks, "
               "p(p-1) - sum popcount(v) transfers: ceil(log2 p)+p-1 rounds",
    .composition = "scatter + allgather (seed 001 improved broadcast; seed 003 bandwidth-saving ring)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
