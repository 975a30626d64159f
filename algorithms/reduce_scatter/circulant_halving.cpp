// Reduce_scatter(_block), round-optimal and volume-optimal without pipelining: J. L. Träff,
// "Optimal, Non-pipelined Reduce-scatter and Allreduce Algorithms" (arXiv 2410.14234, 2024).
// The communication graph is the circulant with the halving skips s_0 = p,
// s_{k+1} = ceil(s_k / 2): rank r names block (r + j) mod p by its relative index j and
// holds partials of the indices 0 .. s_k - 1 before round k. In round k (skip h = s_{k+1})
// it sends the partials of j = h .. s_k - 1 to r + h (where they are that rank's indices
// 0 .. s_k - h - 1) and combines the ones arriving from r - h into its own 0 .. s_k - h - 1;
// it keeps 0 .. h - 1. After q = ceil(log2 p) rounds index 0, its own block, is complete
// (patterns/halving_skips.hpp has the argument). Each round moves floor(s_k / 2) blocks, so
// every rank sends, receives and combines exactly p - 1 blocks. Any p, irregular counts;
// contributions meet in an order that is not rank order: commutative operators only.
// Blocks are read from the send buffer until something is combined into them
// (patterns/reduce_blocks.hpp), partials live in a scratch buffer laid out like the send
// buffer, the rank's own block in the receive buffer. Not multi-ported (one partner pair
// per round).
// Rounds: q = ceil(log2 p). Cost: round k costs alpha + W_k (beta + gamma), W_k the largest
// floor(s_k/2) cyclically consecutive blocks; with equal blocks of m bytes
// q alpha + (p-1) m (beta + gamma) = q alpha + (p-1)/p M (beta + gamma), M = all blocks' bytes.
// See docs/algorithms.md, "reduce_scatter".
#include "patterns/halving_skips.hpp"
#include "patterns/reduce_scatter_phase.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s = detail::reduce_scatter_schedule(a, rank);
  detail::block_store st = detail::result_store(s, rank, detail::result_blocks(a));
  for (const detail::halving_round& rd : detail::halving_rounds(a.p)) {
    detail::exchange e;
    e.send_to = detail::cyclic(static_cast<long long>(rank) + rd.skip, a.p);
    e.send_blocks = detail::relative_blocks(rank, rd.skip, rd.size, a.p);
    e.recv_from = detail::cyclic(static_cast<long long>(rank) - rd.skip, a.p);
    e.recv_blocks = detail::relative_blocks(rank, 0, rd.moved(), a.p);
    e.combines = true;
    e.incoming_lower = true;  // the partner behind on the circulant; the order is not rank order anyway
    st.round(e);
  }
  st.settle(rank);  // p == 1: nothing was combined into the own block
  return s;
}

// Round k: alpha + W_k (beta + gamma), W_k = bytes of the largest floor(s_k/2) cyclically
// consecutive blocks (what the busiest rank sends, receives and combines in that round).
double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(a.p));
  for (int j = 0; j < a.p; ++j) counts[static_cast<std::size_t>(j)] = block_count(a, j);
  double t = 0;
  for (const detail::halving_round& rd : detail::halving_rounds(a.p)) {
    const double w = static_cast<double>(detail::max_cyclic_window(counts, rd.moved()) * elem);
    t += m.alpha + w * (m.beta + m.gamma);
  }
  return t;
}

const algorithm info{
    .name = "circulant_halving",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary =
        "Träff's halving circulant (skips ceil(s/2)), p-1 blocks per rank: ceil(log2 p) rounds, "
        "ceil(log2 p) alpha + (p-1)/p M (beta + gamma); commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
