// Allreduce, reduce-scatter + allgather (the "improved" all-reduce of the 5DV050 lecture
// "Algorithms for Collective Communication"; Rabenseifner's algorithm as in MPICH's
// allreduce for long messages), any p, rank-ordered:
//  1. p not a power of two: ranks 2i and 2i+1 (i < rem = p - p') fold — 2i sends its whole
//     vector, 2i+1 combines (lower rank on the left) and stands for both;
//  2. recursive halving among the p' survivors on p' near-equal chunks with masks 1, 2, ...,
//     p'/2 (contiguous halves, partners in neighbouring aligned groups: every partial covers
//     a contiguous range of ranks, lower on the left, so non-commutative operators are fine);
//  3. recursive-doubling allgather, the halving backwards (masks p'/2, ..., 1);
//  4. the survivors hand the result to their folded partners.
// Works in the receive buffer (copied from the send buffer when first combined; in place ok).
// Rounds: 2 log2 p' (+2 when p is not a power of two).
// Cost: 2 log2 p' alpha + (p'-1)/p' m (2 beta + gamma) (+ 2 alpha + (2 beta + gamma) m).
#include "patterns/reduce_scatter_phase.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const detail::fold_plan f(a.p);
  detail::block_store st(s, detail::equal_split(n, f.pof2), out_buffer, 0, /*out_may_alias_in=*/true);
  const detail::block_pieces pieces = detail::one_block_pieces(f.pof2);
  const detail::halving_trace t = detail::fold_and_halve(st, f, rank, pieces, /*increasing=*/true);
  detail::allgather_back(st, f, f.newrank(rank), t, pieces);
  if (f.rem > 0) {
    const std::vector<int> all = detail::all_blocks(st.size());
    detail::unfold_round(st, f, rank, all, all);
  }
  st.settle_all();  // p == 1
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const detail::fold_plan f(a.p);
  const double bytes = static_cast<double>(a.count * elem);
  const double t = detail::halving_round_trip_cost(f, bytes, m);
  return f.rem > 0 ? t + 2 * m.alpha + (2 * m.beta + m.gamma) * bytes : t;
}

const algorithm info{
    .name = "rabenseifner",
    .coll = collective::allreduce,
    .summary =
        "reduce-scatter (recursive halving, rank-ordered) + recursive-doubling allgather, any p by folding: "
        "2 log2 p' (+2) rounds, 2 log2 p' alpha + (p'-1)/p' m (2 beta + gamma); non-commutative ok",
    .composition = "reduce-scatter + allgather (5DV050 lecture, improved all-reduce)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
