// Reduce, Bine tree (D. De Sensi, S. Pasqualoni, L. Piarulli, T. Bonato, S. Ba,
// M. Turisini, J. Domke, T. Hoefler, "Bine Trees: Enhancing Collective Operations by
// Optimizing Communication Locality", SC 2025, arXiv 2508.17311): the broadcast's Bine tree
// (bcast/bine.cpp, patterns/bine.hpp) run backwards, distance doubling: with q = 2^s ranks
// and x the s-bit negabinary pattern of v = r - root mod q, in step j = 0 .. s-1 the peer's
// pattern is x with its low j+1 bits flipped (distance |rho(j)| = 1, 1, 3, 5, 11, ...); a
// rank combines what its children send in the steps before the one in which it sends its
// partial to its parent, and the root combines in every step. Other p (the authors' tree
// code takes powers of two only): folded to q = floor_pow2(p) (patterns/folding.hpp;
// the root's pair keeps the root): in a first round each folded-away rank sends its vector
// to its neighbour, which combines. Partials meet in tree order, not rank order:
// commutative operators only.
// Rounds: ceil(log2 p) one-ported (log2 q + 1 when folded); the tree is binomial, so k ports
// do not shorten it. Cost: ceil(log2 p)(alpha + (beta + gamma) m).
// See docs/algorithms.md, "reduce".
#include "patterns/bine.hpp"
#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, rank == a.root ? a.count : 0);
  const detail::bine_tree_plan plan(a.p, a.root);
  const int v = plan.rel(rank);
  const int partner = plan.f.partner(rank);
  // The step in which this rank sends its partial (s for the root: never; -1: folded away).
  const int sends = v < 0 ? -1 : (v == 0 ? plan.t.s : plan.t.s - 1 - plan.t.recv_step(v));
  const bool receives = sends > 0 || (v >= 0 && partner != no_rank);
  const region acc = detail::tree_accumulator(s, a, rank, receives);
  if (plan.f.rem > 0) {
    s.next_round();
    if (partner != no_rank) {
      if (v < 0)
        s.send(partner, acc);
      else
        s.recv(partner, acc, partner < rank ? combine::reduce_in_left : combine::reduce_in_right);
    }
  }
  for (int j = 0; j < plan.t.s; ++j) {
    s.next_round();
    if (v < 0 || j > sends) continue;
    // Step j of the reduce is step s-1-j of the broadcast tree.
    const int peer = plan.real(plan.t.peer(v, plan.t.s - 1 - j));
    if (j == sends)
      s.send(peer, acc);
    else
      s.recv(peer, acc, combine::reduce_in_right);
  }
  s.trim();
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::ceil_log2(static_cast<std::uint64_t>(a.p)) *
         (m.alpha + (m.beta + m.gamma) * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "bine",
    .coll = collective::reduce,
    .summary =
        "Bine tree (De Sensi et al. SC 2025), the bcast tree backwards over distances +-rho(t), other p "
        "folded: ceil(log2 p) rounds, ceil(log2 p)(alpha + (beta + gamma) m); commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
