// Helpers shared by the tree reductions (reduce binomial, in-order binomial, k-nomial, chain,
// allreduce reduce + bcast).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ranklab/collective.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// The accumulator of a tree reduction at one rank: the receive buffer at the root, a
// scratch buffer at other ranks that receive partials (both start as a copy of the send
// buffer, in the prologue), and the send buffer itself at ranks that only send.
inline region tree_accumulator(schedule& s, const coll_args& a, int rank, bool receives) {
  const std::uint64_t n = a.count;
  const region in{in_buffer, 0, n};
  if (!receives && rank != a.root) return in;
  const region acc{rank == a.root ? out_buffer : s.scratch(n), 0, n};
  s.copy(in, acc);
  return acc;
}

// Elements per segment of a pipelined reduction: a.params.segment when given, else the size
// minimising the model time (stages - 1 + S)(alpha + (beta + gamma) m / S) of `stages`
// pipeline stages, S* = sqrt((stages - 1)(beta + gamma) m / alpha), for the default cost
// model and the call's element size. count 0 is one empty segment.
inline std::uint64_t pipeline_segment(const coll_args& a, int stages) {
  if (a.count == 0) return 1;
  if (a.params.segment > 0) return std::min(a.params.segment, a.count);
  const cost_model m{};
  const double bytes = static_cast<double>(a.count) * static_cast<double>(a.elem_size);
  const double ideal = std::sqrt(std::max(stages - 1, 0) * (m.beta + m.gamma) * bytes / m.alpha);
  const auto segments = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::llround(ideal)), 1, a.count);
  return (a.count + segments - 1) / segments;
}

inline std::uint64_t segments_of(std::uint64_t count, std::uint64_t segment) {
  return std::max<std::uint64_t>(1, (count + segment - 1) / segment);
}

}  // namespace ranklab::detail
