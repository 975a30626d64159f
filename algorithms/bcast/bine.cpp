// Broadcast, Bine tree (D. De Sensi, S. Pasqualoni, L. Piarulli, T. Bonato, S. Ba,
// M. Turisini, J. Domke, T. Hoefler, "Bine Trees: Enhancing Collective Operations by
// Optimizing Communication Locality", SC 2025, arXiv 2508.17311): a binomial tree whose
// edges join ranks whose distances are negabinary, |rho(t)| = 1, 1, 3, 5, 11, 21, ...
// (rho(t) = sum_{i<=t} (-2)^i), so that most messages go to near ranks. With q = 2^s ranks
// and x the s-bit negabinary pattern of v = r - root mod q, in step i = 0 .. s-1 the peer's
// pattern is x with its low s-i bits flipped (distance |rho(s-1-i)|, halving); a rank
// receives in the first step whose low s-i bits of x are all equal and sends in every later
// step (patterns/bine.hpp). Other p (the authors' tree code takes powers of two only):
// folded to q = floor_pow2(p) (patterns/folding.hpp; the root's pair keeps the root), and
// each survivor hands the buffer to its folded-away neighbour in one last round.
// Rounds: ceil(log2 p) one-ported (log2 q + 1 when folded); the tree is binomial, so k ports
// do not shorten it. Cost: ceil(log2 p)(alpha + beta m).
// See docs/algorithms.md, "bcast".
#include "patterns/bine.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const region all{out_buffer, 0, a.count};
  const detail::bine_tree_plan plan(a.p, a.root);
  const int v = plan.rel(rank);
  const int got = v >= 0 ? plan.t.recv_step(v) : plan.t.s;
  for (int i = 0; i < plan.t.s; ++i) {
    s.next_round();
    if (v < 0 || i < got) continue;
    const int peer = plan.real(plan.t.peer(v, i));
    if (i == got)
      s.recv(peer, all);
    else
      s.send(peer, all);
  }
  if (plan.f.rem > 0) {
    s.next_round();
    const int partner = plan.f.partner(rank);
    if (partner != no_rank) {
      if (v >= 0)
        s.send(partner, all);
      else
        s.recv(partner, all);
    }
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::ceil_log2(static_cast<std::uint64_t>(a.p)) * (m.alpha + m.beta * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "bine",
    .coll = collective::bcast,
    .summary =
        "Bine tree (De Sensi et al. SC 2025): binomial tree over negabinary distances +-rho(t), other p "
        "folded: ceil(log2 p) rounds, ceil(log2 p)(alpha + beta m)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
