// Barrier for exactly two ranks (Open MPI coll/base, `ompi_coll_base_barrier_intra_two_procs`):
// the two ranks exchange one empty message. Registered with only_p = 2: any other p is
// refused by check_preconditions, and auto never picks it there.
// Rounds: 1. Cost: alpha.
#include <fmt/format.h>

#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  if (a.p != 2) throw usage_error(rank, "barrier", fmt::format("two_procs: takes exactly 2 ranks (p = {})", a.p));
  schedule s(rank, a.p, 0, 0);
  s.next_round();
  s.send(1 - rank, region{out_buffer, 0, 0});
  s.recv(1 - rank, region{out_buffer, 0, 0});
  return s;
}

double cost(const coll_args&, std::size_t, const cost_model& m) { return m.alpha; }

const algorithm info{
    .name = "two_procs",
    .coll = collective::barrier,
    .summary = "two ranks only (Open MPI two_procs): one exchange of empty messages; alpha",
    .only_p = 2,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
