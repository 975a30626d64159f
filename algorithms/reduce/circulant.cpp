// Reduce, round-optimal on a circulant graph: the n-block broadcast schedule of J. L. Träff,
// "Optimal Broadcast Schedules in Logarithmic Time with Applications to Broadcast,
// All-Broadcast, Reduction and All-Reduction" run backwards, every message reversed,
// partial blocks combined on arrival. Each non-root sends each partial block exactly once.
// The combination order is the schedule's, not rank order: commutative operators only
// (deterministic all the same). See docs/algorithms.md, "reduce".
// Rounds: n - 1 + q, q = ceil(log2 p). Cost: (n - 1 + q)(alpha + (beta + gamma) m/n).
#include "circulant/circulant_collectives.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const bool root = rank == a.root;
  schedule s(rank, a.p, a.count, root ? a.count : 0);
  // The root accumulates in its receive buffer, the others in scratch.
  const buffer_id acc = root ? out_buffer : s.scratch(a.count);
  s.copy(region{in_buffer, 0, a.count}, region{acc, 0, a.count});
  if (a.count == 0) return s;
  const circulant::skips sk(a.p);
  const detail::root_part part{a.root, 0, a.count};
  const int n = detail::blocks_for(a, sk.q, a.count * a.elem_size, a.count);
  detail::circulant_rounds(s, sk, nullptr, std::span(&part, 1), n, acc, detail::circulant_direction::reduce);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const circulant::skips sk(a.p);
  const int n = detail::blocks_for(a, sk.q, a.count * elem, a.count);
  return (n - 1 + sk.q) * (m.alpha + (m.beta + m.gamma) * static_cast<double>(a.count * elem) / n);
}

const algorithm info{
    .name = "circulant",
    .coll = collective::reduce,
    .summary =
        "round-optimal n-block reduce: the circulant broadcast backwards, n-1+q rounds, "
        "(n-1+q)(alpha + (beta+gamma) m/n)",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
