// Scatter (and scatterv), Bine tree (D. De Sensi, S. Pasqualoni, L. Piarulli, T. Bonato,
// S. Ba, M. Turisini, J. Domke, T. Hoefler, "Bine Trees: Enhancing Collective Operations by
// Optimizing Communication Locality", SC 2025, arXiv 2508.17311): the broadcast's Bine tree
// (bcast/bine.cpp, patterns/bine.hpp), distance halving (|rho(s-1-i)| in step i), each rank
// passing a child the blocks of the child's whole subtree, a contiguous range of ranks mod p
// (at most two pieces of the root's layout). Other p (the authors' tree code is written
// for powers of two): folded to q = floor_pow2(p) (patterns/folding.hpp; the root's pair keeps
// the root): a last round in which each survivor hands its folded-away neighbour its block.
// Rounds: ceil(log2 p) one-ported (log2 q + 1 when folded); the tree is binomial, so k ports
// do not shorten it. Cost: ceil(log2 p) alpha + (p-1)/p beta M, M = all blocks' bytes.
// See docs/algorithms.md, "scatter".
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
  const region mine{out_buffer, 0, block_count(a, rank)};
  // Blocks passing through this rank: the root's send buffer, or a scratch buffer in the
  // root's layout, displacements included (only when there is more than this rank's own block); the own block always
  // lands in the receive buffer.
  const bool forwards = rank != a.root && v >= 0 && plan.subtree_ranks(v).size() > 1;
  const buffer_id store = rank == a.root ? in_buffer : (forwards ? s.scratch(buffer_extents(a, a.root).in) : in_buffer);
  auto at = [&](int j) { return region{store, block_offset(a, j), block_count(a, j)}; };
  auto into = [&](int j) { return j == rank ? mine : at(j); };
  if (rank == a.root) s.copy(at(rank), mine);
  const int steps = plan.t.s;
  const int got = v >= 0 ? plan.t.recv_step(v) : steps;
  for (int i = 0; i < steps; ++i) {
    s.next_round();
    if (v < 0 || i < got) continue;
    const int peer = plan.t.peer(v, i);
    detail::region_list l;
    if (i == got) {
      for (int r : plan.subtree_ranks(v)) l.add(into(r));
      detail::recv_list(s, plan.real(peer), l);
    } else {
      for (int r : plan.subtree_ranks(peer)) l.add(at(r));
      detail::send_list(s, plan.real(peer), l);
    }
  }
  if (plan.f.rem > 0) {
    s.next_round();
    if (partner != no_rank) {
      if (v >= 0)
        s.send(partner, at(partner));
      else
        s.recv(partner, mine);
    }
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double M = static_cast<double>(total_count(a) * elem);
  return detail::ceil_log2(static_cast<std::uint64_t>(a.p)) * m.alpha + (a.p - 1.0) / a.p * M * m.beta;
}

const algorithm info{
    .name = "bine",
    .serves = {collective::scatter, collective::scatterv},
    .summary =
        "Bine tree (De Sensi et al. SC 2025), distances +-rho(t), subtrees contiguous mod p, other p folded: "
        "ceil(log2 p) rounds, ceil(log2 p) alpha + (p-1)/p beta M",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
