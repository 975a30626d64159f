// Gatherv, binomial tree: the binomial gather (seed 001, MPICH) with irregular blocks. Every
// rank has all counts, so each inner rank knows the size of its subtree's data and stages it
// packed in relative order in scratch; the root receives each subtree straight into the
// blocks' places (displacements allowed). Any p, any root, zero counts.
// Rounds: ceil(log2 p). Cost: ceil(log2 p) alpha + beta (total - root's block).
#include "patterns/bcast_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::binomial_gather(a, rank); }

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const auto moved = static_cast<double>((total_count(a) - block_count(a, a.root)) * elem);
  return static_cast<double>(detail::ceil_log2(static_cast<std::uint64_t>(a.p))) * m.alpha + m.beta * moved;
}

const algorithm info{
    .name = "binomial",
    .coll = collective::gatherv,
    .summary = "binomial tree with irregular blocks: ceil(log2 p) rounds, ceil(log2 p) alpha + beta (total - root's block)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
