// Barrier, double ring (Open MPI coll/base, `ompi_coll_base_barrier_intra_doublering`). An
// empty token travels the ring 0 -> 1 -> ... -> p-1 -> 0 twice: after the first lap rank 0
// knows that every rank has arrived, the second lap tells every rank so. Round k (0 <= k <
// 2p) carries the hop from k mod p to k+1 mod p, so every round has a single message: the
// slowest barrier ranklab has, kept for what Open MPI uses it for (a strictly sequential,
// neighbour-only synchronisation) and as a teaching contrast to dissemination.
// Rounds: 2p (0 for p = 1). Cost: 2p alpha.
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, 0);
  if (a.p == 1) return s;
  for (int k = 0; k < 2 * a.p; ++k) {
    s.next_round();
    const int from = k % a.p, to = (k + 1) % a.p;
    if (rank == from) s.send(to, region{out_buffer, 0, 0});
    if (rank == to) s.recv(from, region{out_buffer, 0, 0});
  }
  return s;
}

double cost(const coll_args& a, std::size_t, const cost_model& m) { return a.p == 1 ? 0.0 : 2.0 * a.p * m.alpha; }

const algorithm info{
    .name = "double_ring",
    .coll = collective::barrier,
    .summary = "double ring (Open MPI doublering): an empty token around the ring twice, 2p rounds; 2p alpha",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
