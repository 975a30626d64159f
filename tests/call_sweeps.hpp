// The calls the conformance suite (test_conformance.cpp) runs for one registered algorithm,
// also the call shapes the white-box suites check schedules on (test_direct.cpp).
//
// An algorithm gets, wherever it accepts the call (meets_preconditions):
// - sequential executor, p = 1..33: roots 0, p-1, p/2; counts 0, 1, 3, p-1, 2p+3 (not
//   divisible by p) and a large one (large_count); v-counts with zeros, one rank holding
//   everything, cycling, increasing, random, each packed and (where the collective takes
//   them) with displacements in reverse rank order with gaps; alltoallv matrices (diagonal,
//   one rank sending or receiving everything, random ...);
// - sequential executor, p = 100, 127, 128, 129: fewer counts and layouts;
// - thread executor, p = 1, 2, 3, 4, 5, 7, 8, 9, 16, 17: roots 0 and p/2, counts 0, 1,
//   2p+3, 1000 and three layouts;
// - MPI executor (tests/mpi, p = the mpirun size, 1..8): the thread sweep at every root.
// Operands: int32 sum for every shape; at one shape also float64 sum, int32 min, float64 max,
// uint8 bxor (reductions) or float64 and uint8 (data movement) -- on threads float64 only;
// and the non-commutative 2x2 matrix product (a 16-byte element for data movement) at every
// shape but the large count (large p, threads and MPI: at one shape).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "call_shapes.hpp"

namespace ranklab::testing {

enum class sweep { thorough, large, threads, mpi };

inline constexpr std::array conformance_thread_ps = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17};
inline constexpr std::array conformance_large_ps = {100, 127, 128, 129};

// Whether the count is a per-rank block of a p-block buffer.
inline bool count_per_block(collective c) {
  return c == collective::allgather || c == collective::scatter || c == collective::gather ||
         c == collective::alltoall || c == collective::reduce_scatter_block;
}

// A count not divisible by p, at which the secondary operands run too; for blocks at large p
// a small one (an alltoall ring moves p^2 (p-1) / 2 blocks).
inline std::uint64_t secondary_count(collective c, int p, sweep s) {
  const auto up = static_cast<std::uint64_t>(p);
  if (s == sweep::large) return count_per_block(c) ? 3 : up + 3;
  return 2 * up + 3;
}

// The largest count: 1000 elements; for blocks beyond p = 8 on the sequential executor about
// 1000 in all, so that the reference stays cheap at p = 33.
inline std::uint64_t large_count(collective c, int p, sweep s) {
  if (count_per_block(c) && p > 8 && s == sweep::thorough) return 1000 / static_cast<std::uint64_t>(p) + 3;
  return 1000;
}

inline std::vector<std::uint64_t> sweep_counts(collective c, int p, sweep s) {
  const auto up = static_cast<std::uint64_t>(p);
  std::vector<std::uint64_t> n = {0, secondary_count(c, p, s)};
  if (s != sweep::large) n.insert(n.end(), {1, large_count(c, p, s)});
  if (s == sweep::thorough) n.insert(n.end(), {3, up - 1});
  std::sort(n.begin(), n.end());
  n.erase(std::unique(n.begin(), n.end()), n.end());
  return n;
}

// The executors share the reduction kernels: the thread and MPI sweeps vary only the element size.
inline std::vector<operand> secondary_operands(collective c, sweep s) {
  if (s == sweep::threads || s == sweep::mpi) return {float_sum};
  if (is_reduction(c)) return {float_sum, int_min, float_max, byte_xor};
  return {float_sum, byte_xor};  // the element size matters, the operator does not
}

// Roots 0, p-1, p/2; on threads 0 and p/2 (the runtime does not care which rank is the root);
// over MPI every root (p <= 8 there, and a root's messages are the ones MPI matches by tag).
inline std::vector<int> sweep_roots(collective c, int p, sweep s) {
  if (!is_rooted(c)) return {0};
  if (s == sweep::mpi) {
    std::vector<int> every(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) every[static_cast<std::size_t>(r)] = r;
    return every;
  }
  if (s == sweep::threads) return p / 2 == 0 ? std::vector<int>{0} : std::vector<int>{0, p / 2};
  return roots_for(p);
}

// One call shape: a count, or per-rank counts with optional displacements.
struct call_shape {
  std::uint64_t count = 0;
  std::vector<std::uint64_t> counts, displs;
  bool secondary = false;  // also run the secondary operands
  bool large = false;      // skip the matrix product (cost)
};

inline std::vector<call_shape> regular_shapes(collective c, int p, sweep s) {
  std::vector<call_shape> out;
  for (std::uint64_t n : sweep_counts(c, p, s))
    out.push_back({n, {}, {}, n == secondary_count(c, p, s), s != sweep::large && n == large_count(c, p, s)});
  return out;
}

inline std::vector<call_shape> vector_shapes(collective c, int p, int root, sweep s) {
  std::vector<std::vector<std::uint64_t>> layouts;
  if (c == collective::alltoallv) {
    using m = matrix_pattern;
    const std::vector<m> pats =
        s == sweep::thorough ? std::vector<m>{m::random, m::equal, m::zeros, m::diagonal, m::one_sends, m::one_receives}
        : s == sweep::threads || s == sweep::mpi ? std::vector<m>{m::random, m::one_sends, m::one_receives}
                                                 : std::vector<m>{m::random};
    for (m pat : pats) layouts.push_back(matrix_of(pat, p));
  } else {
    using cp = count_pattern;
    layouts.push_back(counts_of(cp::random, p));
    layouts.push_back(counts_of(cp::one_rank, p, root));
    if (s != sweep::large) layouts.push_back(counts_of(cp::cycling, p));
    if (s == sweep::thorough) {
      for (int hot : {(root + 1) % p, p - 1}) layouts.push_back(counts_of(cp::one_rank, p, hot));
      for (cp pat : {cp::equal, cp::zeros, cp::increasing}) layouts.push_back(counts_of(pat, p));
    }
  }
  const bool displaced = c != collective::alltoallv && c != collective::reduce_scatter;
  std::vector<call_shape> out;
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    out.push_back({0, layouts[i], {}, i == 0, false});
    if (displaced && (i == 0 || s == sweep::thorough)) out.push_back({0, layouts[i], reversed_with_gaps(layouts[i])});
  }
  return out;
}

inline call shape_call(const algorithm& a, int p, int root, const call_shape& sh, const operand& o) {
  if (has_vector_counts(a.coll))
    return make_vcall(a.coll, p, sh.counts, sh.displs, root, o.type, o.reduction, {a.name});
  return make_call(a.coll, p, sh.count, root, o.type, o.reduction, {a.name});
}

// Every call of the sweep `s` at p ranks that `a` accepts.
inline std::vector<call> conformance_calls(const algorithm& a, int p, sweep s) {
  std::vector<call> out;
  auto add = [&](const call& c) {
    if (meets_preconditions(a, c.args)) out.push_back(c);
  };
  if (a.coll == collective::barrier) {
    add(make_call(a.coll, p, 0, 0, i32, ops::sum, {a.name}));
    return out;
  }
  for (int root : sweep_roots(a.coll, p, s)) {
    const std::vector<call_shape> shapes =
        has_vector_counts(a.coll) ? vector_shapes(a.coll, p, root, s) : regular_shapes(a.coll, p, s);
    for (const call_shape& sh : shapes) {
      add(shape_call(a, p, root, sh, int_sum));
      if (sh.secondary)
        for (const operand& o : secondary_operands(a.coll, s)) add(shape_call(a, p, root, sh, o));
      if (!sh.large && (s == sweep::thorough || sh.secondary)) add(shape_call(a, p, root, sh, matrix_product));
    }
  }
  return out;
}

}  // namespace ranklab::testing
