// Alltoall for exactly two ranks (Open MPI coll/base, `ompi_coll_base_alltoall_intra_two_procs`):
// each rank copies its block for itself and the two swap the blocks meant for each other in
// one exchange. Registered with only_p = 2: any other p is refused by check_preconditions,
// and auto never picks it there.
// Rounds: 1. Cost: alpha + beta m, m = bytes of one block.
// See docs/algorithms.md, "alltoall".
#include <fmt/format.h>

#include "patterns/block_layout.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  if (a.p != 2) throw usage_error(rank, "alltoall", fmt::format("two_procs: takes exactly 2 ranks (p = {})", a.p));
  const int peer = 1 - rank;
  return detail::direct_exchange(a, rank, [&](int) { return peer; }, [&](int) { return peer; });
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return m.alpha + m.beta * detail::mean_block_bytes(a, elem);
}

const algorithm info{
    .name = "two_procs",
    .coll = collective::alltoall,
    .summary = "two ranks only (Open MPI two_procs): one exchange of the blocks for each other; alpha + beta m",
    .only_p = 2,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
