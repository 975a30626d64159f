// Broadcast, linear: the root sends the whole buffer to every other rank, one per round, in
// root-relative order (relative rank v = r - root mod p receives in round v - 1).
// Source: the flat tree every MPI library keeps as a baseline (Open MPI "basic_linear").
// Rounds: p - 1. Cost: (p - 1)(alpha + beta m).
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const int v = detail::relative(rank, a.root, a.p);
  const region all{out_buffer, 0, a.count};
  for (int w = 1; w < a.p; ++w) {
    s.next_round();
    if (v == 0) s.send(detail::absolute(w, a.root, a.p), all);
    else if (v == w) s.recv(a.root, all);
  }
  s.trim();
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return (a.p - 1) * (m.alpha + m.beta * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "linear",
    .coll = collective::bcast,
    .summary = "flat tree, root sends to each rank: p-1 rounds, (p-1)(alpha + beta m)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
