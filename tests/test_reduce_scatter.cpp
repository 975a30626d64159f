// reduce_scatter and reduce_scatter_block: every algorithm against the sequential
// reference (rank-ordered), every p in 1..33 and some large p, regular and irregular counts,
// integer and floating types, min/max, and the non-commutative 2x2 matrix product where the
// algorithm claims it; round counts and volumes.
#include <doctest/doctest.h>

#include <bit>
#include <random>
#include <string>
#include <vector>

#include "collective_checks.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

constexpr const char* algorithms[] = {"ring", "recursive_halving", "pairwise", "noncommutative"};

struct op_case {
  datatype type;
  op reduction;
};
const op_case int_sum{datatype_of<std::int32_t>(), ops::sum};
const op_case float_sum{datatype_of<double>(), ops::sum};
const op_case int_min{datatype_of<std::int32_t>(), ops::min};
const op_case float_max{datatype_of<double>(), ops::max};
const op_case matmul{datatype_of<matrix2x2>(), matrix2x2_product()};

bool claims(collective c, std::string_view algo, const op& o) {
  const algorithm* a = registry::find(c, algo);
  REQUIRE_MESSAGE(a != nullptr, std::string(algo));
  return o.commutative || !a->needs_commutative;
}

call block_call(std::string_view algo, int p, std::uint64_t count, const op_case& oc) {
  return make_call(collective::reduce_scatter_block, algo, p, count, 0, oc.type, oc.reduction);
}

call irregular_call(std::string_view algo, const std::vector<std::uint64_t>& counts, const op_case& oc) {
  call c = make_call(collective::reduce_scatter, algo, static_cast<int>(counts.size()), 0, 0, oc.type, oc.reduction);
  c.args.counts = counts;
  return c;
}

// Runs the call if the algorithm claims the operator; returns the verifier's report.
verify_report run(const call& c, executor_kind ex) {
  if (!claims(c.args.coll, c.choice.name, c.reduction)) return {};
  return expect_verified(c, ex).report;
}

// Builds all ranks' schedules and verifies them (rounds, messages, volume) without running.
verify_report build_and_verify(call c) {
  c.args.commutative = c.reduction.commutative;
  c.args.elem_size = c.type.size;
  const algorithm* a = registry::find(c.args.coll, c.choice.name);
  REQUIRE(a != nullptr);
  const verify_report r = verify(build_all(*a, c.args));
  CHECK_MESSAGE(r.ok, (r.problems.empty() ? "" : r.problems.front()));
  return r;
}

// Irregular count vectors for p ranks: equal, all on one rank, zeros mixed with others,
// pseudo-random.
std::vector<std::vector<std::uint64_t>> count_sets(int p) {
  std::vector<std::vector<std::uint64_t>> sets;
  sets.emplace_back(p, 3);
  sets.emplace_back(p, 0);
  for (int owner : {0, p - 1, p / 2}) {
    std::vector<std::uint64_t> c(p, 0);
    c[owner] = 37;
    sets.push_back(c);
  }
  std::vector<std::uint64_t> mixed(p);
  for (int j = 0; j < p; ++j) mixed[j] = j % 3 == 1 ? 0 : static_cast<std::uint64_t>(j % 5 + 1);
  sets.push_back(mixed);
  std::mt19937 rng(static_cast<unsigned>(p));
  std::vector<std::uint64_t> random(p);
  for (auto& x : random) x = rng() % 9;
  sets.push_back(random);
  return sets;
}

}  // namespace

TEST_CASE("reduce_scatter_block: every algorithm, p = 1..33, sequential executor") {
  for (const char* algo : algorithms)
    for (int p = 1; p <= 33; ++p) {
      const std::uint64_t counts[] = {0, 1, static_cast<std::uint64_t>(p - 1), 7, 1000 / static_cast<std::uint64_t>(p) + 3};
      for (std::uint64_t n : counts) {
        run(block_call(algo, p, n, int_sum), executor_kind::sequential);
        run(block_call(algo, p, n, matmul), executor_kind::sequential);
      }
      for (const op_case& oc : {float_sum, int_min, float_max}) run(block_call(algo, p, 5, oc), executor_kind::sequential);
    }
}

TEST_CASE("reduce_scatter_block: large counts and large p, sequential executor") {
  for (const char* algo : algorithms) {
    for (int p : {2, 5, 8, 13}) {
      run(block_call(algo, p, 1000, int_sum), executor_kind::sequential);
      run(block_call(algo, p, 1000, matmul), executor_kind::sequential);
    }
    for (int p : {100, 127, 128, 129}) {
      for (std::uint64_t n : {0, 3}) run(block_call(algo, p, n, int_sum), executor_kind::sequential);
      run(block_call(algo, p, 2, matmul), executor_kind::sequential);
    }
  }
}

TEST_CASE("reduce_scatter: irregular counts, every algorithm, p = 1..33, sequential executor") {
  for (const char* algo : algorithms)
    for (int p = 1; p <= 33; ++p)
      for (const auto& counts : count_sets(p)) {
        run(irregular_call(algo, counts, int_sum), executor_kind::sequential);
        run(irregular_call(algo, counts, matmul), executor_kind::sequential);
      }
  for (const char* algo : algorithms)
    for (int p : {6, 11}) {
      const auto sets = count_sets(p);
      for (const op_case& oc : {float_sum, int_min, float_max}) run(irregular_call(algo, sets.back(), oc), executor_kind::sequential);
    }
}

TEST_CASE("reduce_scatter: large p, sequential executor") {
  for (const char* algo : algorithms)
    for (int p : {100, 127, 128, 129}) {
      const auto sets = count_sets(p);
      for (std::size_t i : {std::size_t{2}, sets.size() - 1}) {
        run(irregular_call(algo, sets[i], int_sum), executor_kind::sequential);
        run(irregular_call(algo, sets[i], matmul), executor_kind::sequential);
      }
    }
}

TEST_CASE("reduce_scatter(_block): thread executor") {
  for (const char* algo : algorithms)
    for (int p : {1, 2, 3, 4, 5, 7, 8, 16, 17}) {
      for (std::uint64_t n : {0, 5, 200}) run(block_call(algo, p, n, int_sum), executor_kind::threads);
      run(block_call(algo, p, 5, float_sum), executor_kind::threads);
      run(block_call(algo, p, 5, matmul), executor_kind::threads);
      const auto sets = count_sets(p);
      run(irregular_call(algo, sets[2], int_sum), executor_kind::threads);
      run(irregular_call(algo, sets.back(), matmul), executor_kind::threads);
    }
}

TEST_CASE("reduce_scatter(_block): round counts and volumes") {
  for (int p = 1; p <= 40; ++p) {
    const std::uint64_t n = 5, total = n * static_cast<std::uint64_t>(p);
    const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
    const int lg = std::bit_width(static_cast<unsigned>(pof2)) - 1;
    INFO("p = " << p);
    const verify_report ring = build_and_verify(block_call("ring", p, n, int_sum));
    CHECK(ring.rounds == static_cast<std::size_t>(p - 1));
    CHECK(ring.elements == (p - 1) * total);  // every rank sends p-1 blocks: bandwidth-optimal
    const verify_report pw = build_and_verify(block_call("pairwise", p, n, int_sum));
    CHECK(pw.rounds == static_cast<std::size_t>(p - 1));
    CHECK(pw.elements == (p - 1) * total);
    for (const char* algo : {"recursive_halving", "noncommutative"}) {
      const verify_report rh = build_and_verify(block_call(algo, p, n, int_sum));
      CHECK(rh.rounds == static_cast<std::size_t>(lg + (p == pof2 ? 0 : 2)));
      if (p == pof2) CHECK(rh.elements == (p - 1) * total);
      else CHECK(rh.elements == (pof2 - 1) * total + (p - pof2) * (total + n));  // + folding and handing back
    }
  }
  // Irregular: the volume of ring and pairwise is (p-1) times the total, whatever the split.
  for (int p : {7, 16}) {
    for (const auto& counts : count_sets(p)) {
      std::uint64_t total = 0;
      for (auto c : counts) total += c;
      CHECK(build_and_verify(irregular_call("ring", counts, int_sum)).elements == (p - 1) * total);
      CHECK(build_and_verify(irregular_call("pairwise", counts, int_sum)).elements == (p - 1) * total);
      if (p == 16)
        for (const char* algo : {"recursive_halving", "noncommutative"})
          CHECK(build_and_verify(irregular_call(algo, counts, int_sum)).elements == (p - 1) * total);
    }
  }
}

TEST_CASE("reduce_scatter(_block): registry entries and preconditions") {
  for (collective c : {collective::reduce_scatter, collective::reduce_scatter_block}) {
    CHECK(registry::find(c, "ring")->needs_commutative);
    CHECK(registry::find(c, "recursive_halving")->needs_commutative);
    CHECK_FALSE(registry::find(c, "pairwise")->needs_commutative);
    CHECK_FALSE(registry::find(c, "noncommutative")->needs_commutative);
    for (const char* algo : algorithms) {
      CHECK_FALSE(registry::find(c, algo)->needs_power_of_two);
      CHECK(static_cast<bool>(registry::find(c, algo)->cost));
    }
  }
  // The framework refuses a non-commutative operator for a commutative-only algorithm.
  CHECK_THROWS_AS(run_check(block_call("ring", 4, 3, matmul), executor_kind::sequential), usage_error);
}
