// Allreduce = Träff's halving-circulant reduce-scatter + the allgather on the same circulant
// with the rounds reversed: J. L. Träff, "Optimal, Non-pipelined Reduce-scatter and
// Allreduce Algorithms" (arXiv 2410.14234, 2024). The vector is cut into p near-equal blocks;
// rank r names block (r + j) mod p by its relative index j. Skips s_0 = p,
// s_{k+1} = ceil(s_k / 2), q = ceil(log2 p):
//   reduce-scatter, k = 0 .. q-1 (h = s_{k+1}): send the partials of j = h .. s_k - 1 to
//     r + h, combine those from r - h into j = 0 .. s_k - h - 1; block r is complete after q;
//   allgather, k = q-1 .. 0: send the final blocks j = 0 .. s_k - h - 1 to r - h, receive
//     j = h .. s_k - 1 from r + h; after round k the blocks 0 .. s_k - 1 are final.
// Every rank sends 2(p-1) blocks, receives 2(p-1) and combines p-1: volume-optimal, as the
// ring, in 2 ceil(log2 p) rounds instead of 2(p-1), for any p. Works in the receive buffer
// (in place ok; blocks are read from the send buffer only before anything lands on them).
// Contributions meet out of rank order: commutative operators only. One partner pair per
// round: not a multi-port algorithm.
// Rounds: 2q. Cost: round k of each phase moves floor(s_k/2) blocks of at most ceil(m/p):
// 2q alpha + sum_k W_k (2 beta + gamma) ~ 2q alpha + (p-1)/p m (2 beta + gamma).
// See docs/algorithms.md, "allreduce".
#include "patterns/halving_skips.hpp"
#include "patterns/reduce_blocks.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, a.count);
  detail::block_store st(s, detail::equal_split(a.count, a.p), out_buffer, 0, /*out_may_alias_in=*/true);
  const std::vector<detail::halving_round> rounds = detail::halving_rounds(a.p);
  const auto ahead = [&](int d) { return detail::cyclic(static_cast<long long>(rank) + d, a.p); };
  for (const detail::halving_round& rd : rounds) {  // reduce-scatter
    detail::exchange e;
    e.send_to = ahead(rd.skip);
    e.send_blocks = detail::relative_blocks(rank, rd.skip, rd.size, a.p);
    e.recv_from = ahead(-rd.skip);
    e.recv_blocks = detail::relative_blocks(rank, 0, rd.moved(), a.p);
    e.combines = true;
    e.incoming_lower = true;
    st.round(e);
  }
  for (auto it = rounds.rbegin(); it != rounds.rend(); ++it) {  // allgather, skips reversed
    detail::exchange e;
    e.send_to = ahead(-it->skip);
    e.send_blocks = detail::relative_blocks(rank, 0, it->moved(), a.p);
    e.recv_from = ahead(it->skip);
    e.recv_blocks = detail::relative_blocks(rank, it->skip, it->size, a.p);
    e.combines = false;
    st.round(e);
  }
  st.settle_all();  // p == 1
  return s;
}

// Each phase, round k: alpha + W_k bytes, W_k the largest floor(s_k/2) cyclically
// consecutive blocks of the near-equal split; the reduce-scatter pays beta + gamma per byte,
// the allgather beta.
double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  std::vector<std::uint64_t> counts;
  for (const detail::elem_range& b : detail::equal_split(a.count, a.p)) counts.push_back(b.count);
  double t = 0;
  for (const detail::halving_round& rd : detail::halving_rounds(a.p)) {
    const double w = static_cast<double>(detail::max_cyclic_window(counts, rd.moved()) * elem);
    t += 2 * m.alpha + w * (2 * m.beta + m.gamma);
  }
  return t;
}

const algorithm info{
    .name = "circulant_halving",
    .coll = collective::allreduce,
    .summary =
        "Träff's halving-circulant reduce-scatter + reversed allgather: 2 ceil(log2 p) rounds, "
        "2 ceil(log2 p) alpha + (p-1)/p m (2 beta + gamma); commutative operators",
    .needs_commutative = true,
    .composition = "reduce_scatter circulant_halving + allgather on the same circulant, skips reversed",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
