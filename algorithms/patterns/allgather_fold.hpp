// Allreduce as a registered allgather of the p input vectors into scratch, then a local left
// fold in rank order: out = x_0, out = out (+) x_1, ..., out = out (+) x_{p-1}. The result is,
// bit for bit, the same left fold on every rank, so non-commutative operators and fixed-order
// calls are served. In place works: in is only read by the allgather's rounds, out only
// written by the fold after the last round's messages. Used by allreduce allgather_reduce
// (allgather bruck) and allreduce k_bruck (allgather k_bruck).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "patterns/compose.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::detail {

// The allgather phase of allreduce call `a`: the same p, count and element size, `radix`.
inline coll_args allgather_fold_args(const coll_args& a, int radix) {
  coll_args g = phase_args(a, collective::allgather, a.p, a.count);
  g.params.radix = radix;
  return g;
}

// The registered allgather `name`; `who` names the allreduce algorithm in the error.
inline const algorithm& allgather_fold_gatherer(const char* name, const char* who, int rank) {
  const algorithm* g = registry::find(collective::allgather, name);
  if (g == nullptr)
    throw usage_error(rank, "allreduce", std::string(who) + ": allgather " + name + " is not registered");
  return *g;
}

inline schedule allgather_fold_build(const coll_args& a, int rank, const algorithm& gather, const coll_args& g) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const buffer_id all = s.scratch(n * static_cast<std::uint64_t>(a.p));
  const schedule phase = gather.build(g, rank);
  std::vector<int> members(static_cast<std::size_t>(a.p));
  for (int i = 0; i < a.p; ++i) members[static_cast<std::size_t>(i)] = i;
  phase_place at;
  at.in = region{in_buffer, 0, n};
  at.out = region{all, 0, n * static_cast<std::uint64_t>(a.p)};
  append_phase(s, phase, members, at, phase_length(phase));
  // The fold, after the last round's messages (p = 1: in the prologue's round).
  if (n > 0) {
    s.copy(region{all, 0, n}, region{out_buffer, 0, n});
    for (int j = 1; j < a.p; ++j)
      s.reduce(region{all, n * static_cast<std::uint64_t>(j), n}, region{out_buffer, 0, n}, combine::reduce_in_right);
  }
  return s;
}

// The allgather's cost plus the fold's p - 1 reductions of one vector.
inline double allgather_fold_cost(const coll_args& a, std::size_t elem, const cost_model& m, const algorithm& gather,
                                  const coll_args& g) {
  const double vec = static_cast<double>(a.count * elem);
  const double gathered = gather.cost != nullptr ? gather.cost(g, elem, m) : 0.0;
  return gathered + m.gamma * vec * (a.p - 1);
}

}  // namespace ranklab::detail
