// Tests of the circulant broadcast schedules (include/ranklab/circulant.hpp; J. L. Träff,
// "Optimal Broadcast Schedules in Logarithmic Time with Applications to Broadcast,
// All-Broadcast, Reduction and All-Reduction"; see docs/algorithms.md, "Circulant
// schedules"): the paper's Tables 1-3 entry for entry, the four
// correctness conditions for every p up to 2100, the violation and recursion bounds,
// the O(log p) send schedule against the O(log^2 p) reference, the receive schedule
// against a literal linked-list transcription of the paper's Algorithms 4 and 5, and
// Algorithm 1 simulated with blocks (per rank and all ranks in lock step).
// Runs in a few seconds in RelWithDebInfo.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ranklab/circulant.hpp"

namespace circ = ranklab::circulant;
using circ::skips;

namespace {

std::vector<int> recv_of(const skips& s, std::int64_t r, circ::schedule_stats* st = nullptr) {
  std::vector<int> v(static_cast<std::size_t>(s.q));
  circ::recv_schedule(s, r, v, st);
  return v;
}
std::vector<int> send_of(const skips& s, std::int64_t r, circ::schedule_stats* st = nullptr) {
  std::vector<int> v(static_cast<std::size_t>(s.q));
  circ::send_schedule(s, r, v, st);
  return v;
}
std::vector<int> send_reference_of(const skips& s, std::int64_t r) {
  std::vector<int> v(static_cast<std::size_t>(s.q));
  circ::send_schedule_reference(s, r, v);
  return v;
}

// The paper's Algorithms 4 and 5 transcribed literally: remaining skip indices in a doubly
// linked list, recursive search. The library uses a bit mask and an explicit stack instead;
// this is the oracle that they compute the same thing.
struct paper_recv_schedule {
  const skips& s;
  std::int64_t target;
  std::vector<int> recv;
  int found = 0;
  std::array<int, circ::max_q + 2> next{}, prev{};

  paper_recv_schedule(const skips& s_, std::int64_t r) : s(s_), target(s_.p + r), recv(static_cast<std::size_t>(s_.q)) {
    const int q = s.q;
    for (int k = 0; k <= q; ++k) {
      next[static_cast<std::size_t>(k)] = k - 1;
      prev[static_cast<std::size_t>(k)] = k + 1;
    }
    const int b = circ::baseblock(s, r);
    unlink(b);
    allblocks(0, 2 * s.p, q);
    for (auto& v : recv) v = v == q ? b : v - q;
  }
  void unlink(int e) {
    const int n = next[static_cast<std::size_t>(e)], pr = prev[static_cast<std::size_t>(e)];
    if (pr <= s.q) next[static_cast<std::size_t>(pr)] = n;
    if (n >= 0) prev[static_cast<std::size_t>(n)] = pr;
  }
  void allblocks(std::int64_t at, std::int64_t bound, int e) {
    while (e != -1 && found < s.q) {  // found < q: nothing is left to find (guards recv)
      const std::int64_t c = at + s[e];
      if (c <= target - s[found] && c < bound) {
        if (c <= target - s[found + 1]) allblocks(c, bound, e);
        if (found == s.q || at > target - s[found + 1]) return;
        bound = c;
        recv[static_cast<std::size_t>(found++)] = e;
        unlink(e);
      }
      e = next[static_cast<std::size_t>(e)];
    }
  }
};

nlohmann::json load_tables() {
  std::ifstream in(std::string(RANKLAB_TEST_DATA) + "/circulant_schedule_tables.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// Ranks worth looking at for a large p: the ends, around the skips, and random ones.
std::vector<std::int64_t> sample_ranks(const skips& s, int random_count, std::uint64_t seed) {
  std::vector<std::int64_t> ranks = {0, 1, 2, s.p - 1, s.p - 2, s.p / 2, s.p / 2 + 1};
  for (int k = 0; k <= s.q; ++k)
    for (std::int64_t d : {-1, 0, 1}) ranks.push_back(s[k] + d);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < random_count; ++i)
    ranks.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.p)));
  std::erase_if(ranks, [&](std::int64_t r) { return r < 0 || r >= s.p; });
  return ranks;
}

const std::vector<std::int64_t> large_ps = {
    (1 << 20) - 1,   1 << 20,    (1 << 20) + 1, 3 << 19, 1'000'003, (1 << 24) + 1, (std::int64_t{1} << 30) + 1,
    circ::max_p - 1, circ::max_p};

}  // namespace

TEST_CASE("skips: repeated halving with rounding up") {
  const skips s17(17);
  CHECK(s17.q == 5);
  CHECK(std::vector<std::int64_t>(s17.skip.begin(), s17.skip.begin() + 6) ==
        std::vector<std::int64_t>{1, 2, 3, 5, 9, 17});
  CHECK(skips(1).q == 0);
  CHECK(skips(1)[0] == 1);
  CHECK(skips(2).q == 1);
  CHECK(skips(1024).q == 10);
  CHECK(skips(1025).q == 11);
  const skips big(circ::max_p);
  CHECK(big.q == 31);
  CHECK(big[31] == circ::max_p);
  CHECK(big[0] == 1);
  for (std::int64_t p = 1; p <= 5000; ++p) {
    const skips s(p);
    REQUIRE((std::int64_t{1} << s.q) >= p);
    REQUIRE((s.q == 0 || (std::int64_t{1} << (s.q - 1)) < p));
    REQUIRE(s[0] == 1);
    for (int k = 0; k < s.q; ++k) REQUIRE(s[k] == (s[k + 1] + 1) / 2);
  }
  CHECK_THROWS_AS(skips(0), std::invalid_argument);
  CHECK_THROWS_AS(skips(-5), std::invalid_argument);
  CHECK_THROWS_AS(skips(circ::max_p + 1), std::invalid_argument);
  CHECK(skips(17).to(16, 0) == 0);
  CHECK(skips(17).from(0, 4) == 8);
}

TEST_CASE("baseblock: p = 17 example and the root") {
  const skips s(17);
  const std::vector<int> expected = {5, 0, 1, 2, 0, 3, 0, 1, 2, 4, 0, 1, 2, 0, 3, 0, 1};
  for (std::int64_t r = 0; r < 17; ++r) CHECK(circ::baseblock(s, r) == expected[static_cast<std::size_t>(r)]);
  CHECK(circ::baseblock(skips(1), 0) == 0);
  CHECK(circ::baseblock(skips(circ::max_p), 0) == 31);
}

TEST_CASE("the paper's Tables 1-3 entry for entry") {
  const auto data = load_tables();
  REQUIRE(data["tables"].size() == 3);
  for (const auto& t : data["tables"]) {
    const skips s(t["p"].get<std::int64_t>());
    CAPTURE(s.p);
    REQUIRE(s.q == t["q"].get<int>());
    for (int k = 0; k <= s.q; ++k) CHECK(s[k] == t["skips"][static_cast<std::size_t>(k)].get<std::int64_t>());
    for (std::int64_t r = 0; r < s.p; ++r) {
      CAPTURE(r);
      const auto ur = static_cast<std::size_t>(r);
      CHECK(circ::baseblock(s, r) == t["baseblock"][ur].get<int>());
      const auto recv = recv_of(s, r), send = send_of(s, r);
      std::vector<int> both_recv(static_cast<std::size_t>(s.q)), both_send(static_cast<std::size_t>(s.q));
      CHECK(circ::schedules(s, r, both_recv, both_send) == circ::baseblock(s, r));
      CHECK(both_recv == recv);
      CHECK(both_send == send);
      for (int k = 0; k < s.q; ++k) {
        CAPTURE(k);
        const auto uk = static_cast<std::size_t>(k);
        CHECK(recv[uk] == t["recv"][uk][ur].get<int>());
        CHECK(send[uk] == t["send"][uk][ur].get<int>());
      }
    }
  }
}

TEST_CASE("receive schedule equals the literal transcription of Algorithms 4 and 5") {
  for (std::int64_t p = 1; p <= 1200; ++p) {
    const skips s(p);
    for (std::int64_t r = 0; r < p; ++r) {
      const paper_recv_schedule paper(s, r);
      if (paper.recv != recv_of(s, r)) FAIL("p=" << p << " r=" << r);
    }
  }
  for (std::int64_t p : large_ps) {
    const skips s(p);
    for (std::int64_t r : sample_ranks(s, 300, static_cast<std::uint64_t>(p))) {
      const paper_recv_schedule paper(s, r);
      if (paper.recv != recv_of(s, r)) FAIL("p=" << p << " r=" << r);
    }
  }
}

TEST_CASE("the four correctness conditions hold for every p in 1..2100") {
  circ::schedule_table table;
  std::vector<int> scratch;
  for (std::int64_t p = 1; p <= 2100; ++p) {
    const skips s(p);
    circ::compute_schedule_table(s, table);
    const auto result = circ::check_conditions(s, table);
    if (!result) FAIL(result.failure);
    // Algorithm 1 with no virtual rounds (n = q + 1) and with q - 1 of them (n = q + 2)
    const std::vector<int> counts = {s.q + 1, s.q + 2};
    const auto bcast = circ::check_broadcast(s, table, counts, scratch);
    if (!bcast) FAIL(bcast.failure);
    CHECK(bcast.rounds == (p == 1 ? 0 : 2 * s.q + 1));
  }
}

TEST_CASE("violations: at most 4, and 4 first reached at p = 2049") {
  circ::schedule_table table;
  int max_before = 0;
  for (std::int64_t p = 1; p <= 2100; ++p) {
    const skips s(p);
    circ::compute_schedule_table(s, table);
    REQUIRE(table.max_stats.violations <= circ::max_violations);
    if (p < 2049) max_before = std::max(max_before, table.max_stats.violations);
    if (p == 2049) {
      CHECK(table.max_stats.violations == 4);
      // the rank reported for the maximum really has 4 violations
      circ::schedule_stats st;
      send_of(s, table.max_violations_rank, &st);
      CHECK(st.violations == 4);
    }
  }
  CHECK(max_before == 3);
  // the paper's Table 1 (p = 17) has violations
  circ::schedule_stats st;
  int total = 0;
  for (std::int64_t r = 0; r < 17; ++r) {
    send_of(skips(17), r, &st);
    total += st.violations;
  }
  CHECK(total > 0);
}

TEST_CASE("recursion and search bounds for every p in 1..2100 and sampled large p") {
  auto check_rank = [](const skips& s, std::int64_t r) {
    circ::schedule_stats st;
    recv_of(s, r, &st);
    if (st.recursion_depth > circ::recursion_depth_bound(s.q) ||
        st.recursive_calls > circ::recursive_calls_bound(s.q) || st.search_steps > circ::search_steps_bound(s.q))
      FAIL("p=" << s.p << " r=" << r << ": depth " << st.recursion_depth << " calls " << st.recursive_calls << " steps "
                << st.search_steps);
    return st;
  };
  int deepest_at_1536 = 0;
  for (std::int64_t p = 1; p <= 2100; ++p) {
    const skips s(p);
    for (std::int64_t r = 0; r < p; ++r) {
      const auto st = check_rank(s, r);
      if (p == 1536) deepest_at_1536 = std::max(deepest_at_1536, st.recursion_depth);
    }
  }
  CHECK(deepest_at_1536 == 10);  // the depth bound q - 1 is reached (q = 11)
  for (std::int64_t p : large_ps) {
    const skips s(p);
    for (std::int64_t r : sample_ranks(s, 2000, static_cast<std::uint64_t>(p) + 1)) check_rank(s, r);
  }
}

TEST_CASE("send schedule equals the O(log^2 p) reference") {
  for (std::int64_t p = 1; p <= 1500; ++p) {
    const skips s(p);
    for (std::int64_t r = 0; r < p; ++r)
      if (send_of(s, r) != send_reference_of(s, r)) FAIL("p=" << p << " r=" << r);
  }
  for (std::int64_t p : large_ps) {
    const skips s(p);
    for (std::int64_t r : sample_ranks(s, 300, static_cast<std::uint64_t>(p) + 2))
      if (send_of(s, r) != send_reference_of(s, r)) FAIL("p=" << p << " r=" << r);
  }
}

TEST_CASE("conditions 2-4 and violations for sampled ranks of large p (schedules only)") {
  for (std::int64_t p : large_ps) {
    const skips s(p);
    const int q = s.q;
    for (std::int64_t r : sample_ranks(s, 300, static_cast<std::uint64_t>(p) + 3)) {
      CAPTURE(p);
      CAPTURE(r);
      circ::schedule_stats st;
      const auto recv = recv_of(s, r), send = send_of(s, r, &st);
      const int b = circ::baseblock(s, r);
      REQUIRE(st.violations <= circ::max_violations);
      // Condition 3
      std::vector<int> expected;
      for (int v = -q; v < 0; ++v)
        if (r == 0 || v != b - q) expected.push_back(v);
      if (r != 0) expected.push_back(b);
      auto sorted = recv;
      std::sort(sorted.begin(), sorted.end());
      std::sort(expected.begin(), expected.end());
      REQUIRE(sorted == expected);
      for (int k = 0; k < q; ++k) {
        const auto uk = static_cast<std::size_t>(k);
        // Condition 2 (and so 1, seen from the to-rank)
        REQUIRE(send[uk] == recv_of(s, s.to(r, k))[uk]);
        // Condition 4
        if (r == 0) {
          REQUIRE(send[uk] == k);
        } else {
          const bool held =
              send[uk] == b - q || std::find(recv.begin(), recv.begin() + k, send[uk]) != recv.begin() + k;
          REQUIRE(held);
        }
      }
    }
  }
}

TEST_CASE("Algorithm 1 per rank: every block exactly once, in n - 1 + q rounds") {
  circ::schedule_table table;
  std::vector<int> scratch;
  for (std::int64_t p = 1; p <= 400; ++p) {
    const skips s(p);
    circ::compute_schedule_table(s, table);
    for (int n : {1, 2, 3, s.q, s.q + 1, 10, 2 * s.q + 3}) {
      if (n < 1) continue;
      const auto result = circ::check_broadcast(s, table, n, scratch);
      if (!result) FAIL(result.failure);
      CHECK(result.rounds == (p == 1 ? 0 : n - 1 + s.q));
    }
  }
}

TEST_CASE("Algorithm 1 with all ranks in lock step, moving blocks") {
  // Independent of check_broadcast: every round, every rank posts what its plan sends;
  // the receiver must expect exactly that block from exactly that rank.
  for (std::int64_t p = 1; p <= 40; ++p) {
    const skips s(p);
    const auto up = static_cast<std::size_t>(p);
    std::vector<std::vector<int>> recv(up), send(up);
    for (std::int64_t r = 0; r < p; ++r) {
      recv[static_cast<std::size_t>(r)] = recv_of(s, r);
      send[static_cast<std::size_t>(r)] = send_of(s, r);
    }
    for (int n = 1; n <= 2 * s.q + 4; ++n) {
      CAPTURE(p);
      CAPTURE(n);
      std::vector<std::vector<circ::round_plan>> plans(up);
      for (std::int64_t r = 0; r < p; ++r) {
        const auto ur = static_cast<std::size_t>(r);
        circ::for_each_round(s, n, recv[ur], send[ur], r, [&](const circ::round_plan& pl) { plans[ur].push_back(pl); });
        REQUIRE(static_cast<int>(plans[ur].size()) == circ::broadcast_rounds(s, n));
        for (const auto& pl : plans[ur]) {  // random access gives the same plans
          const auto direct = circ::plan_round(s, n, recv[ur], send[ur], r, pl.round);
          REQUIRE(direct.k == pl.k);
          REQUIRE(direct.offset == pl.offset);
          REQUIRE(direct.to == pl.to);
          REQUIRE(direct.from == pl.from);
          REQUIRE(direct.send_block == pl.send_block);
          REQUIRE(direct.recv_block == pl.recv_block);
        }
      }
      // has[r][b]: rank r holds block b; the root holds everything from the start
      std::vector<std::vector<char>> has(up, std::vector<char>(static_cast<std::size_t>(n), 0));
      std::fill(has[0].begin(), has[0].end(), 1);
      for (int i = 0; i < circ::broadcast_rounds(s, n); ++i) {
        const auto ui = static_cast<std::size_t>(i);
        std::vector<int> arriving(up, -1);  // block delivered to each rank this round
        for (std::int64_t r = 0; r < p; ++r) {
          const auto& pl = plans[static_cast<std::size_t>(r)][ui];
          REQUIRE(pl.round == i);
          if (pl.send_block < 0) continue;
          REQUIRE(pl.to != 0);
          REQUIRE(has[static_cast<std::size_t>(r)][static_cast<std::size_t>(pl.send_block)]);
          arriving[static_cast<std::size_t>(pl.to)] = pl.send_block;
        }
        for (std::int64_t r = 0; r < p; ++r) {
          const auto ur = static_cast<std::size_t>(r);
          const auto& pl = plans[ur][ui];
          REQUIRE(pl.recv_block == arriving[ur]);  // expected exactly what arrives, or nothing
          if (pl.recv_block >= 0) {
            REQUIRE(plans[static_cast<std::size_t>(pl.from)][ui].to == r);
            REQUIRE_FALSE(has[ur][static_cast<std::size_t>(pl.recv_block)]);  // never twice
            has[ur][static_cast<std::size_t>(pl.recv_block)] = 1;
          }
        }
      }
      for (std::int64_t r = 0; r < p; ++r)
        for (int b = 0; b < n; ++b) REQUIRE(has[static_cast<std::size_t>(r)][static_cast<std::size_t>(b)]);
    }
  }
}

TEST_CASE("for_each_round: the degenerate cases") {
  int calls = 0;
  const std::vector<int> none;
  circ::for_each_round(skips(1), 5, none, none, 0, [&](const circ::round_plan&) { ++calls; });
  CHECK(calls == 0);
  CHECK(circ::broadcast_rounds(skips(1), 5) == 0);
  CHECK(circ::broadcast_rounds(skips(17), 0) == 0);
  CHECK(circ::broadcast_rounds(skips(17), 1) == 5);
  // n = 1 on p = 2^q is the binomial tree: the root sends block 0 in every round
  const skips s(16);
  const auto recv = recv_of(s, 0), send = send_of(s, 0);
  std::vector<int> sent;
  circ::for_each_round(s, 1, recv, send, 0, [&](const circ::round_plan& pl) {
    CHECK(pl.recv_block == -1);
    sent.push_back(pl.send_block);
  });
  CHECK(sent == std::vector<int>{0, 0, 0, 0});
  CHECK(circ::capped_block(-1, 0, 4) == -1);
  CHECK(circ::capped_block(7, 0, 4) == 3);
  CHECK(circ::capped_block(-3, 5, 4) == 2);
}

TEST_CASE("the checks catch broken schedules") {
  const skips s(33);
  circ::schedule_table table;
  std::vector<int> scratch;
  circ::compute_schedule_table(s, table);
  REQUIRE(circ::check_conditions(s, table));
  REQUIRE(circ::check_broadcast(s, table, 7, scratch));
  auto broken = table;
  broken.send[broken.index(5, 2)] = static_cast<std::int8_t>(broken.send_at(5, 2) == -1 ? -2 : -1);
  const auto c = circ::check_conditions(s, broken);
  CHECK_FALSE(c.ok);
  CHECK(c.failure.find("p=33") != std::string::npos);
  CHECK_FALSE(circ::check_broadcast(s, broken, s.q + 1, scratch).ok);
  broken = table;
  std::swap(broken.recv[broken.index(20, 0)], broken.recv[broken.index(20, 3)]);
  CHECK_FALSE(circ::check_conditions(s, broken).ok);
  CHECK_FALSE(circ::check_broadcast(s, broken, 2 * s.q, scratch).ok);
}

TEST_CASE("the broadcast simulation catches consistent but wrong schedules") {
  // Sender and receiver tampered together, so that only Algorithm 1 itself can notice.
  const skips s(33);
  const int q = s.q;
  circ::schedule_table table;
  std::vector<int> scratch;
  circ::compute_schedule_table(s, table);
  auto set_round = [](circ::schedule_table& t, const skips& sk, std::int64_t r, int k, int v) {
    t.recv[t.index(r, k)] = static_cast<std::int8_t>(v);
    t.send[t.index(sk.from(r, k), k)] = static_cast<std::int8_t>(v);
  };
  SUBCASE("a block received twice") {
    auto broken = table;
    set_round(broken, s, 7, 1, table.recv_at(7, 0));
    const auto c = circ::check_broadcast(s, broken, 2 * q, scratch);
    CHECK_FALSE(c.ok);
    CHECK(c.failure.find("p=33 rank 7") != std::string::npos);
    INFO(c.failure);
    // the first thing to go wrong: the duplicate, or a send of the block now never received
    CHECK((c.failure.find("again") != std::string::npos || c.failure.find("before receiving") != std::string::npos));
  }
  SUBCASE("some duplicate is reported as such") {
    bool reported = false;
    for (std::int64_t r = 1; r < s.p && !reported; ++r)
      for (int k = 1; k < q && !reported; ++k) {
        auto broken = table;
        set_round(broken, s, r, k, table.recv_at(r, k - 1));
        const auto c = circ::check_broadcast(s, broken, 2 * q, scratch);
        REQUIRE_FALSE(c.ok);
        reported = c.failure.find("again") != std::string::npos;
      }
    CHECK(reported);
  }
  SUBCASE("a block sent before it arrived") {
    auto broken = table;
    const int late = table.recv_at(7, q - 1);  // arrives in the last round of each phase
    broken.send[broken.index(7, 0)] = static_cast<std::int8_t>(late);
    broken.recv[broken.index(s.to(7, 0), 0)] = static_cast<std::int8_t>(late);
    const auto c = circ::check_broadcast(s, broken, 3 * q, scratch);
    CHECK_FALSE(c.ok);
    CHECK(c.failure.find("p=33 rank 7") != std::string::npos);
    CHECK(c.failure.find("before receiving") != std::string::npos);
    CHECK_FALSE(circ::check_conditions(s, broken).ok);  // condition 4
  }
  SUBCASE("a block never received") {
    // n = 1: a rank that sends nothing real in the one phase loses its baseblock's round
    std::int64_t leaf = -1;
    for (std::int64_t r = 1; r < s.p && leaf < 0; ++r) {
      bool sends = false;
      for (int k = 0; k < q; ++k) sends |= table.send_at(r, k) >= 0 && s.to(r, k) != 0;
      if (!sends) leaf = r;
    }
    REQUIRE(leaf > 0);
    int k_base = 0;
    while (table.recv_at(leaf, k_base) < 0) ++k_base;
    auto broken = table;
    set_round(broken, s, leaf, k_base, -1);
    const auto c = circ::check_broadcast(s, broken, 1, scratch);
    CHECK_FALSE(c.ok);
    INFO(c.failure);
    CHECK(c.failure.find("never receives block 0") != std::string::npos);
  }
  SUBCASE("entries out of range") {
    auto broken = table;
    set_round(broken, s, 7, 0, -64);
    const auto c = circ::check_broadcast(s, broken, 2 * q, scratch);
    CHECK_FALSE(c.ok);
    CHECK(c.failure.find("out of range") != std::string::npos);
    CHECK_FALSE(circ::check_conditions(s, broken).ok);
  }
}

TEST_CASE("spans that are too short are rejected") {
  const skips s(100);
  std::array<int, 3> small{};
  CHECK_THROWS_AS(circ::recv_schedule(s, 1, small), std::invalid_argument);
  CHECK_THROWS_AS(circ::send_schedule(s, 1, small), std::invalid_argument);
  CHECK_THROWS_AS(circ::send_schedule_reference(s, 1, small), std::invalid_argument);
}
