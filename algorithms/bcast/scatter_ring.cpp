// Broadcast = binomial scatter + ring allgather, in two variants registered from this file.
// The buffer is cut into p chunks (chunk v for root-relative rank v: floor or ceil of count/p
// elements, the last ones empty when count < p), scattered down the binomial tree
// (patterns/chunking.hpp), then passed round a ring of p - 1 steps: in step t rank v sends
// chunk (v - t) mod p to v + 1 and receives chunk (v - 1 - t) mod p from v - 1.
// - scatter_ring: MPICH's long-message broadcast (MPIR_Bcast_intra_scatter_ring_allgather,
//   "MPI_Bcast_native" in H. Zhou et al., "A Bandwidth-saving Optimization for MPI Broadcast
//   Collective Operation"). Every chunk reaches every rank, even those that already hold it
//   from the scatter: p(p - 1) chunk transfers in the ring.
// - scatter_ring_tuned: the bandwidth-saving ring of H. Zhou et al. ("MPI_Bcast_opt"), which
//   moves only the chunks a rank lacks. After the scatter, relative rank v holds the chunks of
//   its subtree [v, v + min(lowbit v, p - v)) (all p for the root), and it receives a chunk
//   only when that chunk lies outside its subtree. The sender computes the same test for its
//   successor and skips the same transfers, so no message is wasted; a rank still forwards in
//   step t the chunk it received in step t - 1 (or its own in step 0), because a chunk it did
//   not receive lies in its own subtree. The ring still takes p - 1 steps (a rank holding one
//   chunk receives in every step). Chunk transfers: sum over v of (p - subtree(v)) =
//   p(p - 1) - sum_{v<p} popcount(v), since v has popcount(v) proper ancestors in the scatter
//   tree; e.g. p = 8: 44 instead of 56, p = 10: 75 instead of 90 (the paper's Figures 4 and 5).
// Rounds (both): ceil(log2 p) + p - 1. Cost (model time, the same critical path):
// (ceil(log2 p) + p - 1) alpha + 2 beta m (p - 1)/p; the tuned ring's total volume is
// (p(p-1) - sum popcount) m/p.
#include "patterns/chunking.hpp"
#include "patterns/ring.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

template <bool only_missing>
schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const detail::chunking ch{a.count, a.p};
  const int v = detail::relative(rank, a.root, a.p);
  detail::add_chunk_scatter(s, ch, v, a.root);
  if (a.p == 1) return s;
  const detail::ring ring{a.p, v};
  const detail::tree scatter_tree{detail::tree_shape::binomial, a.p};
  // Whether relative rank w holds `chunk` from the scatter.
  auto scattered = [&](int chunk, int w) { return chunk >= w && chunk < w + scatter_tree.subtree_size(w); };
  for (int t = 0; t + 1 < a.p; ++t) {
    s.next_round();
    const int out = ring.allgather_sent(t), in = ring.allgather_received(t);
    if (!only_missing || !scattered(out, ring.right()))
      s.send(detail::absolute(ring.right(), a.root, a.p), ch.range(out, 1));
    if (!only_missing || !scattered(in, v)) s.recv(detail::absolute(ring.left(), a.root, a.p), ch.range(in, 1));
  }
  s.trim();
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  const double rounds = detail::ceil_log2(static_cast<std::uint64_t>(a.p)) + a.p - 1;
  return rounds * m.alpha + 2 * m.beta * bytes * (a.p - 1) / a.p;
}

const algorithm native{
    .name = "scatter_ring",
    .coll = collective::bcast,
    .summary =
        "MPICH long-message bcast: binomial scatter + ring allgather, p(p-1) chunk transfers: "
        "ceil(log2 p)+p-1 rounds, (ceil(log2 p)+p-1) alpha + 2 beta m (p-1)/p",
    .composition =
        "scatter + allgather (5DV050 lecture improved broadcast; MPICH scatter + ring allgather, Zhou et al.)",
    .build = build<false>,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(native);

const algorithm tuned{
    .name = "scatter_ring_tuned",
    .coll = collective::bcast,
    .summary =
        "Zhou et al. tuned bcast: binomial scatter + ring allgather that moves only missing chunks, "
        "p(p-1) - sum popcount(v) transfers: ceil(log2 p)+p-1 rounds",
    .composition = "scatter + allgather (5DV050 lecture improved broadcast; Zhou et al. bandwidth-saving ring)",
    .build = build<true>,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(tuned);

}  // namespace
}  // namespace ranklab
