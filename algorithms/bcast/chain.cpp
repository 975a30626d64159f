// Broadcast, pipelined chain (MPICH's and Open MPI's "pipeline"/"chain" broadcast): the
// root-relative ranks form the chain 0 -> 1 -> ... -> p-1 and the buffer is cut into S
// segments of a.params.segment elements (the last one shorter). In round t, relative rank v
// forwards segment t - v to v + 1 while receiving segment t - v + 1 from v - 1.
// Default segment: the size that minimises the model time (p - 2 + S)(alpha + beta m / S),
// S* = sqrt((p - 2) beta m / alpha), for the default cost model (alpha / beta = 5000 bytes)
// and 8-byte elements: S = round(sqrt((p - 2) count / 625)), clamped to 1 .. count. (A
// schedule counts elements and serves every datatype, so it cannot use the real size.)
// count 0 is one empty segment.
// Rounds: p - 2 + S (p >= 2). Cost: (p - 2 + S)(alpha + beta ceil(m / S)).
#include <algorithm>
#include <cmath>

#include "patterns/chunking.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

detail::segmenting segmenting_of(const coll_args& a) {
  const double ideal = std::sqrt(static_cast<double>(std::max(a.p - 2, 0)) * static_cast<double>(a.count) / 625.0);
  return {a.count, detail::segment_size(a.count, a.params.segment, ideal)};
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1) return s;
  const std::int64_t v = detail::relative(rank, a.root, a.p);
  const detail::segmenting seg = segmenting_of(a);
  const std::int64_t segments = seg.segments();
  const std::int64_t last = a.p - 2 + segments;  // rounds
  for (std::int64_t t = 0; t < last; ++t) {
    s.next_round();
    if (v + 1 < a.p && t - v >= 0 && t - v < segments)
      s.send(detail::absolute(static_cast<int>(v + 1), a.root, a.p), seg.piece(out_buffer, t - v));
    if (v > 0 && t - v + 1 >= 0 && t - v + 1 < segments)
      s.recv(detail::absolute(static_cast<int>(v - 1), a.root, a.p), seg.piece(out_buffer, t - v + 1));
  }
  s.trim();
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const detail::segmenting seg = segmenting_of(a);
  const double rounds = static_cast<double>(a.p - 2) + static_cast<double>(seg.segments());
  return rounds * (m.alpha + m.beta * static_cast<double>(std::min(seg.size, a.count) * elem));
}

const algorithm info{
    .name = "chain",
    .coll = collective::bcast,
    .summary =
        "pipelined chain, S segments (segment param; default from the cost model): p-2+S rounds, "
        "(p-2+S)(alpha + beta m/S)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
