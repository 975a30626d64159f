// Scatter, binomial tree (seed 001: "send half of the messages in the first step, one
// quarter in the second ..."; MPICH's binomial scatter). Top-down tree over root-relative
// ranks: in round j (mask 2^(L-1-j), L = ceil(log2 p)) a rank v with v % 2mask == 0 forwards
// the blocks of v + mask's subtree [v + mask, v + mask + min(mask, p - v - mask)). Any p and
// any root (relabelling by subtraction mod p). The root sends straight from its send buffer,
// inner ranks stage their descendants' blocks in scratch. Details: detail/bcast_util.hpp.
// Rounds: ceil(log2 p). Cost: ceil(log2 p) alpha + beta (p - 1) m (the root's outgoing volume).
#include "patterns/bcast_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::binomial_scatter(a, rank); }

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const auto moved = static_cast<double>((total_count(a) - block_count(a, a.root)) * elem);
  return static_cast<double>(detail::ceil_log2(static_cast<std::uint64_t>(a.p))) * m.alpha + m.beta * moved;
}

const algorithm info{
    .name = "binomial",
    .coll = collective::scatter,
    .summary = "binomial tree, any p and root: ceil(log2 p) rounds, ceil(log2 p) alpha + beta (p-1) m",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
