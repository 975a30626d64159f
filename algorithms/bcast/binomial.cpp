// Broadcast, binomial tree (the hypercube one-to-all broadcast of the 5DV050 lecture
// "Algorithms for Collective Communication"). Ranks are relabelled by subtraction modulo p
// (v = r - root mod p), which, unlike XOR relabelling, works for every p and every root at
// once. In round k, every v < 2^k that has the data sends it to v + 2^k (if < p): the
// doubling tree of patterns/tree_rounds.hpp.
// Rounds: ceil(log2 p). Cost: ceil(log2 p) * (alpha + beta*m).
#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const detail::tree t{detail::tree_shape::doubling, a.p};
  detail::add_tree_rounds(s, t, detail::relative(rank, a.root, a.p), detail::tree_order::down,
                          detail::rooted_at{a.root, a.p}, region{out_buffer, 0, a.count});
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::ceil_log2(a.p) * (m.alpha + m.beta * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "binomial",
    .coll = collective::bcast,
    .summary = "binomial tree, any root by relabelling mod p: ceil(log2 p) rounds, ceil(log2 p)(alpha + beta m)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
