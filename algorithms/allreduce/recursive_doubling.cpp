// Allreduce, recursive doubling (the 5DV050 lecture "Algorithms for Collective
// Communication": all-reduce on a hypercube), with the standard handling of p that is not a
// power of two (as in MPICH): with p' the largest power of two <= p and rem = p - p', the
// first 2*rem ranks pair up (even -> odd) before, and the odd ones hand the result back
// after, the log2 p' exchange rounds among p' ranks (patterns/recursive_doubling.hpp).
// Each survivor stands for a contiguous range of ranks and combines lower ranges on the
// left, so non-commutative operators are reduced in rank order.
// Rounds: log2 p' (+2 when p is not a power of two).
// Cost: rounds * (alpha + beta*m) + log2 p' * gamma*m (+ gamma*m).
#include "patterns/recursive_doubling.hpp"
#include "patterns/reduce_blocks.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const region out = detail::own_vector_in_out(s, n);
  if (a.p == 1) return s;
  const region incoming{s.scratch(n), 0, n};
  const detail::fold_plan f(a.p);
  detail::folded_doubling_rounds(
      s, f, rank,
      [&](int partner, bool survives) {  // fold: the even rank's vector goes to the odd one
        if (!survives) {
          s.send(partner, out);
          return;
        }
        s.recv(partner, incoming);
        s.reduce(incoming, out, combine::reduce_in_left);  // lower rank on the left
      },
      [&](int v, int mask) {
        const int peer = v ^ mask;
        s.send(f.real(peer), out);
        s.recv(f.real(peer), incoming);
        s.reduce(incoming, out, peer < v ? combine::reduce_in_left : combine::reduce_in_right);
      },
      [&](int partner, bool survives) {  // unfold: hand the result back
        if (survives)
          s.send(partner, out);
        else
          s.recv(partner, out);
      });
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  const detail::fold_plan f(a.p);
  const int steps = f.levels();
  const int extra = f.rem == 0 ? 0 : 2;
  return (steps + extra) * (m.alpha + m.beta * bytes) + (steps + (extra ? 1 : 0)) * m.gamma * bytes;
}

const algorithm info{
    .name = "recursive_doubling",
    .coll = collective::allreduce,
    .summary =
        "recursive doubling, non-power-of-two p by pairwise folding: log2 p' (+2) rounds, "
        "rounds(alpha + beta m) + log2 p' gamma m; rank-ordered, non-commutative operators allowed",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
