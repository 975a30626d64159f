// Reduce, pipelined chain (Open MPI's "chain"/"pipeline" reduce): the root-relative ranks
// form the chain p-1 -> p-2 -> ... -> 1 -> 0 = root, and the vector is cut into S segments
// of a.params.segment elements (the last one shorter). Chain position w = p-1-v: in round t,
// relative rank v forwards its partial of segment t - w to v - 1 while receiving segment
// t - w + 1 from v + 1 and combining it (own contribution on the left). Default segment: the
// size that minimises the model time (p - 2 + S)(alpha + (beta + gamma) m / S),
// S* = sqrt((p - 2)(beta + gamma) m / alpha), default cost model, the call's element size.
// The partials run over relative ranks v .. p-1, which wrap around p-1 -> 0 when root != 0:
// commutative operators only.
// Rounds: p - 2 + S (p >= 2). Cost: (p - 2 + S)(alpha + (beta + gamma) m / S).
#include <algorithm>
#include <cmath>

#include "patterns/chunking.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

// The segments of a chain of p - 1 hops, sized by the default cost model and the call's element size.
detail::segmenting segmenting_of(const coll_args& a) {
  const int stages = a.p - 1;
  const cost_model m{};
  const double bytes = static_cast<double>(a.count) * static_cast<double>(a.elem_size);
  const double ideal = std::sqrt(std::max(stages - 1, 0) * (m.beta + m.gamma) * bytes / m.alpha);
  return {a.count, detail::segment_size(a.count, a.params.segment, ideal)};
}

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, rank == a.root ? n : 0);
  if (a.p == 1) {
    s.copy(region{in_buffer, 0, n}, region{out_buffer, 0, n});
    return s;
  }
  const std::int64_t v = detail::relative(rank, a.root, a.p);
  const std::int64_t w = a.p - 1 - v;  // position from the chain's start
  const detail::segmenting seg = segmenting_of(a);
  const std::int64_t segments = seg.segments();
  const bool start = v == a.p - 1;
  // The start of the chain sends its send buffer; everybody else accumulates.
  const buffer_id acc = start ? in_buffer : (rank == a.root ? out_buffer : s.scratch(n));
  const std::int64_t rounds = a.p - 2 + segments;
  for (std::int64_t t = 0; t < rounds; ++t) {
    s.next_round();
    const std::int64_t out_seg = t - w, in_seg = t - w + 1;
    if (v > 0 && out_seg >= 0 && out_seg < segments)
      s.send(detail::absolute(static_cast<int>(v - 1), a.root, a.p), seg.piece(acc, out_seg));
    if (!start && in_seg >= 0 && in_seg < segments) {
      // Receive the partial of ranks v+1 .. p-1, then put this rank's contribution on its left.
      s.recv(detail::absolute(static_cast<int>(v + 1), a.root, a.p), seg.piece(acc, in_seg));
      const region mine = seg.piece(in_buffer, in_seg);
      if (mine.count > 0) s.reduce(mine, seg.piece(acc, in_seg), combine::reduce_in_left);
    }
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const detail::segmenting seg = segmenting_of(a);
  const double rounds = static_cast<double>(a.p - 2) + static_cast<double>(seg.segments());
  return rounds * (m.alpha + (m.beta + m.gamma) * static_cast<double>(std::min(seg.size, a.count) * elem));
}

const algorithm info{
    .name = "chain",
    .coll = collective::reduce,
    .summary =
        "pipelined chain, S segments (segment param; default from the cost model): p-2+S rounds, "
        "(p-2+S)(alpha + (beta + gamma) m/S); commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
