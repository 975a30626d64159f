// Allreduce, reduce-scatter + allgather (seed 001's "improved all-reduce"; Rabenseifner's
// algorithm as in MPICH's allreduce for long messages), any p, rank-ordered:
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
#include "patterns/reduce_scatter_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

namespace rs = detail::rs;

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const rs::fold_plan f(a.p);
  rs::block_store st(s, rs::equal_split(n, f.pof2), out_buffer, 0, /*out_may_alias_in=*/true);
  const std::vector<int> all = rs::all_blocks(st.size());
  std::vector<std::vector<int>> pieces(static_cast<std::size_t>(f.pof2));
  for (int c = 0; c < f.pof2; ++c) pieces[static_cast<std::size_t>(c)] = {c};
  if (f.rem > 0) rs::fold_round(st, f, rank);
  const int v = f.newrank(rank);
  const rs::halving_trace t = rs::halving(st, f, v, pieces, /*increasing=*/true);
  rs::allgather_back(st, f, v, t, pieces);
  if (f.rem > 0) {
    rs::exchange e;
    const int partner = f.partner(rank);
    if (partner != no_rank && v >= 0) {
      e.send_to = partner;
      e.send_blocks = all;
    } else if (partner != no_rank) {
      e.recv_from = partner;
      e.recv_blocks = all;
      e.combines = false;
    }
    st.round(e);
  }
  for (int b : all) st.settle(b);  // p == 1
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const rs::fold_plan f(a.p);
  const double bytes = static_cast<double>(a.count * elem), q = f.pof2;
  double t = 2 * f.levels() * m.alpha + (q - 1) / q * bytes * (2 * m.beta + m.gamma);
  if (f.rem > 0) t += 2 * m.alpha + (2 * m.beta + m.gamma) * bytes;
  return t;
}

const algorithm info{
    .name = "rabenseifner",
    .coll = collective::allreduce,
    .summary = "reduce-scatter (recursive halving, rank-ordered) + recursive-doubling allgather, any p by folding: "
               "2 log2 p' (+2) rounds, 2 log2 p' alpha + (p'-1)/p' m (2 beta + gamma); non-commutative ok",
    .composition = "reduce-scatter + allgather (seed 001, improved all-reduce)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
