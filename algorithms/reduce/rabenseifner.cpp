// Reduce, reduce-scatter + gather (the "improved" all-to-one reduction of the 5DV050 lecture
// "Algorithms for Collective Communication"; Rabenseifner's algorithm as in MPICH's
// reduce_scatter_gather), any p, any root, rank-ordered:
//  1. p not a power of two: ranks 2i and 2i+1 (i < rem = p - p') fold — one sends its whole
//     vector, the other combines (lower rank on the left) and survives as new rank i; the
//     pair holding the root keeps the root, so the result needs no extra hop.
//  2. recursive halving among the p' survivors on p' near-equal chunks, masks 1, 2, ..., p'/2
//     (partners are neighbouring aligned groups, so partials stay rank-ordered: non-commutative
//     operators are fine);
//  3. the halving backwards as a binomial gather of the reduced chunks to the root.
// Rounds: 2 log2 p' (+1 when p is not a power of two).
// Cost: 2 log2 p' alpha + (p'-1)/p' m (2 beta + gamma) (+ alpha + (beta + gamma) m).
#include "patterns/reduce_scatter_phase.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  const bool is_root = rank == a.root;
  schedule s(rank, a.p, n, is_root ? n : 0);
  if (a.p == 1) {
    detail::own_vector_in_out(s, n);
    return s;
  }
  const bool root_even_in_pair = a.root < 2 * detail::fold_plan(a.p).rem && a.root % 2 == 0;
  const detail::fold_plan f(a.p, root_even_in_pair ? a.root / 2 : -1);
  detail::block_store st(s, detail::equal_split(n, f.pof2), is_root ? out_buffer : detail::block_store::no_buffer, n);
  const detail::block_pieces pieces = detail::one_block_pieces(f.pof2);
  const detail::halving_trace t = detail::fold_and_halve(st, f, rank, pieces, /*increasing=*/true);
  detail::gather_back(st, f, f.newrank(rank), t, pieces, f.newrank(a.root));
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const detail::fold_plan f(a.p);
  const double bytes = static_cast<double>(a.count * elem);
  const double t = detail::halving_round_trip_cost(f, bytes, m);
  return f.rem > 0 ? t + m.alpha + (m.beta + m.gamma) * bytes : t;
}

const algorithm info{
    .name = "rabenseifner",
    .coll = collective::reduce,
    .summary =
        "reduce-scatter (recursive halving, rank-ordered) + binomial gather, any p by folding, any root: "
        "2 log2 p' (+1) rounds, 2 log2 p' alpha + (p'-1)/p' m (2 beta + gamma); non-commutative ok",
    .composition = "reduce-scatter + gather (5DV050 lecture, improved all-to-one reduction)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
