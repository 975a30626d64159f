// Reduce-scatter (and reduce_scatter_block), Bine butterfly (D. De Sensi, S. Pasqualoni,
// L. Piarulli, T. Bonato, S. Ba, M. Turisini, J. Domke, T. Hoefler, "Bine Trees: Enhancing
// Collective Operations by Optimizing Communication Locality", SC 2025, arXiv 2508.17311):
// the reduce-scatter half of allreduce/bine.cpp on the callers' result blocks. With
// q = 2^s ranks, step k = 0 .. s-1 pairs r with r +- rho(k) (+ for even r; rho(k) = 1, -1,
// 3, -5, ...: half of the data still held goes the shortest distance first); rank r keeps the
// result blocks of the ranks whose label nu (patterns/bine.hpp) agrees with nu(r) in the top
// k+1 bits and sends its peer those of the other half, which reaches rank b's block after s
// steps at rank b. Relabelling the blocks (allreduce/bine.cpp) would make each message
// contiguous but move rank b's result; here a message is a list of regions, so the blocks
// stay where the caller put them. Other p: folded to q = floor_pow2(p) as MPICH does
// (patterns/folding.hpp): a folded-away rank sends all its blocks to its neighbour first,
// which stands for both, and gets its own result block back last. Partials combine in
// butterfly order: commutative operators only.
// Rounds: log2 p one-ported (p a power of two), log2 q + 2 otherwise; one peer per step, so
// k ports do not shorten it.
// Cost: log2 q alpha + (q-1)/q M (beta + gamma) (+ 2 alpha + M (beta + gamma) + M/p beta
// folded), M = all result blocks' bytes.
// See docs/algorithms.md, "reduce_scatter".
#include <stdexcept>

#include "patterns/bine.hpp"
#include "patterns/reduce_scatter_phase.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

// The result blocks (real ranks) behind the labels of `range` among the q survivors.
std::vector<int> blocks_behind(const detail::fold_plan& f, detail::bine_label_range range) {
  std::vector<int> out;
  for (int v : detail::bine_ranks_of(range, f.pof2))
    for (int r = f.first_rank(v); r <= f.last_rank(v); ++r) out.push_back(r);
  return out;
}

schedule build(const coll_args& a, int rank) {
  schedule s = detail::reduce_scatter_schedule(a, rank);
  detail::block_store st = detail::result_store(s, rank, detail::result_blocks(a));
  const detail::fold_plan f(a.p);
  const int q = f.pof2, steps = detail::swing_steps(q);
  const int v = f.newrank(rank);
  if (f.rem > 0) detail::fold_round(st, f, rank);
  for (int k = 0; k < steps; ++k) {
    detail::exchange e;
    if (v >= 0) {
      if (!detail::bine_butterfly_consistent(v, k, q)) throw std::logic_error("bine: butterfly labels overlap");
      const int peer = detail::bine_butterfly_peer(v, k, q);
      e.send_to = e.recv_from = f.real(peer);
      e.send_blocks = blocks_behind(f, detail::bine_kept(peer, k, steps));
      e.recv_blocks = blocks_behind(f, detail::bine_kept(v, k, steps));
      e.combines = true;
      e.incoming_lower = peer < v;
    }
    st.round(e);
  }
  if (f.rem > 0) detail::unfold_round(st, f, rank, {f.partner(rank)}, {rank});
  st.settle(rank);  // p == 1
  return s;
}

const algorithm info{
    .name = "bine",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary =
        "Bine butterfly (De Sensi et al. SC 2025): peers r +- rho(k), distance doubling, other p folded: "
        "log2 p' (+2) rounds, log2 p' alpha + (p'-1)/p' M (beta + gamma) (+ folding); commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = detail::halving_reduce_scatter_cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
