// Barrier: every algorithm verified for p = 1..33 and large p, round counts, a structural
// check that every rank transitively hears from every rank before it leaves, and a real
// separation test on the thread executor.
#include <atomic>

#include "collective_checks.hpp"
#include "patterns/rank_arithmetic.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

const std::vector<std::string> algorithms = {"dissemination", "recursive_doubling", "tree", "counter"};
const int thread_ps[] = {1, 2, 3, 4, 5, 7, 8, 16, 17};

std::size_t expected_rounds(std::string_view algo, int p) {
  const auto log = static_cast<std::size_t>(detail::ceil_log2(static_cast<std::uint64_t>(p)));
  if (algo == "tree") return 2 * log;
  if (algo == "counter") return p > 1 ? 1 : 0;  // one fence round
  if (algo == "recursive_doubling") {
    const auto pof2 = detail::floor_pow2(static_cast<std::uint64_t>(p));
    return static_cast<std::size_t>(detail::ceil_log2(pof2)) + (pof2 == static_cast<std::uint64_t>(p) ? 0 : 2);
  }
  return log;
}

}  // namespace

TEST_CASE("barrier: every algorithm verifies for p = 1..33 and large p") {
  for (const auto& algo : algorithms) {
    for (int p = 1; p <= 33; ++p) expect_verified(make_call(collective::barrier, algo, p, 0), executor_kind::sequential);
    for (int p : {100, 127, 128, 129}) expect_verified(make_call(collective::barrier, algo, p, 0), executor_kind::sequential);
    for (int p : thread_ps) expect_verified(make_call(collective::barrier, algo, p, 0), executor_kind::threads);
  }
}

TEST_CASE("barrier: round counts") {
  for (const auto& algo : algorithms)
    for (int p = 1; p <= 129; ++p) {
      const call c = make_call(collective::barrier, algo, p, 0);
      const verify_report r = verify(build_all(*registry::find(collective::barrier, algo), c.args));
      INFO("algorithm=" << algo << " p=" << p);
      REQUIRE(r.ok);
      CHECK(r.rounds == expected_rounds(algo, p));
    }
}

// Whom a rank has (transitively) heard from, round by round: a message delivered in round i
// carries what its sender knew at the start of round i. A barrier is correct exactly when
// every rank has heard from every rank by the end of its schedule. A fence round (shared
// memory) lets a rank hear what every rank knew when it arrived.
TEST_CASE("barrier: every rank hears from every rank before it leaves (p = 1..129)") {
  for (const auto& algo : algorithms)
    for (int p = 1; p <= 129; ++p) {
      const call c = make_call(collective::barrier, algo, p, 0);
      const schedule_set set = build_all(*registry::find(collective::barrier, algo), c.args);
      std::vector<std::vector<bool>> heard(p, std::vector<bool>(p, false));
      for (int r = 0; r < p; ++r) heard[r][r] = true;
      std::size_t rounds = 0;
      for (const schedule& s : set) rounds = std::max(rounds, s.rounds().size());
      for (std::size_t i = 0; i < rounds; ++i) {
        auto next = heard;
        for (int r = 0; r < p; ++r) {
          if (i >= set[r].rounds().size()) continue;
          if (set[r].rounds()[i].fence) {
            for (int k = 0; k < p; ++k)
              for (int j = 0; j < p; ++j)
                if (heard[k][j] && i < set[k].rounds().size() && set[k].rounds()[i].fence) next[r][j] = true;
            continue;
          }
          const int from = set[r].rounds()[i].recv_from;
          if (from == no_rank) continue;
          for (int j = 0; j < p; ++j)
            if (heard[from][j]) next[r][j] = true;
        }
        heard = std::move(next);
      }
      INFO("algorithm=" << algo << " p=" << p);
      int missing = 0;
      for (int r = 0; r < p; ++r)
        for (int j = 0; j < p; ++j) missing += heard[r][j] ? 0 : 1;
      CHECK(missing == 0);
    }
}

TEST_CASE("barrier: separates on the thread executor (everyone arrived before anyone leaves)") {
  for (const auto& algo : algorithms)
    for (int p : thread_ps) {
      std::atomic<int> arrived{0};
      std::atomic<int> early{0};
      const int iterations = 20;
      run(p, [&](comm& c) {
        for (int it = 0; it < iterations; ++it) {
          arrived.fetch_add(1);
          c.barrier({algo});
          // Nobody can start the next iteration before everyone passed the second barrier.
          if (arrived.load() != p * (it + 1)) early.fetch_add(1);
          c.barrier({algo});
        }
      });
      INFO("algorithm=" << algo << " p=" << p);
      CHECK(early.load() == 0);
      CHECK(arrived.load() == p * iterations);
    }
}

TEST_CASE("barrier: registry entries") {
  for (const auto& algo : algorithms) {
    const algorithm* a = registry::find(collective::barrier, algo);
    INFO(algo);
    REQUIRE(a != nullptr);
    CHECK_FALSE(a->needs_power_of_two);
    const bool has_cost = a->cost != nullptr;
    CHECK(has_cost);
  }
}
