// Allreduce, recursive doubling (seed 001: all-reduce on a hypercube), with the standard
// handling of p that is not a power of two (as in MPICH): with p' the largest power of two
// <= p and rem = p - p', the first 2*rem ranks pair up (even -> odd) before, and the odd
// ones hand the result back after, the log2 p' exchange rounds among p' ranks.
// Each survivor stands for a contiguous range of ranks and combines lower ranges on the
// left, so non-commutative operators are reduced in rank order.
// Rounds: log2 p' (+2 when p is not a power of two).
// Cost: rounds * (alpha + beta*m) + log2 p' * gamma*m (+ gamma*m).
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const region out{out_buffer, 0, n};
  s.copy(region{in_buffer, 0, n}, out);
  if (a.p == 1) return s;
  const buffer_id tmp = s.scratch(n);
  const region incoming{tmp, 0, n};

  const int pof2 = static_cast<int>(detail::floor_pow2(static_cast<std::uint64_t>(a.p)));
  const int rem = a.p - pof2;
  // Survivor number of this rank in the power-of-two phase, or -1 if it sits out.
  int vrank;
  if (rank < 2 * rem) vrank = rank % 2 == 1 ? rank / 2 : -1;
  else vrank = rank - rem;
  auto real = [&](int v) { return v < rem ? 2 * v + 1 : v + rem; };

  if (rem > 0) {  // fold the first 2*rem ranks pairwise
    s.next_round();
    if (rank < 2 * rem) {
      if (rank % 2 == 0) s.send(rank + 1, out);
      else {
        s.recv(rank - 1, incoming);
        s.reduce(incoming, out, combine::reduce_in_left);  // lower rank on the left
      }
    }
  }
  for (int mask = 1; mask < pof2; mask *= 2) {
    s.next_round();
    if (vrank < 0) continue;
    const int partner = vrank ^ mask;
    s.send(real(partner), out);
    s.recv(real(partner), incoming);
    s.reduce(incoming, out, partner < vrank ? combine::reduce_in_left : combine::reduce_in_right);
  }
  if (rem > 0) {  // hand the result back
    s.next_round();
    if (rank < 2 * rem) {
      if (rank % 2 == 1) s.send(rank - 1, out);
      else s.recv(rank + 1, out);
    }
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  const int pof2 = static_cast<int>(detail::floor_pow2(static_cast<std::uint64_t>(a.p)));
  const int steps = detail::ceil_log2(static_cast<std::uint64_t>(pof2));
  const int extra = pof2 == a.p ? 0 : 2;
  return (steps + extra) * (m.alpha + m.beta * bytes) + (steps + (extra ? 1 : 0)) * m.gamma * bytes;
}

const algorithm info{
    .name = "recursive_doubling",
    .coll = collective::allreduce,
    .summary = "recursive doubling, non-power-of-two p by pairwise folding: log2 p' (+2) rounds, "
               "rounds(alpha + beta m) + log2 p' gamma m; rank-ordered, non-commutative operators allowed",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
