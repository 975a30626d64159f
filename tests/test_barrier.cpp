// Barrier: the claims of the registered algorithms -- round counts, a structural check that
// every rank transitively hears from every rank before it leaves, and a real separation
// test on the thread executor. Verification against the reference: test_conformance.cpp.
// See docs/algorithms.md, "barrier".
#include <atomic>

#include "collective_checks.hpp"
#include "patterns/rank_arithmetic.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

const int thread_ps[] = {1, 2, 3, 4, 5, 7, 8, 16, 17};

// The rounds the sources state.
const round_claims barrier_rounds = {
    {"dissemination", [](int p) -> std::size_t { return ceil_log2(p); }},
    {"tree", [](int p) -> std::size_t { return 2 * ceil_log2(p); }},
    {"counter", [](int) -> std::size_t { return 1; }},  // one fence round
    // Open MPI's double ring: a token twice around the ring, 2p rounds (none for p = 1).
    {"double_ring", [](int p) -> std::size_t { return p == 1 ? 0 : 2 * p; }},
    {"recursive_doubling", folded_doubling_rounds},
};

call barrier_call(std::string_view algo, int p) {
  return make_call(collective::barrier, p, 0, 0, i32, ops::sum, {algo});
}

}  // namespace

TEST_CASE("barrier: round counts") { check_round_claims(collective::barrier, barrier_rounds, ps_up_to(129), 0); }

// Whom a rank has (transitively) heard from, round by round: a message delivered in round i
// carries what its sender knew at the start of round i. A barrier is correct exactly when
// every rank has heard from every rank by the end of its schedule. A fence round (shared
// memory) lets a rank hear what every rank knew when it arrived.
TEST_CASE("barrier: every rank hears from every rank before it leaves (p = 1..129)") {
  for (const algorithm* a : registry::for_collective(collective::barrier))
    for (int p = 1; p <= 129; ++p) {
      const call c = barrier_call(a->name, p);
      if (!meets_preconditions(*a, c.args)) continue;  // the two-process specialisation
      const schedule_set set = plans_of(c);
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
      INFO("algorithm=" << a->name << " p=" << p);
      int missing = 0;
      for (int r = 0; r < p; ++r)
        for (int j = 0; j < p; ++j) missing += heard[r][j] ? 0 : 1;
      CHECK(missing == 0);
    }
}

TEST_CASE("barrier: separates on the thread executor (everyone arrived before anyone leaves)") {
  for (const algorithm* a : registry::for_collective(collective::barrier))
    for (int p : thread_ps) {
      if (a->only_p != 0 && p != a->only_p) continue;  // the two-process specialisation
      const std::string algo(a->name);
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

TEST_CASE("barrier: registry entries") { check_registry_entries(collective::barrier); }
