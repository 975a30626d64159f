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

#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

// Elements per segment.
std::uint64_t segment_of(const coll_args& a) {
  if (a.count == 0) return 1;
  if (a.params.segment > 0) return std::min(a.params.segment, a.count);
  const double ideal = std::sqrt(static_cast<double>(std::max(a.p - 2, 0)) * static_cast<double>(a.count) / 625.0);
  const auto segments = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::llround(ideal)), 1, a.count);
  return (a.count + segments - 1) / segments;
}

std::uint64_t segments_of(const coll_args& a) {
  const std::uint64_t seg = segment_of(a);
  return std::max<std::uint64_t>(1, (a.count + seg - 1) / seg);
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1) return s;
  const std::int64_t v = detail::relative(rank, a.root, a.p);
  const std::uint64_t seg = segment_of(a);
  const auto segments = static_cast<std::int64_t>(segments_of(a));
  auto piece = [&](std::int64_t i) {
    const std::uint64_t from = static_cast<std::uint64_t>(i) * seg;
    return region{out_buffer, std::min(from, a.count), std::min(seg, a.count - std::min(from, a.count))};
  };
  const std::int64_t last = a.p - 2 + segments;  // rounds
  for (std::int64_t t = 0; t < last; ++t) {
    s.next_round();
    if (v + 1 < a.p && t - v >= 0 && t - v < segments)
      s.send(detail::absolute(static_cast<int>(v + 1), a.root, a.p), piece(t - v));
    if (v > 0 && t - v + 1 >= 0 && t - v + 1 < segments)
      s.recv(detail::absolute(static_cast<int>(v - 1), a.root, a.p), piece(t - v + 1));
  }
  s.trim();
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const double rounds = static_cast<double>(a.p - 2) + static_cast<double>(segments_of(a));
  return rounds * (m.alpha + m.beta * static_cast<double>(std::min(segment_of(a), a.count) * elem));
}

const algorithm info{
    .name = "chain",
    .coll = collective::bcast,
    .summary = "pipelined chain, S segments (segment param; default from the cost model): p-2+S rounds, "
               "(p-2+S)(alpha + beta m/S)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
