// Allgather (and allgatherv), Bine butterfly (D. De Sensi, S. Pasqualoni, L. Piarulli,
// T. Bonato, S. Ba, M. Turisini, J. Domke, T. Hoefler, "Bine Trees: Enhancing Collective
// Operations by Optimizing Communication Locality", SC 2025, arXiv 2508.17311): the
// reduce-scatter butterfly of reduce_scatter/bine.cpp backwards, distance halving. With
// q = 2^s ranks, in step k = s-1 .. 0 rank r exchanges with r +- rho(k) (+ for even r;
// rho(k) = 1, -1, 3, -5, ...), sending the blocks of the 2^(s-1-k) ranks whose label nu
// (patterns/bine.hpp) agrees with nu(r) in the top k+1 bits and receiving the peer's as
// many: one block crosses the longest distance, q/2 blocks the shortest (|rho(0)| = 1). The
// authors' code sends block by block or permutes the vector; here a message is a list of
// regions, so blocks land at their place directly. Other p: folded to q = floor_pow2(p)
// (patterns/folding.hpp): a folded-away rank first sends its block to its neighbour, which
// stands for both, and gets all other blocks from it last.
// Rounds: log2 p one-ported (p a power of two), log2 q + 2 otherwise; one peer per step, so
// k ports do not shorten it.
// Cost: log2 q alpha + (q-1)/q beta M (+ 2 alpha + beta M (1 + 1/p) folded), M = all blocks'
// bytes.
// See docs/algorithms.md, "allgather".
#include <stdexcept>

#include "patterns/bine.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

std::vector<int> blocks_behind(const detail::fold_plan& f, detail::bine_label_range range) {
  std::vector<int> out;
  for (int v : detail::bine_ranks_of(range, f.pof2))
    for (int r = f.first_rank(v); r <= f.last_rank(v); ++r) out.push_back(r);
  return out;
}

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  auto at = [&](int j) { return region{out_buffer, block_offset(a, j), block_count(a, j)}; };
  const region own{in_buffer, 0, block_count(a, rank)};
  auto from = [&](int j) { return j == rank ? own : at(j); };  // own block read from `in`
  s.copy(own, at(rank));
  const detail::fold_plan f(a.p);
  const int q = f.pof2, steps = detail::swing_steps(q);
  const int v = f.newrank(rank), partner = f.partner(rank);
  if (f.rem > 0) {
    s.next_round();
    if (partner != no_rank) {
      if (v < 0)
        s.send(partner, own);
      else
        s.recv(partner, at(partner));
    }
  }
  for (int k = steps - 1; k >= 0; --k) {
    s.next_round();
    if (v < 0) continue;
    if (!detail::bine_butterfly_consistent(v, k, q)) throw std::logic_error("bine: butterfly labels overlap");
    const int peer = detail::bine_butterfly_peer(v, k, q);
    detail::region_list out, in;
    for (int j : blocks_behind(f, detail::bine_kept(v, k, steps))) out.add(from(j));
    for (int j : blocks_behind(f, detail::bine_kept(peer, k, steps))) in.add(at(j));
    detail::send_list(s, f.real(peer), out);
    detail::recv_list(s, f.real(peer), in);
  }
  if (f.rem > 0) {
    s.next_round();
    if (partner != no_rank) {
      detail::region_list l;  // every block but the folded-away rank's own
      const int folded = v >= 0 ? partner : rank;
      for (int j = 0; j < a.p; ++j)
        if (j != folded) l.add(v >= 0 ? from(j) : at(j));
      if (v >= 0)
        detail::send_list(s, partner, l);
      else
        detail::recv_list(s, partner, l);
    }
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const detail::fold_plan f(a.p);
  const double M = static_cast<double>(total_count(a) * elem), q = f.pof2;
  double t = f.levels() * m.alpha + (q - 1) / q * M * m.beta;
  if (f.rem > 0) t += 2 * m.alpha + M * (1 + 1.0 / a.p) * m.beta;
  return t;
}

const algorithm info{
    .name = "bine",
    .serves = {collective::allgather, collective::allgatherv},
    .summary =
        "Bine butterfly (De Sensi et al. SC 2025): peers r +- rho(k), distance halving, other p folded: "
        "log2 p' (+2) rounds, log2 p' alpha + (p'-1)/p' beta M (+ 2 alpha + beta M (1 + 1/p))",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
