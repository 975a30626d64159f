// Allgather and allgatherv: every algorithm against the sequential reference for p = 1..33
// (sequential executor; thread executor for a set of small p), large p, irregular counts and
// displacements, and the round counts and volumes the sources state.
#include <random>

#include "collective_checks.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/mesh.hpp"
#include "patterns/region_list.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

const std::vector<std::string> algorithms = {"linear", "ring", "recursive_doubling", "bruck", "neighbor_exchange",
                                             "mesh2d"};
const int thread_ps[] = {1, 2, 3, 4, 5, 7, 8, 16, 17};
const std::uint64_t counts[] = {0, 1, 3, 1000};

call vcall(std::string_view algo, int p, std::vector<std::uint64_t> c, std::vector<std::uint64_t> displs = {},
           datatype type = datatype_of<std::int32_t>()) {
  call cl = make_call(collective::allgatherv, algo, p, 0, 0, type);
  cl.args.counts = std::move(c);
  cl.args.displs = std::move(displs);
  return cl;
}

// Irregular count patterns for allgatherv.
enum class pattern { random, one_has_all, all_zero, alternate_zero };
std::vector<std::uint64_t> make_counts(pattern pat, int p, std::uint64_t seed) {
  std::vector<std::uint64_t> c(p, 0);
  std::mt19937_64 rng(seed * 7919 + static_cast<std::uint64_t>(p));
  for (int j = 0; j < p; ++j) {
    switch (pat) {
      case pattern::random: c[j] = rng() % 3 == 0 ? 0 : rng() % 9; break;
      case pattern::one_has_all: c[j] = j == p / 2 ? 257 : 0; break;
      case pattern::all_zero: break;
      case pattern::alternate_zero: c[j] = j % 2 ? 0 : 5 + j; break;
    }
  }
  return c;
}

// Displacements that reverse the block order and leave gaps between blocks.
std::vector<std::uint64_t> reversed_with_gaps(const std::vector<std::uint64_t>& c) {
  std::vector<std::uint64_t> d(c.size());
  std::uint64_t at = 3;
  for (std::size_t j = c.size(); j-- > 0;) {
    d[j] = at;
    at += c[j] + 2;
  }
  return d;
}

std::size_t expected_rounds(std::string_view algo, int p) {
  if (p == 1) return 0;
  const auto pof2 = static_cast<int>(detail::floor_pow2(static_cast<std::uint64_t>(p)));
  if (algo == "linear" || algo == "ring") return p - 1;
  if (algo == "bruck") return detail::ceil_log2(static_cast<std::uint64_t>(p));
  if (algo == "recursive_doubling") return detail::ceil_log2(static_cast<std::uint64_t>(pof2)) + (pof2 == p ? 0 : 2);
  if (algo == "neighbor_exchange") return p % 2 == 0 ? p / 2 : (p - 1) / 2 + 2;
  const detail::grid g = detail::most_square_grid(p);
  return (g.rows - 1) + (g.cols - 1);
}

}  // namespace

TEST_CASE("allgather: every algorithm, p = 1..33, counts 0/1/3/1000, int32 and float64, sequential") {
  for (const auto& algo : algorithms)
    for (int p = 1; p <= 33; ++p)
      for (std::uint64_t n : counts) {
        expect_verified(make_call(collective::allgather, algo, p, n), executor_kind::sequential);
        expect_verified(make_call(collective::allgather, algo, p, n, 0, datatype_of<double>()),
                        executor_kind::sequential);
      }
}

TEST_CASE("allgather: every algorithm on the thread executor") {
  for (const auto& algo : algorithms)
    for (int p : thread_ps)
      for (std::uint64_t n : counts) expect_verified(make_call(collective::allgather, algo, p, n), executor_kind::threads);
}

TEST_CASE("allgather: large p on the sequential executor") {
  for (const auto& algo : algorithms)
    for (int p : {100, 127, 128, 129})
      for (std::uint64_t n : {0, 3}) expect_verified(make_call(collective::allgather, algo, p, n), executor_kind::sequential);
}

TEST_CASE("allgather: round counts as the sources state them") {
  for (const auto& algo : algorithms)
    for (int p = 1; p <= 129; ++p) {
      const call c = make_call(collective::allgather, algo, p, 2);
      const verify_report r = verify(build_all(*registry::find(collective::allgather, algo), c.args));
      INFO("algorithm=" << algo << " p=" << p);
      REQUIRE(r.ok);
      CHECK(r.rounds == expected_rounds(algo, p));
    }
  // The statements of issue 4 in their own words.
  for (int p = 1; p <= 129; ++p) {
    auto rounds = [&](const char* algo) {
      const call c = make_call(collective::allgather, algo, p, 1);
      return verify(build_all(*registry::find(collective::allgather, algo), c.args)).rounds;
    };
    INFO("p=" << p);
    CHECK(rounds("bruck") == static_cast<std::size_t>(detail::ceil_log2(static_cast<std::uint64_t>(p))));
    CHECK(rounds("ring") == static_cast<std::size_t>(p - 1));
    if ((p & (p - 1)) == 0)
      CHECK(rounds("recursive_doubling") == static_cast<std::size_t>(detail::ceil_log2(static_cast<std::uint64_t>(p))));
  }
}

TEST_CASE("allgather: every block reaches every rank exactly once (no redundant transfers)") {
  for (const auto& algo : algorithms)
    for (int p : {1, 2, 3, 5, 6, 7, 8, 12, 13, 16, 17, 31, 32, 33}) {
      const std::uint64_t n = 3;
      const call c = make_call(collective::allgather, algo, p, n);
      const verify_report r = verify(build_all(*registry::find(collective::allgather, algo), c.args), true);
      INFO("algorithm=" << algo << " p=" << p);
      REQUIRE(r.ok);
      CHECK(r.elements == static_cast<std::uint64_t>(p) * (p - 1) * n);  // the minimum volume
      for (int rank = 0; rank < p; ++rank) {
        std::uint64_t received = 0;
        std::uint32_t most = 0;
        for (auto x : r.receives_per_element[rank]) received += x, most = std::max(most, x);
        CHECK(received == (p - 1) * n);
        CHECK(most <= 1);
      }
    }
}

TEST_CASE("allgatherv: irregular counts and displacements, p = 1..33, sequential") {
  for (const auto& algo : algorithms)
    for (int p = 1; p <= 33; ++p)
      for (pattern pat : {pattern::random, pattern::one_has_all, pattern::all_zero, pattern::alternate_zero}) {
        const auto c = make_counts(pat, p, 1);
        expect_verified(vcall(algo, p, c), executor_kind::sequential);
        expect_verified(vcall(algo, p, c, reversed_with_gaps(c), datatype_of<double>()), executor_kind::sequential);
      }
}

TEST_CASE("allgatherv: regular counts match allgather (0, 1, 3, 1000 per rank)") {
  for (const auto& algo : algorithms)
    for (int p : {1, 2, 3, 4, 7, 8, 13, 16, 33})
      for (std::uint64_t n : counts)
        expect_verified(vcall(algo, p, std::vector<std::uint64_t>(p, n)), executor_kind::sequential);
}

TEST_CASE("allgatherv: every algorithm on the thread executor") {
  for (const auto& algo : algorithms)
    for (int p : thread_ps) {
      const auto c = make_counts(pattern::random, p, 2);
      expect_verified(vcall(algo, p, c), executor_kind::threads);
      expect_verified(vcall(algo, p, c, reversed_with_gaps(c)), executor_kind::threads);
      expect_verified(vcall(algo, p, make_counts(pattern::one_has_all, p, 2)), executor_kind::threads);
    }
}

TEST_CASE("allgatherv: large p on the sequential executor") {
  for (const auto& algo : algorithms)
    for (int p : {100, 127, 128, 129}) {
      const auto c = make_counts(pattern::random, p, 3);
      expect_verified(vcall(algo, p, c), executor_kind::sequential);
      expect_verified(vcall(algo, p, c, reversed_with_gaps(c)), executor_kind::sequential);
    }
}

TEST_CASE("allgather(v): registry entries exist without preconditions") {
  for (collective coll : {collective::allgather, collective::allgatherv})
    for (const auto& algo : algorithms) {
      const algorithm* a = registry::find(coll, algo);
      INFO(name(coll) << "/" << algo);
      REQUIRE(a != nullptr);
      CHECK_FALSE(a->needs_power_of_two);
      CHECK_FALSE(a->needs_commutative);
      const bool has_cost = a->cost != nullptr;
      CHECK(has_cost);
      CHECK_FALSE(a->summary.empty());
    }
}

TEST_CASE("allgather(v): the user API runs the new algorithms") {
  for (const auto& algo : algorithms) {
    run(5, [&](comm& c) {
      std::vector<int> in{c.rank() * 10, c.rank() * 10 + 1};
      std::vector<int> out(10, -1);
      c.allgather(in, out, {algo});
      for (int j = 0; j < 5; ++j) {
        CHECK(out[2 * j] == j * 10);
        CHECK(out[2 * j + 1] == j * 10 + 1);
      }
      const std::vector<std::uint64_t> cnt{1, 0, 2, 1, 3};
      std::vector<int> vin(cnt[c.rank()], c.rank());
      std::vector<int> vout(7, -1);
      c.allgatherv(vin, vout, cnt, {}, {algo});
      CHECK(vout == std::vector<int>{0, 2, 2, 3, 4, 4, 4});
    });
  }
}
