// Reduce, reduce-scatter + gather (seed 001's "improved all-to-one reduction"; Rabenseifner's
// algorithm as in MPICH's reduce_scatter_gather), any p, any root, rank-ordered:
//  1. p not a power of two: ranks 2i and 2i+1 (i < rem = p - p') fold — one sends its whole
//     vector, the other combines (lower rank on the left) and survives as new rank i; the
//     pair holding the root keeps the root, so the result needs no extra hop.
//  2. recursive halving among the p' survivors on p' near-equal chunks, masks 1, 2, ..., p'/2
//     (partners are neighbouring aligned groups, so partials stay rank-ordered: non-commutative
//     operators are fine);
//  3. the halving backwards as a binomial gather of the reduced chunks to the root.
// Rounds: 2 log2 p' (+1 when p is not a power of two).
// Cost: 2 log2 p' alpha + (p'-1)/p' m (2 beta + gamma) (+ alpha + (beta + gamma) m).
#include "patterns/reduce_scatter_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

namespace rs = detail::rs;

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  const bool is_root = rank == a.root;
  schedule s(rank, a.p, n, is_root ? n : 0);
  if (a.p == 1) {
    s.copy(region{in_buffer, 0, n}, region{out_buffer, 0, n});
    return s;
  }
  const int rem = a.p - static_cast<int>(detail::floor_pow2(static_cast<std::uint64_t>(a.p)));
  const bool root_even_in_pair = a.root < 2 * rem && a.root % 2 == 0;
  const rs::fold_plan f(a.p, root_even_in_pair ? a.root / 2 : -1);
  rs::block_store st(s, rs::equal_split(n, f.pof2), is_root ? out_buffer : rs::block_store::no_buffer, n);
  std::vector<std::vector<int>> pieces(static_cast<std::size_t>(f.pof2));
  for (int c = 0; c < f.pof2; ++c) pieces[static_cast<std::size_t>(c)] = {c};
  if (f.rem > 0) rs::fold_round(st, f, rank);
  const int v = f.newrank(rank);
  const rs::halving_trace t = rs::halving(st, f, v, pieces, /*increasing=*/true);
  rs::gather_back(st, f, v, t, pieces, f.newrank(a.root));
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const rs::fold_plan f(a.p);
  const double bytes = static_cast<double>(a.count * elem), q = f.pof2;
  double t = 2 * f.levels() * m.alpha + (q - 1) / q * bytes * (2 * m.beta + m.gamma);
  if (f.rem > 0) t += m.alpha + (m.beta + m.gamma) * bytes;
  return t;
}

const algorithm info{
    .name = "rabenseifner",
    .coll = collective::reduce,
    .summary = "reduce-scatter (recursive halving, rank-ordered) + binomial gather, any p by folding, any root: "
               "2 log2 p' (+1) rounds, 2 log2 p' alpha + (p'-1)/p' m (2 beta + gamma); non-commutative ok",
    .composition = "reduce-scatter + gather (seed 001, improved all-to-one reduction)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
