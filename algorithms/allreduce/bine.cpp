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

#include "patterns/bine.hpp"
#include "patterns/recursive_halving.hpp"
#include "patterns/reduce_blocks.hpp"
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
  const int q = f.pof2, steps = detail::swing_steps(q);
  detail::block_store st(s, detail::equal_split(n, q), out_buffer, 0, /*out_may_alias_in=*/true);
  const int v = f.newrank(rank);  // -1: folded away, idle during the butterfly
  std::vector<int> peer(static_cast<std::size_t>(steps));
  std::vector<std::vector<int>> mine(static_cast<std::size_t>(steps)), theirs(static_cast<std::size_t>(steps));
  if (v >= 0)
    for (int k = 0; k < steps; ++k) {
      const std::size_t i = static_cast<std::size_t>(k);
      if (!detail::bine_butterfly_consistent(v, k, q)) throw std::logic_error("bine: butterfly labels overlap");
      peer[i] = detail::bine_butterfly_peer(v, k, q);
      mine[i] = labels(detail::bine_kept(v, k, steps));
      theirs[i] = labels(detail::bine_kept(peer[i], k, steps));
    }
  if (f.rem > 0) detail::fold_round(st, f, rank);
  for (int k = 0; k < steps; ++k) {  // reduce-scatter, distance doubling
    const std::size_t i = static_cast<std::size_t>(k);
    detail::exchange e;
    if (v >= 0) {
      e.send_to = e.recv_from = f.real(peer[i]);
      e.send_blocks = theirs[i];
      e.recv_blocks = mine[i];
      e.combines = true;
      e.incoming_lower = peer[i] < v;
    }
    st.round(e);
  }
  for (int k = steps - 1; k >= 0; --k) {  // allgather, distance halving
    const std::size_t i = static_cast<std::size_t>(k);
    detail::exchange e;
    if (v >= 0) {
      e.send_to = e.recv_from = f.real(peer[i]);
      e.send_blocks = mine[i];
      e.recv_blocks = theirs[i];
      e.combines = false;
    }
    st.round(e);
  }
  if (f.rem > 0) {
    const std::vector<int> all = detail::all_blocks(st.size());
    detail::unfold_round(st, f, rank, all, all);
  }
  st.settle_all();  // p == 1
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const detail::fold_plan f(a.p);
  const int steps = detail::swing_steps(f.pof2);
  const double bytes = static_cast<double>(a.count * elem);
  const double frac = static_cast<double>(f.pof2 - 1) / f.pof2;
  double t = 2 * steps * m.alpha + frac * bytes * (2 * m.beta + m.gamma);
  if (f.rem > 0) t += 2 * m.alpha + (2 * m.beta + m.gamma) * bytes;
  return t;
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
