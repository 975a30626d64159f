// Gather (and gatherv), Bine tree (D. De Sensi, S. Pasqualoni, L. Piarulli, T. Bonato,
// S. Ba, M. Turisini, J. Domke, T. Hoefler, "Bine Trees: Enhancing Collective Operations by
// Optimizing Communication Locality", SC 2025, arXiv 2508.17311): the reduce's Bine tree
// (reduce/bine.cpp, patterns/bine.hpp), distance doubling (|rho(j)| = 1, 1, 3, 5, 11, ... in
// step j), each rank forwarding the blocks of its whole subtree to its parent in one message.
// A Bine subtree is a contiguous range of ranks mod p (the authors' gather extends that range
// alternately up and down), so a message is at most two pieces of the root's layout. Other
// p (the authors' tree code is written for powers of two): folded to q = floor_pow2(p)
// (patterns/folding.hpp; the root's pair keeps the root): a first round in which each
// folded-away rank sends its block to its neighbour.
// Rounds: ceil(log2 p) one-ported (log2 q + 1 when folded); the tree is binomial, so k ports
// do not shorten it. Cost: ceil(log2 p) alpha + (p-1)/p beta M, M = all blocks' bytes (every
// block crosses log2 p edges in the worst case, but each round's messages carry the blocks
// once: the root receives M (p-1)/p in all).
// See docs/algorithms.md, "gather".
#include "patterns/bine.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const detail::bine_tree_plan plan(a.p, a.root);
  const int v = plan.rel(rank), partner = plan.f.partner(rank);
  const region own{in_buffer, 0, block_count(a, rank)};
  // Where this rank collects the blocks it forwards: the root's receive buffer, or a scratch
  // buffer in the root's layout, displacements included (only when something arrives).
  const bool collects = rank == a.root || (v >= 0 && plan.subtree_ranks(v).size() > 1);
  const buffer_id store =
      rank == a.root ? out_buffer : (collects ? s.scratch(buffer_extents(a, a.root).out) : out_buffer);
  auto at = [&](int j) { return region{store, block_offset(a, j), block_count(a, j)}; };
  auto from = [&](int j) { return j == rank ? own : at(j); };
  if (rank == a.root) s.copy(own, at(rank));
  if (plan.f.rem > 0) {
    s.next_round();
    if (partner != no_rank) {
      if (v < 0)
        s.send(partner, own);
      else
        s.recv(partner, at(partner));
    }
  }
  const int steps = plan.t.s;
  const int sends = v < 0 ? -1 : (v == 0 ? steps : steps - 1 - plan.t.recv_step(v));
  for (int j = 0; j < steps; ++j) {
    s.next_round();
    if (v < 0 || j > sends) continue;
    const int peer = plan.t.peer(v, steps - 1 - j);
    detail::region_list l;
    if (j == sends) {
      for (int r : plan.subtree_ranks(v)) l.add(from(r));
      detail::send_list(s, plan.real(peer), l);
    } else {
      for (int r : plan.subtree_ranks(peer)) l.add(at(r));
      detail::recv_list(s, plan.real(peer), l);
    }
  }
  s.trim();
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double M = static_cast<double>(total_count(a) * elem);
  return detail::ceil_log2(static_cast<std::uint64_t>(a.p)) * m.alpha + (a.p - 1.0) / a.p * M * m.beta;
}

const algorithm info{
    .name = "bine",
    .serves = {collective::gather, collective::gatherv},
    .summary =
        "Bine tree (De Sensi et al. SC 2025), distances +-rho(t), subtrees contiguous mod p, other p folded: "
        "ceil(log2 p) rounds, ceil(log2 p) alpha + (p-1)/p beta M",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
