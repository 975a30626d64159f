// Broadcast, round-optimal on a circulant graph: J. L. Träff, "Optimal Broadcast Schedules
// in Logarithmic Time with Applications to Broadcast, All-Broadcast, Reduction and
// All-Reduction", Algorithm 1. The buffer is cut into n blocks; every rank computes its
// receive and send schedules in O(log p) and the blocks flow in n - 1 + q rounds,
// q = ceil(log2 p), which is optimal. n from a.params.blocks, else from the cost model
// (detail::blocks_for). See docs/algorithms.md, "bcast".
// Rounds: n - 1 + q. Cost: (n - 1 + q)(alpha + beta m/n).
#include "circulant/circulant_collectives.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.count == 0) return s;
  const circulant::skips sk(a.p);
  const int n = detail::blocks_for(a, sk.q, a.count * a.elem_size, a.count);
  const detail::root_part part{a.root, 0, a.count};
  detail::circulant_rounds(s, sk, nullptr, std::span(&part, 1), n, out_buffer, detail::circulant_direction::broadcast);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const circulant::skips sk(a.p);
  const int n = detail::blocks_for(a, sk.q, a.count * elem, a.count);
  return (n - 1 + sk.q) * (m.alpha + m.beta * static_cast<double>(a.count * elem) / n);
}

const algorithm info{
    .name = "circulant",
    .coll = collective::bcast,
    .summary =
        "round-optimal n-block broadcast on a circulant graph (Träff 2024): n-1+q rounds, "
        "(n-1+q)(alpha + beta m/n)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
