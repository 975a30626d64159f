// Gather, binomial tree (seed 001: "analogous to scatter, reverse the order and the direction
// of communications"; MPICH's binomial gather). Bottom-up over root-relative ranks: in round j
// (mask 2^j) a rank v with v % 2mask == mask sends its whole subtree [v, v + min(mask, p - v))
// to v - mask: its own block from its send buffer and its descendants' from scratch, in one
// message. The root receives straight into its receive buffer. Any p, any root.
// Rounds: ceil(log2 p). Cost: ceil(log2 p) alpha + beta (p - 1) m (the root's incoming volume).
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
    .coll = collective::gather,
    .summary = "binomial tree, any p and root: ceil(log2 p) rounds, ceil(log2 p) alpha + beta (p-1) m",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
