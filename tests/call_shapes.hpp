// The parts of a collective call the test suites vary -- operands, roots, counts,
// layouts -- and a label for it; no test framework, so that any check program can use them.
// Calls are assembled with ranklab::make_call / make_vcall (ranklab/call.hpp).
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ranklab/check.hpp"
#include "ranklab/ranklab.hpp"

namespace ranklab::testing {

// ---- operands ---------------------------------------------------------------------------------

inline constexpr datatype i32 = datatype_of<std::int32_t>();
inline constexpr datatype f64 = datatype_of<double>();

// An element type with the operator a call reduces it by (sum where nothing is reduced).
struct operand {
  datatype type;
  op reduction = ops::sum;
};
inline const operand int_sum{i32, ops::sum};
inline const operand float_sum{f64, ops::sum};
inline const operand int_min{i32, ops::min};
inline const operand float_max{f64, ops::max};
inline const operand byte_xor{datatype_of<std::uint8_t>(), ops::bxor};
// Non-commutative: checks that a reduction combines in rank order.
inline const operand matrix_product{datatype_of<matrix2x2>(), matrix2x2_product()};

// ---- labels, sweeps, layouts ---------------------------------------------------------------------

inline std::string label(const call& c) {
  return fmt::format("{} algorithm={} type={} op={}", describe(c.args), c.choice.name, name(c.type.kind),
                     name(c.reduction.kind));
}
inline std::string label(const call& c, executor_kind ex) {
  return fmt::format("{} executor={}", label(c), ex == executor_kind::threads ? "threads" : "sequential");
}

inline int ceil_log2(std::int64_t p) { return p <= 1 ? 0 : std::bit_width(static_cast<std::uint64_t>(p - 1)); }
inline int floor_log2(std::int64_t p) { return std::bit_width(static_cast<std::uint64_t>(p)) - 1; }

// 1, 2, ..., n.
inline std::vector<int> ps_up_to(int n) {
  std::vector<int> ps(static_cast<std::size_t>(n));
  for (int p = 1; p <= n; ++p) ps[static_cast<std::size_t>(p - 1)] = p;
  return ps;
}

// Roots 0, p-1 and p/2 (distinct, ascending).
inline std::vector<int> roots_for(int p) {
  std::vector<int> r = {0, p - 1, p / 2};
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

// Displacements that reverse the block order and leave gaps between blocks.
inline std::vector<std::uint64_t> reversed_with_gaps(const std::vector<std::uint64_t>& counts) {
  std::vector<std::uint64_t> d(counts.size());
  std::uint64_t at = 3;
  for (std::size_t j = counts.size(); j-- > 0;) {
    d[j] = at;
    at += counts[j] + 2;
  }
  return d;
}

// Per-rank counts of the v-collectives.
enum class count_pattern { equal, zeros, one_rank, cycling, increasing, random };
inline std::vector<std::uint64_t> counts_of(count_pattern pat, int p, int hot = 0, std::uint64_t seed = 1) {
  const auto up = static_cast<std::size_t>(p);
  std::vector<std::uint64_t> c(up, 0);
  std::mt19937_64 rng(seed * 7919 + up);
  for (std::size_t j = 0; j < up; ++j) switch (pat) {
      case count_pattern::equal:
        c[j] = 3;
        break;
      case count_pattern::zeros:
        break;
      case count_pattern::one_rank:
        c[j] = j == static_cast<std::size_t>(hot) ? 37 : 0;
        break;
      case count_pattern::cycling:
        c[j] = (j * 7 + 3) % 5;
        break;  // zeros in between
      case count_pattern::increasing:
        c[j] = j;
        break;
      case count_pattern::random:
        c[j] = rng() % 3 == 0 ? 0 : rng() % 9;
        break;
    }
  return c;
}

// alltoallv count matrices (p*p, row i: what rank i sends).
enum class matrix_pattern { equal, zeros, diagonal, one_sends, one_receives, random };
inline std::vector<std::uint64_t> matrix_of(matrix_pattern pat, int p, std::uint64_t seed = 1) {
  const auto up = static_cast<std::size_t>(p);
  std::vector<std::uint64_t> c(up * up, 0);
  std::mt19937_64 rng(seed * 104729 + up);
  for (std::size_t i = 0; i < up; ++i)
    for (std::size_t j = 0; j < up; ++j) {
      std::uint64_t& x = c[i * up + j];
      switch (pat) {
        case matrix_pattern::equal:
          x = 3;
          break;
        case matrix_pattern::zeros:
          break;
        case matrix_pattern::diagonal:
          x = i == j ? 9 : 0;
          break;
        case matrix_pattern::one_sends:
          x = i == up / 2 ? 11 + j : 0;
          break;
        case matrix_pattern::one_receives:
          x = j == (up - 1) / 3 ? 13 + i : 0;
          break;
        case matrix_pattern::random:
          x = rng() % 3 == 0 ? 0 : rng() % 7;
          break;
      }
    }
  return c;
}

// A call of algorithm `algo` at root p/2 on int64 sums: `count` elements, or for the
// v-collectives irregular random counts (with zeros).
inline call irregular_call(collective c, std::string_view algo, int p, std::uint64_t count) {
  const datatype t = datatype_of<std::int64_t>();
  if (c == collective::alltoallv)
    return make_vcall(c, p, matrix_of(matrix_pattern::random, p), {}, p / 2, t, ops::sum, {algo});
  if (has_vector_counts(c))
    return make_vcall(c, p, counts_of(count_pattern::random, p), {}, p / 2, t, ops::sum, {algo});
  return make_call(c, p, count, p / 2, t, ops::sum, {algo});
}

}  // namespace ranklab::testing
