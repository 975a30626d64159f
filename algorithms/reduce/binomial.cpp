// Reduce, binomial tree (the 5DV050 lecture "Algorithms for Collective Communication":
// all-to-one reduction = the hypercube broadcast backwards, with the combination added).
// Ranks are relabelled by subtraction modulo p (v = r - root mod p), which works for every p
// and every root at once (XOR relabelling does not when p is not a power of two). In round k,
// a relabelled rank v with bit k set sends its partial (ranks v .. v + 2^k - 1 in relabelled
// order) to v - 2^k and is done; one with bit k clear receives v + 2^k's partial (if
// v + 2^k < p) on the right: the binomial tree of patterns/tree_rounds.hpp, upwards. For
// root != 0 the relabelled order wraps around p-1 -> 0, so the operator must be commutative
// (use inorder_binomial otherwise).
// Rounds: ceil(log2 p). Cost: ceil(log2 p)(alpha + beta m + gamma m).
#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, rank == a.root ? a.count : 0);
  const int v = detail::relative(rank, a.root, a.p);
  const region acc = detail::tree_accumulator(s, a, rank, v % 2 == 0 && v + 1 < a.p);
  const detail::tree t{detail::tree_shape::binomial, a.p};
  detail::add_tree_rounds(s, t, v, detail::tree_order::up, detail::rooted_at{a.root, a.p}, acc,
                          combine::reduce_in_right);
  s.trim();  // a rank has nothing left to do once it has sent its partial
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::ceil_log2(a.p) * (m.alpha + (m.beta + m.gamma) * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "binomial",
    .coll = collective::reduce,
    .summary =
        "binomial tree, any root by relabelling mod p: ceil(log2 p) rounds, ceil(log2 p)(alpha + (beta + gamma) m); "
        "commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
