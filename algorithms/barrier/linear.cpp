// Barrier, linear (Open MPI coll/base, `ompi_coll_base_barrier_intra_basic_linear`, the
// algorithm of Open MPI's "basic" module; SMPI's `ompi_basic_linear`). Every rank other than
// 0 reports its arrival to rank 0 with an empty message and waits for rank 0's answer; rank 0
// collects the p-1 reports and only then answers everyone. Open MPI posts the p-1 receives
// (and later the p-1 sends) at once; one-ported, rank 0 takes them one per round: rank j
// reports in round j-1 and is released in round p-1 + j-1, so each of the 2(p-1) rounds has
// a single message, all of them through rank 0.
// Rounds: 2(p-1) one-ported; 2 with p-1 ports (all reports, then all answers). Cost:
// 2(p-1) alpha. It ties `tree` at p = 2 and never beats dissemination; kept as Open MPI's
// baseline and as the flat-tree contrast to ranklab's binomial `tree` barrier.
// See docs/algorithms.md, "barrier".
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, 0);
  const region none{out_buffer, 0, 0};
  for (int j = 1; j < a.p; ++j) {  // arrivals: rank j reports in round j-1
    s.next_round();
    if (rank == 0) s.recv(j, none);
    if (rank == j) s.send(0, none);
  }
  for (int j = 1; j < a.p; ++j) {  // releases: rank 0 answers rank j in round p-1 + j-1
    s.next_round();
    if (rank == 0) s.send(j, none);
    if (rank == j) s.recv(0, none);
  }
  s.trim();  // a released rank has nothing left to wait for
  return s;
}

double cost(const coll_args& a, std::size_t, const cost_model& m) { return 2.0 * (a.p - 1) * m.alpha; }

const algorithm info{
    .name = "linear",
    .coll = collective::barrier,
    .summary = "linear (Open MPI basic_linear): everyone reports to rank 0, which then releases everyone; "
               "2(p-1) rounds one-ported (2 with p-1 ports); 2(p-1) alpha",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
