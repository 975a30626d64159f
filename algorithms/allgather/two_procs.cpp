// Allgather and allgatherv for exactly two ranks (Open MPI coll/base,
// `ompi_coll_base_allgather_intra_two_procs`; its allgatherv twin
// `ompi_coll_base_allgatherv_intra_two_procs`): each rank copies its block into place and the
// two swap blocks in one exchange, the own block sent from the send buffer. Registered with
// only_p = 2: any other p is refused by check_preconditions, and auto never picks it there.
// Rounds: 1. Cost: alpha + beta N/2, N = bytes of the gathered result.
// See docs/algorithms.md, "allgather".
#include <fmt/format.h>

#include "patterns/block_layout.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  if (a.p != 2) throw usage_error(rank, std::string(name(a.coll)), fmt::format("two_procs: takes exactly 2 ranks (p = {})", a.p));
  const detail::gathered_layout L(a);
  schedule s = L.start(a, rank);
  const int peer = 1 - rank;
  s.next_round();
  s.send(peer, L.sent(rank, rank));
  s.recv(peer, L.block(peer));
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::gathered_cost(a, elem, m, 1);
}

const algorithm info{
    .name = "two_procs",
    .serves = {collective::allgather, collective::allgatherv},
    .summary = "two ranks only (Open MPI two_procs): one exchange of the own blocks; alpha + beta N/2",
    .only_p = 2,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
