// Broadcast, binomial tree (seed 001: one-to-all broadcast on a hypercube).
// Ranks are relabelled by subtraction modulo p (v = r - root mod p), which, unlike XOR
// relabelling, works for every p and every root at once. In round k, every v < 2^k that has
// the data sends it to v + 2^k (if < p).
// Rounds: ceil(log2 p). Cost: ceil(log2 p) * (alpha + beta*m).
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const int v = detail::relative(rank, a.root, a.p);
  const region all{out_buffer, 0, a.count};
  for (std::int64_t mask = 1; mask < a.p; mask *= 2) {
    s.next_round();
    if (v < mask && v + mask < a.p) s.send(detail::absolute(static_cast<int>(v + mask), a.root, a.p), all);
    else if (v >= mask && v < 2 * mask) s.recv(detail::absolute(static_cast<int>(v - mask), a.root, a.p), all);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::ceil_log2(a.p) * (m.alpha + m.beta * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "binomial",
    .coll = collective::bcast,
    .summary = "binomial tree, any root by relabelling mod p: ceil(log2 p) rounds, ceil(log2 p)(alpha + beta m)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
