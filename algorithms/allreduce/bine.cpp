// Allreduce, Bine butterfly, bandwidth-optimal (D. De Sensi, S. Pasqualoni, L. Piarulli,
// T. Bonato, S. Ba, M. Turisini, J. Domke, T. Hoefler, "Bine Trees: Enhancing Collective
// Operations by Optimizing Communication Locality", SC 2025, arXiv 2508.17311): a
// reduce-scatter then an allgather over the Bine butterfly (patterns/bine.hpp). With
// q = 2^s ranks, step k = 0 .. s-1 pairs r with r +- rho(k) (+ for even r; rho(k) =
// sum_{i<=k} (-2)^i = 1, -1, 3, -5, ...: the largest halves travel the shortest distances),
// and the allgather repeats the steps backwards. The vector is cut into q blocks labelled by
// nu(r) = bit_reverse(gray(negabinary(r odd ? r : -r))): after reduce-scatter step k rank r
// owns the 2^(s-1-k) blocks whose label agrees with nu(r) in the top k+1 bits, so every
// message is one contiguous range of the vector (Swing, allreduce/swing_bandwidth.cpp, has
// the same peers and the same sets of ranks behind each block but keeps block b at rank
// b's place, so its messages are strided sets of blocks). Other p: folded to
// q = floor_pow2(p) as MPICH does (patterns/folding.hpp; ranks 2i, 2i+1 for i < p - q pair
// up), as the authors' latency-optimal Bine allreduce does (their bandwidth-optimal one
// takes powers of two only): the folded-away rank sends its vector to its neighbour first
// and gets the result back last. Partials are combined in butterfly order:
// commutative operators only. Works in the receive buffer (in place ok).
// Rounds: 2 log2 p one-ported (p a power of two), 2 log2 q + 2 otherwise; a butterfly step
// has one peer, so k ports do not shorten it.
// Cost: 2 log2 q alpha + (q-1)/q m (2 beta + gamma) (+ 2 alpha + (2 beta + gamma) m folded).
// See docs/algorithms.md, "allreduce".
#include <stdexcept>
#include <utility>
#include <vector>

#include "patterns/bine.hpp"
#include "patterns/butterfly_allreduce.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

std::vector<int> labels(detail::bine_label_range r) {
  std::vector<int> out;
  for (int j = 0; j < r.count; ++j) out.push_back(r.first + j);
  return out;
}

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const detail::fold_plan f(a.p);
  const int q = f.pof2, count = detail::swing_steps(q);
  detail::block_store st(s, detail::equal_split(n, q), out_buffer, 0, /*out_may_alias_in=*/true);
  const int v = f.newrank(rank);  // -1: folded away, idle during the butterfly
  std::vector<detail::butterfly_step> steps;
  if (v >= 0)
    for (int k = 0; k < count; ++k) {
      if (!detail::bine_butterfly_consistent(v, k, q)) throw std::logic_error("bine: butterfly labels overlap");
      detail::butterfly_step b;
      b.peer = detail::bine_butterfly_peer(v, k, q);
      b.mine = labels(detail::bine_kept(v, k, count));
      b.theirs = labels(detail::bine_kept(b.peer, k, count));
      steps.push_back(std::move(b));
    }
  detail::butterfly_allreduce(st, f, rank, steps, count);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::butterfly_allreduce_cost(a, elem, m, detail::swing_steps(detail::fold_plan(a.p).pof2));
}

const algorithm info{
    .name = "bine",
    .coll = collective::allreduce,
    .summary =
        "Bine butterfly (De Sensi et al. SC 2025): reduce-scatter over r +- rho(k) on contiguous nu-labelled "
        "blocks + allgather backwards, other p folded: 2 log2 p' (+2) rounds, 2 log2 p' alpha + (p'-1)/p' m "
        "(2 beta + gamma) (+ 2 alpha + (2 beta + gamma) m); commutative operators",
    .needs_commutative = true,
    .composition = "reduce-scatter + allgather (Bine butterfly)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
