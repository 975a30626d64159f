// Allreduce, Swing, bandwidth-optimal variant (D. De Sensi, T. Bonato, D. Saam, T. Hoefler,
// "Swing: Short-cutting Rings for Higher Bandwidth Allreduce", NSDI 2024, arXiv 2401.09356):
// a reduce-scatter over the Swing peers pi(r, s) = r +- rho(s) mod p, s = 0 .. log2 p - 1,
// then an allgather over the same peers in reverse order (patterns/swing.hpp). The vector is
// cut into p near-equal blocks, block b being rank b's result after the reduce-scatter.
// Which blocks move is found by simulation: B(x, L) = {x}, B(x, s) = B(x, s+1) u
// B(pi(x, s), s+1) (the blocks rank x gathers in allgather steps L-1 .. s). Reduce-scatter
// step s: send the partials of B(pi(r,s), s+1), the blocks the peer's subtree ends with, and
// combine those of B(r, s+1); half of the blocks still owned each time. Allgather step s
// (s = L-1 .. 0): send the final blocks B(r, s+1), receive B(pi(r,s), s+1). The builder
// checks that every union is disjoint; then each contribution to block b travels one path,
// ending at rank b. Blocks are combined in peer order, not rank order: commutative operators
// only. p not a power of two (not the paper's extension): MPICH-style folding to the largest
// power of two p' <= p (patterns/folding.hpp), as in rabenseifner: ranks 2i and 2i+1
// (i < rem = p - p') pair up, 2i sends its vector to 2i+1 before the Swing steps among the
// p' survivors, and gets the result back after them. Works in the receive buffer (in place ok).
// Rounds: 2 log2 p (p a power of two), 2 log2 p' + 2 otherwise.
// Cost: 2 log2 p alpha + 2 (p-1)/p beta m + (p-1)/p gamma m (p = p'), plus
// 2 alpha + (2 beta + gamma) m when folding.
#include <utility>
#include <vector>

#include "patterns/butterfly_allreduce.hpp"
#include "patterns/swing.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const detail::fold_plan f(a.p);
  detail::block_store st(s, detail::equal_split(n, f.pof2), out_buffer, 0, /*out_may_alias_in=*/true);
  const int count = detail::swing_steps(f.pof2);
  const int v = f.newrank(rank);  // -1: folded away, idle during the Swing steps
  std::vector<detail::butterfly_step> steps;
  if (v >= 0)
    for (int k = 0; k < count; ++k) {
      detail::butterfly_step b;
      b.peer = detail::swing_peer(v, k, f.pof2);
      b.mine = detail::swing_owned(v, k + 1, f.pof2);
      b.theirs = detail::swing_owned(b.peer, k + 1, f.pof2);
      steps.push_back(std::move(b));
    }
  detail::butterfly_allreduce(st, f, rank, steps, count);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::butterfly_allreduce_cost(a, elem, m, detail::swing_steps(detail::fold_plan(a.p).pof2));
}

const algorithm info{
    .name = "swing_bandwidth",
    .coll = collective::allreduce,
    .summary =
        "Swing, bandwidth-optimal (De Sensi et al. NSDI 2024): reduce-scatter over peers r +- rho(s), "
        "rho = 1, -1, 3, -5, ..., + allgather backwards, other p by folding: 2 log2 p' (+2) rounds, "
        "2 log2 p' alpha + (p'-1)/p' m (2 beta + gamma) (+ 2 alpha + (2 beta + gamma) m); commutative operators",
    .needs_commutative = true,
    .composition = "reduce-scatter + allgather (Swing peers)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
