// Scatter, linear: the root sends every other rank its block directly, one per round, in
// root-relative order (relative rank v = r - root mod p gets its block in round v - 1).
// Source: the trivial algorithm every MPI library keeps for small p (MPICH/Open MPI "linear").
// Rounds: p - 1. Cost: (p - 1) alpha + beta (p - 1) m, m = bytes per block.
#include "patterns/bcast_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) { return detail::linear_scatter(a, rank); }

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const auto moved = static_cast<double>((total_count(a) - block_count(a, a.root)) * elem);
  return static_cast<double>(a.p - 1) * m.alpha + m.beta * moved;
}

const algorithm info{
    .name = "linear",
    .coll = collective::scatter,
    .summary = "root sends each block directly: p-1 rounds, (p-1)(alpha + beta m)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
