// Scan and exscan, linear chain: in round k = 0..p-2 rank k sends its inclusive prefix
// x_0 (+) ... (+) x_k to rank k+1. scan: rank k+1 receives it into out (holding x_{k+1}),
// combining it on the left (reduce_in_left). exscan: rank k+1 receives it into out as its
// result and forwards out (+) x_{k+1}, built in scratch from a copy of its input taken in the
// prologue (so in-place calls work); rank 0's out is left unchanged. Rank order is kept, so
// non-commutative operators are fine. Any p.
// Rounds: p-1. Cost: (p-1)(alpha + beta m + gamma m), m = bytes of the buffer.
// See docs/algorithms.md, "scan".
#include <cstdint>

#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build_scan(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const region out{out_buffer, 0, n};
  s.copy(region{in_buffer, 0, n}, out);
  for (int k = 0; k + 1 < a.p; ++k) {
    s.next_round();
    if (rank == k)  // rank 0's prefix is its input: sent from in, not from the copy just written
      s.send(k + 1, k == 0 ? region{in_buffer, 0, n} : out);
    else if (rank == k + 1)
      s.recv(k, out, combine::reduce_in_left);
  }
  s.trim();
  return s;
}

schedule build_exscan(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const region in{in_buffer, 0, n}, out{out_buffer, 0, n};
  const bool forwards = rank + 1 < a.p;
  region carry = in;  // what rank sends on: x_0 (+) ... (+) x_rank
  if (rank > 0 && forwards) {
    carry = region{s.scratch(n), 0, n};
    s.copy(in, carry);  // x_rank, saved before out is written (in may be out)
  }
  for (int k = 0; k + 1 < a.p; ++k) {
    s.next_round();
    if (rank == k) {
      s.send(k + 1, carry);
    } else if (rank == k + 1) {
      s.recv(k, out);
      if (forwards) s.reduce(out, carry, combine::reduce_in_left);  // carry = prefix (+) x_rank
    }
  }
  s.trim();
  return s;
}

schedule build(const coll_args& a, int rank) {
  return a.coll == collective::exscan ? build_exscan(a, rank) : build_scan(a, rank);
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double b = static_cast<double>(a.count * elem);
  return (a.p - 1) * (m.alpha + (m.beta + m.gamma) * b);
}

const algorithm info{
    .name = "linear",
    .serves = {collective::scan, collective::exscan},
    .summary =
        "linear chain: p-1 rounds, (p-1)(alpha + (beta + gamma) m); exscan leaves rank 0's out unchanged; "
        "rank-ordered, non-commutative operators allowed",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
