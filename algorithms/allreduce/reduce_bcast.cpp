// Allreduce, reduce + broadcast (the 5DV050 lecture "Algorithms for Collective
// Communication": all-reduce as an all-to-one reduction followed by a one-to-all
// broadcast): a binomial reduce to rank 0 in rank order (rank r with lowest set bit 2^k
// sends its partial of ranks r .. r + 2^k - 1 to r - 2^k in round k; the receiver puts it on
// the right, so non-commutative operators are fine), then a binomial broadcast from rank 0
// (in round k, ranks < 2^k send to r + 2^k). Works in the receive buffer (in place ok).
// Rounds: 2 ceil(log2 p). Cost: ceil(log2 p)(2 alpha + 2 beta m + gamma m).
#include "patterns/rank_arithmetic.hpp"
#include "patterns/reduce_blocks.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, a.count);
  const region out = detail::own_vector_in_out(s, a.count);
  bool sent = false;
  for (std::int64_t mask = 1; mask < a.p; mask *= 2) {  // reduce to rank 0
    s.next_round();
    if (sent) continue;
    if (rank & mask) {
      s.send(static_cast<int>(rank - mask), out);
      sent = true;
    } else if (rank + mask < a.p) {
      s.recv(static_cast<int>(rank + mask), out, combine::reduce_in_right);
    }
  }
  for (std::int64_t mask = 1; mask < a.p; mask *= 2) {  // broadcast from rank 0
    s.next_round();
    if (rank < mask && rank + mask < a.p)
      s.send(static_cast<int>(rank + mask), out);
    else if (rank >= mask && rank < 2 * mask)
      s.recv(static_cast<int>(rank - mask), out);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  return detail::ceil_log2(a.p) * (2 * m.alpha + (2 * m.beta + m.gamma) * bytes);
}

const algorithm info{
    .name = "reduce_bcast",
    .coll = collective::allreduce,
    .summary =
        "binomial reduce to rank 0 (rank-ordered) + binomial broadcast: 2 ceil(log2 p) rounds, "
        "ceil(log2 p)(2 alpha + (2 beta + gamma) m); non-commutative ok",
    .composition = "reduce binomial (in order, root 0) + bcast binomial (5DV050 lecture)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
