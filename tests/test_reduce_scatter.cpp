// reduce_scatter and reduce_scatter_block: the claims of the registered algorithms -- round
// counts and volumes, regular and irregular, and which operators each accepts. Results
// against the reference (rank-ordered, the non-commutative 2x2 matrix product where an
// algorithm accepts it): test_conformance.cpp. See docs/algorithms.md, "reduce_scatter".
#include <doctest/doctest.h>

#include <bit>
#include <string>
#include <vector>

#include "collective_checks.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

call block_call(std::string_view algo, int p, std::uint64_t count, const operand& o = int_sum) {
  return make_call(collective::reduce_scatter_block, p, count, 0, o.type, o.reduction, {algo});
}

call irregular_call(std::string_view algo, const std::vector<std::uint64_t>& counts) {
  return make_vcall(collective::reduce_scatter, static_cast<int>(counts.size()), counts, {}, 0, i32, ops::sum, {algo});
}

// Irregular count vectors for p ranks: equal, all zero, all on one rank, zeros mixed with
// others, pseudo-random.
std::vector<std::vector<std::uint64_t>> count_sets(int p) {
  using cp = count_pattern;
  std::vector<std::vector<std::uint64_t>> sets = {counts_of(cp::equal, p), counts_of(cp::zeros, p)};
  for (int owner : {0, p - 1, p / 2}) sets.push_back(counts_of(cp::one_rank, p, owner));
  sets.push_back(counts_of(cp::cycling, p));
  sets.push_back(counts_of(cp::random, p));
  return sets;
}

}  // namespace

TEST_CASE("reduce_scatter(_block): round counts and volumes") {
  for (int p = 1; p <= 40; ++p) {
    const std::uint64_t n = 5, total = n * static_cast<std::uint64_t>(p);
    const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
    const int lg = floor_log2(p);
    INFO("p = " << p);
    const verify_report ring = report_of(block_call("ring", p, n));
    CHECK(ring.rounds == static_cast<std::size_t>(p - 1));
    CHECK(ring.elements == (p - 1) * total);  // every rank sends p-1 blocks: bandwidth-optimal
    const verify_report pw = report_of(block_call("pairwise", p, n));
    CHECK(pw.rounds == static_cast<std::size_t>(p - 1));
    CHECK(pw.elements == (p - 1) * total);
    for (const char* algo : {"recursive_halving", "noncommutative"}) {
      const verify_report rh = report_of(block_call(algo, p, n));
      CHECK(rh.rounds == static_cast<std::size_t>(lg + (p == pof2 ? 0 : 2)));
      if (p == pof2)
        CHECK(rh.elements == (p - 1) * total);
      else
        CHECK(rh.elements == (pof2 - 1) * total + (p - pof2) * (total + n));  // + folding and handing back
    }
  }
  // Irregular: the volume of ring and pairwise is (p-1) times the total, whatever the split.
  for (int p : {7, 16}) {
    for (const auto& counts : count_sets(p)) {
      std::uint64_t total = 0;
      for (auto c : counts) total += c;
      CHECK(report_of(irregular_call("ring", counts)).elements == (p - 1) * total);
      CHECK(report_of(irregular_call("pairwise", counts)).elements == (p - 1) * total);
      if (p == 16)
        for (const char* algo : {"recursive_halving", "noncommutative"})
          CHECK(report_of(irregular_call(algo, counts)).elements == (p - 1) * total);
    }
  }
}

TEST_CASE("reduce_scatter(_block): registry entries and preconditions") {
  for (collective c : {collective::reduce_scatter, collective::reduce_scatter_block})
    check_registry_entries(
        c, {{"ring", true}, {"recursive_halving", true}, {"pairwise", false}, {"noncommutative", false}});
  // The framework refuses a non-commutative operator for a commutative-only algorithm.
  CHECK_THROWS_AS(run_check(block_call("ring", 4, 3, matrix_product), executor_kind::sequential), usage_error);
}
