// Alltoall and alltoallv: every algorithm against the sequential reference for p = 1..33
// (sequential executor; thread executor for a set of small p), large p, irregular count
// matrices, and the round counts, message sizes and copy-freedom the sources and builders state.
#include <bit>
#include <random>

#include "collective_checks.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/mesh.hpp"
#include "patterns/region_list.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

const std::vector<std::string> algorithms = {"linear", "pairwise", "ring", "bruck", "hypercube", "mesh2d"};
const int thread_ps[] = {1, 2, 3, 4, 5, 7, 8, 16, 17};
const std::uint64_t counts[] = {0, 1, 3, 1000};

bool power_of_two(int p) { return (p & (p - 1)) == 0; }
bool accepts(std::string_view algo, int p) { return algo != "hypercube" || power_of_two(p); }

call vcall(std::string_view algo, int p, std::vector<std::uint64_t> c, datatype type = datatype_of<std::int32_t>()) {
  call cl = make_call(collective::alltoallv, algo, p, 0, 0, type);
  cl.args.counts = std::move(c);
  return cl;
}

enum class pattern { random, one_sends_all, one_receives_all, all_zero, diagonal };
std::vector<std::uint64_t> make_counts(pattern pat, int p, std::uint64_t seed) {
  std::vector<std::uint64_t> c(static_cast<std::size_t>(p) * p, 0);
  std::mt19937_64 rng(seed * 104729 + static_cast<std::uint64_t>(p));
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) {
      std::uint64_t& x = c[static_cast<std::size_t>(i) * p + j];
      switch (pat) {
        case pattern::random: x = rng() % 3 == 0 ? 0 : rng() % 7; break;
        case pattern::one_sends_all: x = i == p / 2 ? 11 + j : 0; break;
        case pattern::one_receives_all: x = j == (p - 1) / 3 ? 13 + i : 0; break;
        case pattern::all_zero: break;
        case pattern::diagonal: x = i == j ? 9 : 0; break;
      }
    }
  return c;
}

std::size_t expected_rounds(std::string_view algo, int p) {
  if (p == 1) return 0;
  if (algo == "linear" || algo == "pairwise" || algo == "ring") return p - 1;
  if (algo == "bruck" || algo == "hypercube") return detail::ceil_log2(static_cast<std::uint64_t>(p));
  const detail::grid g = detail::most_square_grid(p);
  return (g.rows - 1) + (g.cols - 1);
}

}  // namespace

TEST_CASE("alltoall: every algorithm, p = 1..33, counts 0/1/3/1000, int32 (and float64), sequential") {
  for (const auto& algo : algorithms)
    for (int p = 1; p <= 33; ++p) {
      if (!accepts(algo, p)) continue;
      for (std::uint64_t n : counts) {
        expect_verified(make_call(collective::alltoall, algo, p, n), executor_kind::sequential);
        // float64 with 1000 elements per block only for some p, to keep the suite fast.
        if (n < 1000 || p <= 8 || p == 16 || p == 17 || p >= 31)
          expect_verified(make_call(collective::alltoall, algo, p, n, 0, datatype_of<double>()),
                          executor_kind::sequential);
      }
    }
}

TEST_CASE("alltoall: every algorithm on the thread executor") {
  for (const auto& algo : algorithms)
    for (int p : thread_ps) {
      if (!accepts(algo, p)) continue;
      for (std::uint64_t n : counts) expect_verified(make_call(collective::alltoall, algo, p, n), executor_kind::threads);
    }
}

TEST_CASE("alltoall: large p on the sequential executor") {
  for (const auto& algo : algorithms)
    for (int p : {100, 127, 128, 129}) {
      if (!accepts(algo, p)) continue;
      for (std::uint64_t n : {0, 2}) expect_verified(make_call(collective::alltoall, algo, p, n), executor_kind::sequential);
    }
}

TEST_CASE("alltoall: round counts, message sizes and no local copies") {
  for (const auto& algo : algorithms)
    for (int p = 1; p <= 129; ++p) {
      if (!accepts(algo, p) || (p > 70 && p != 100 && p < 127)) continue;
      const std::uint64_t n = 2;
      const call c = make_call(collective::alltoall, algo, p, n);
      const verify_report r = verify(build_all(*registry::find(collective::alltoall, algo), c.args));
      INFO("algorithm=" << algo << " p=" << p);
      REQUIRE(r.ok);
      CHECK(r.rounds == expected_rounds(algo, p));
      // Blocks are sent from where they are and received where they go: the only local copy
      // is each rank's block to itself.
      CHECK(r.local_elements == static_cast<std::uint64_t>(p) * n);
    }
}

TEST_CASE("alltoall: pairwise takes p-1 rounds, each moving exactly one block; XOR partners for p = 2^k") {
  for (int p = 1; p <= 64; ++p) {
    const std::uint64_t n = 5;
    const call c = make_call(collective::alltoall, "pairwise", p, n);
    const schedule_set set = build_all(*registry::find(collective::alltoall, "pairwise"), c.args);
    const verify_report r = verify(set);
    INFO("p=" << p);
    REQUIRE(r.ok);
    CHECK(r.rounds == static_cast<std::size_t>(p - 1));
    CHECK(r.messages == static_cast<std::uint64_t>(p) * (p - 1));
    CHECK(r.elements == static_cast<std::uint64_t>(p) * (p - 1) * n);
    if (p > 1) CHECK(r.max_message == n);
    for (const schedule& s : set)
      for (std::size_t k = 0; k < s.rounds().size(); ++k) {
        const ranklab::round& rd = s.rounds()[k];
        CHECK(s.send_count(rd) == n);
        CHECK(s.recv_count(rd) == n);
        if (power_of_two(p)) {
          CHECK(rd.send_to == (s.rank() ^ static_cast<int>(k + 1)));
          CHECK(rd.recv_from == rd.send_to);
        } else {
          CHECK(rd.send_to == (s.rank() + static_cast<int>(k) + 1) % p);
        }
      }
  }
}

TEST_CASE("alltoall: volumes of the store-and-forward algorithms") {
  for (int p = 2; p <= 64; ++p) {
    const std::uint64_t n = 1;
    auto elements = [&](const char* algo) {
      const call c = make_call(collective::alltoall, algo, p, n);
      return verify(build_all(*registry::find(collective::alltoall, algo), c.args)).elements;
    };
    INFO("p=" << p);
    const auto P = static_cast<std::uint64_t>(p);
    // Ring (seed 001): step k forwards p-k blocks: p * p(p-1)/2 in all.
    CHECK(elements("ring") == P * P * (P - 1) / 2);
    // Bruck and hypercube: a block travels once per set bit of its distance.
    std::uint64_t hops = 0;
    for (int t = 1; t < p; ++t) hops += static_cast<std::uint64_t>(std::popcount(static_cast<unsigned>(t)));
    CHECK(elements("bruck") == P * hops);
    if (power_of_two(p)) CHECK(elements("hypercube") == P * P / 2 * static_cast<std::uint64_t>(detail::ceil_log2(P)));
  }
}

TEST_CASE("alltoall: hypercube rejects p that is not a power of two") {
  for (int p : {3, 5, 6, 7, 12, 33}) {
    INFO("p=" << p);
    CHECK_THROWS_AS(run_check(make_call(collective::alltoall, "hypercube", p, 1), executor_kind::sequential),
                    usage_error);
    CHECK_THROWS_AS(run_check(vcall("hypercube", p, make_counts(pattern::random, p, 1)), executor_kind::sequential),
                    usage_error);
    coll_args a = make_call(collective::alltoall, "hypercube", p, 1).args;
    CHECK_THROWS_AS(registry::find(collective::alltoall, "hypercube")->build(a, 0), usage_error);
  }
  CHECK(registry::find(collective::alltoall, "hypercube")->needs_power_of_two);
  CHECK(registry::find(collective::alltoallv, "hypercube")->needs_power_of_two);
}

TEST_CASE("alltoallv: irregular count matrices, p = 1..33, sequential") {
  for (const auto& algo : algorithms)
    for (int p = 1; p <= 33; ++p) {
      if (!accepts(algo, p)) continue;
      for (pattern pat : {pattern::random, pattern::one_sends_all, pattern::one_receives_all, pattern::all_zero,
                          pattern::diagonal}) {
        const auto c = make_counts(pat, p, 1);
        expect_verified(vcall(algo, p, c), executor_kind::sequential);
        expect_verified(vcall(algo, p, c, datatype_of<double>()), executor_kind::sequential);
      }
    }
}

TEST_CASE("alltoallv: regular counts (0, 1, 3, 1000)") {
  for (const auto& algo : algorithms)
    for (int p : {1, 2, 3, 4, 6, 8, 9, 13, 16}) {
      if (!accepts(algo, p)) continue;
      for (std::uint64_t n : counts)
        expect_verified(vcall(algo, p, std::vector<std::uint64_t>(static_cast<std::size_t>(p) * p, n)),
                        executor_kind::sequential);
    }
}

TEST_CASE("alltoallv: every algorithm on the thread executor") {
  for (const auto& algo : algorithms)
    for (int p : thread_ps) {
      if (!accepts(algo, p)) continue;
      expect_verified(vcall(algo, p, make_counts(pattern::random, p, 2)), executor_kind::threads);
      expect_verified(vcall(algo, p, make_counts(pattern::one_sends_all, p, 2)), executor_kind::threads);
      expect_verified(vcall(algo, p, make_counts(pattern::one_receives_all, p, 2)), executor_kind::threads);
    }
}

TEST_CASE("alltoallv: large p on the sequential executor") {
  for (const auto& algo : algorithms)
    for (int p : {100, 127, 128, 129}) {
      if (!accepts(algo, p)) continue;
      expect_verified(vcall(algo, p, make_counts(pattern::random, p, 3)), executor_kind::sequential);
    }
}

TEST_CASE("alltoall(v): registry entries") {
  for (collective coll : {collective::alltoall, collective::alltoallv})
    for (const auto& algo : algorithms) {
      const algorithm* a = registry::find(coll, algo);
      INFO(name(coll) << "/" << algo);
      REQUIRE(a != nullptr);
      CHECK(a->needs_power_of_two == (algo == "hypercube"));
      CHECK_FALSE(a->needs_commutative);
      const bool has_cost = a->cost != nullptr;
      CHECK(has_cost);
    }
}

TEST_CASE("alltoall(v): the user API runs the new algorithms") {
  for (const auto& algo : algorithms) {
    const int p = algo == "hypercube" ? 4 : 6;
    run(p, [&](comm& c) {
      std::vector<int> in(p), out(p, -1);
      for (int j = 0; j < p; ++j) in[j] = c.rank() * 100 + j;
      c.alltoall(in, out, {algo});
      for (int j = 0; j < p; ++j) CHECK(out[j] == j * 100 + c.rank());
      // counts[i*p + j] = (i + j) % 3 elements, each i*100 + j
      std::vector<std::uint64_t> cnt(static_cast<std::size_t>(p) * p);
      for (int i = 0; i < p; ++i)
        for (int j = 0; j < p; ++j) cnt[i * p + j] = (i + j) % 3;
      std::vector<int> vin, want;
      for (int j = 0; j < p; ++j) vin.insert(vin.end(), cnt[c.rank() * p + j], c.rank() * 100 + j);
      for (int i = 0; i < p; ++i) want.insert(want.end(), cnt[i * p + c.rank()], i * 100 + c.rank());
      std::vector<int> vout(want.size(), -1);
      c.alltoallv(vin, vout, cnt, {algo});
      CHECK(vout == want);
    });
  }
}
