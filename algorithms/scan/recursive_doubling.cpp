// Scan and exscan, recursive doubling (the 5DV050 lecture "Algorithms for Collective
// Communication": prefix sum on a hypercube; MPICH's scan and exscan). For mask = 1, 2, 4, ...
// every rank exchanges its partial (the combination of its aligned group of size mask) with
// partner r XOR mask when it exists. A rank above its partner puts the partner's partial on
// the left of both its partial and its result; a rank below puts it on the right of its
// partial only. Works for any p: a partner >= p only ever means the missing ranks are above,
// and no rank above needs this rank's data from there. exscan: the result starts empty and the
// first partial arriving from below is received straight into out (rank 0, which never
// receives from below, keeps its out unchanged). A partial its owner never uses again is
// neither updated nor sent to it, so the last exchanges are one-way. Rank order is kept, so
// non-commutative operators are fine. The input is read only in the prologue, so in-place
// calls work.
// Rounds: ceil(log2 p). Cost: ceil(log2 p)(alpha + beta m + 2 gamma m), m = bytes of the buffer.
// See docs/algorithms.md, "scan".
#include <cstdint>

#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const bool exclusive = a.coll == collective::exscan;
  const std::uint64_t n = a.count;
  const int p = a.p;
  schedule s(rank, p, n, n);
  const region in{in_buffer, 0, n}, out{out_buffer, 0, n};
  if (!exclusive) s.copy(in, out);
  if (p == 1) return s;
  // Whether rank x exchanges again after `mask` (otherwise its partial is never used again,
  // and neither updating it nor sending it data for it is needed).
  auto later = [&](int x, int mask) {
    for (int m2 = mask * 2; m2 < p; m2 *= 2)
      if ((x ^ m2) < p) return true;
    return false;
  };
  const region partial{s.scratch(n), 0, n};
  const region incoming{s.scratch(n), 0, n};
  s.copy(in, partial);
  bool have_result = !exclusive;
  for (int mask = 1; mask < p; mask *= 2) {
    s.next_round();
    const int partner = rank ^ mask;
    if (partner >= p) continue;
    const bool more = later(rank, mask);
    if (partner < rank) {  // the partner's partial covers the ranks just below this group
      if (later(partner, mask)) s.send(partner, partial);
      if (!have_result) {  // exscan's first contribution: receive straight into out
        s.recv(partner, out);
        if (more) s.reduce(out, partial, combine::reduce_in_left);
        have_result = true;
      } else {
        s.recv(partner, incoming);
        if (more) s.reduce(incoming, partial, combine::reduce_in_left);
        s.reduce(incoming, out, combine::reduce_in_left);
      }
    } else {  // the partner is above: it needs this partial; its own only matters if used later
      s.send(partner, partial);
      if (more) {
        s.recv(partner, incoming);
        s.reduce(incoming, partial, combine::reduce_in_right);
      }
    }
  }
  s.trim();
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double b = static_cast<double>(a.count * elem);
  return detail::ceil_log2(static_cast<std::uint64_t>(a.p)) * (m.alpha + m.beta * b + 2 * m.gamma * b);
}

const algorithm info{
    .name = "recursive_doubling",
    .serves = {collective::scan, collective::exscan},
    .summary =
        "recursive doubling (5DV050 lecture hypercube prefix), any p: ceil(log2 p) rounds, ceil(log2 p)(alpha + beta m "
        "+ 2 gamma m); exscan leaves rank 0's out unchanged; rank-ordered, non-commutative operators allowed",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
