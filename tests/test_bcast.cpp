// Broadcast algorithms (issue 4): every registered bcast algorithm against the sequential
// reference for p = 1..33 (sequential executor), a thread-executor subset, and p = 100, 127,
// 128, 129; several roots, counts 0, 1, p-1, not divisible by p, 1000; int32 and float64.
// Then the round counts and message volumes the sources state, each derived here
// independently of the builders: linear p-1, k-nomial (an oracle built from the parent
// function), chain p-2+S, scatter_allgather 2 ceil(log2 p), scatter_ring ceil(log2 p)+p-1
// with p(p-1) ring transfers, scatter_ring_tuned with p(p-1) - sum popcount(v) ring transfers
// (the scatter tree's ownership), mesh2d ceil(log2 c) + ceil(log2 rows).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "collective_checks.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

const std::vector<std::string> bcast_algorithms = {"binomial",     "linear",       "knomial",
                                                   "chain",        "scatter_allgather", "scatter_ring",
                                                   "scatter_ring_tuned", "mesh2d"};

std::vector<int> roots_for(int p) {
  std::vector<int> r = {0, p - 1, p / 2};
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

std::vector<std::uint64_t> counts_for(int p) {
  const auto P = static_cast<std::uint64_t>(p);
  std::vector<std::uint64_t> c = {0, 1, P - 1, 3 * P + 1, 1000};
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

int ceil_log2(std::int64_t p) {
  int l = 0;
  while ((std::int64_t{1} << l) < p) ++l;
  return l;
}

// All ranks' schedules of a call, verified, with per-element receive counts.
verify_report report_of(const call& c) {
  const algorithm* a = registry::find(c.args.coll, c.choice.name);
  REQUIRE(a != nullptr);
  coll_args args = c.args;
  const schedule_set plans = build_all(*a, args);
  verify_report r = verify(plans, /*count_receives=*/true);
  CHECK_MESSAGE(r.ok, (r.problems.empty() ? "" : r.problems.front()));
  return r;
}

// Every non-root element is written by exactly `times` receives.
void expect_received_once(const call& c, const verify_report& r) {
  for (int rank = 0; rank < c.args.p; ++rank) {
    if (rank == c.args.root) continue;
    const auto& per = r.receives_per_element[static_cast<std::size_t>(rank)];
    const bool once = std::all_of(per.begin(), per.end(), [](std::uint32_t n) { return n == 1; });
    CHECK_MESSAGE(once, "rank " << rank << " does not receive every element exactly once");
  }
}

// The top-down binomial scatter tree, simulated the way seed 003 describes it: the root owns
// everything; a rank owning [v, v + n) hands the upper part [v + h, v + n) to v + h, where h
// is the largest power of two < n, and keeps [v, v + h). Returns each rank's subtree size.
std::vector<int> scatter_ownership(int p) {
  std::vector<int> owned(static_cast<std::size_t>(p), 0);
  struct node {
    int v, n;
  };
  std::vector<node> todo = {{0, p}};
  while (!todo.empty()) {
    node x = todo.back();
    todo.pop_back();
    owned[static_cast<std::size_t>(x.v)] = x.n;
    // children: v + h for h = highest power of two below the current n, then the rest
    int n = x.n;
    while (n > 1) {
      int h = 1;
      while (h * 2 < n) h *= 2;
      todo.push_back({x.v + h, n - h});
      n = h;
    }
  }
  return owned;
}

}  // namespace

TEST_CASE("bcast: every algorithm matches the reference, p = 1..33, sequential executor") {
  for (const auto& algo : bcast_algorithms)
    for (int p = 1; p <= 33; ++p)
      for (int root : roots_for(p))
        for (std::uint64_t count : counts_for(p)) {
          expect_verified(make_call(collective::bcast, algo, p, count, root), executor_kind::sequential);
          expect_verified(make_call(collective::bcast, algo, p, count, root, datatype_of<double>()),
                          executor_kind::sequential);
        }
}

TEST_CASE("bcast: thread executor") {
  for (const auto& algo : bcast_algorithms)
    for (int p : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17})
      for (int root : roots_for(p)) {
        for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t(3 * p + 1), std::uint64_t{1000}})
          expect_verified(make_call(collective::bcast, algo, p, count, root), executor_kind::threads);
        expect_verified(make_call(collective::bcast, algo, p, 1000, root, datatype_of<double>()), executor_kind::threads);
      }
}

TEST_CASE("bcast: large p, sequential executor") {
  for (const auto& algo : bcast_algorithms)
    for (int p : {100, 127, 128, 129})
      for (int root : roots_for(p))
        for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t(p - 1), std::uint64_t(3 * p + 1), std::uint64_t{1000}})
          expect_verified(make_call(collective::bcast, algo, p, count, root), executor_kind::sequential);
  for (const auto& algo : bcast_algorithms)
    expect_verified(make_call(collective::bcast, algo, 129, 1000, 64, datatype_of<double>()), executor_kind::sequential);
}

TEST_CASE("bcast knomial: radices, round counts against an independent oracle") {
  for (int k : {2, 3, 4, 5, 8, 40}) {
    for (int p = 1; p <= 70; ++p) {
      // Oracle: parent(w) = w minus its lowest nonzero base-k digit; a parent serves its
      // children one per round from the round after it receives, farthest level first.
      std::vector<std::int64_t> recv_round(static_cast<std::size_t>(p), -1);
      std::vector<std::vector<std::pair<std::pair<int, int>, int>>> kids(static_cast<std::size_t>(p));
      for (int w = 1; w < p; ++w) {
        int level = 0;
        std::int64_t unit = 1;
        while ((w / unit) % k == 0) unit *= k, ++level;
        const int digit = static_cast<int>((w / unit) % k);
        kids[static_cast<std::size_t>(w - digit * unit)].push_back({{-level, digit}, w});
      }
      std::int64_t rounds = 0;
      for (int u = 0; u < p; ++u) {  // parents are smaller than children
        auto& list = kids[static_cast<std::size_t>(u)];
        std::sort(list.begin(), list.end());
        for (std::size_t i = 0; i < list.size(); ++i) {
          recv_round[static_cast<std::size_t>(list[i].second)] = recv_round[static_cast<std::size_t>(u)] + 1 +
                                                                  static_cast<std::int64_t>(i);
          rounds = std::max(rounds, recv_round[static_cast<std::size_t>(list[i].second)] + 1);
        }
      }
      int levels = 0;
      for (std::int64_t pw = 1; pw < p; pw *= k) ++levels;
      for (int root : roots_for(p)) {
        call c = make_call(collective::bcast, "knomial", p, 10, root);
        c.args.params.radix = k;
        INFO("k=" << k << " p=" << p << " root=" << root);
        const verify_report r = report_of(c);
        CHECK(static_cast<std::int64_t>(r.rounds) == rounds);
        CHECK(static_cast<std::int64_t>(r.rounds) <= static_cast<std::int64_t>(levels) * (k - 1));
        if (k == 2) CHECK(static_cast<int>(r.rounds) == ceil_log2(p));
        if (k >= p) CHECK(static_cast<int>(r.rounds) == p - 1);
        CHECK(r.messages == static_cast<std::uint64_t>(p - 1));
        expect_received_once(c, r);
        if (p <= 33) {
          expect_verified(c, executor_kind::sequential);
          c.args.count = 3 * static_cast<std::uint64_t>(p) + 1;
          expect_verified(c, executor_kind::sequential);
        }
      }
    }
    // p = k^L: exactly L(k-1) rounds
    std::int64_t pw = 1;
    for (int L = 0; L <= 3 && pw <= 4096; ++L, pw *= k) {
      call c = make_call(collective::bcast, "knomial", static_cast<int>(pw), 4);
      c.args.params.radix = k;
      CHECK(static_cast<std::int64_t>(report_of(c).rounds) == L * (k - 1));
    }
  }
  // the default radix is 4
  CHECK(report_of(make_call(collective::bcast, "knomial", 64, 4)).rounds == 9);
  call bad = make_call(collective::bcast, "knomial", 8, 4);
  bad.args.params.radix = 1;
  CHECK_THROWS_AS(run_check(bad, executor_kind::sequential), usage_error);
}

TEST_CASE("bcast chain: p - 2 + S rounds, explicit and default segments") {
  for (int p = 1; p <= 40; ++p)
    for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{97}, std::uint64_t{1000}})
      for (std::uint64_t seg : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{64},
                                std::uint64_t{5000}}) {
        for (int root : roots_for(p)) {
          call c = make_call(collective::bcast, "chain", p, count, root);
          c.args.params.segment = seg;
          INFO("p=" << p << " count=" << count << " segment=" << seg);
          const verify_report r = report_of(c);
          if (p == 1) {
            CHECK(r.rounds == 0);
            continue;
          }
          CHECK(r.messages % static_cast<std::uint64_t>(p - 1) == 0);
          const std::uint64_t segments = r.messages / static_cast<std::uint64_t>(p - 1);
          if (seg > 0) {
            const std::uint64_t want = count == 0 ? 1 : (count + std::min(seg, count) - 1) / std::min(seg, count);
            CHECK(segments == want);
          }
          CHECK(segments >= 1);
          CHECK(segments <= std::max<std::uint64_t>(count, 1));
          CHECK(r.rounds == static_cast<std::size_t>(p - 2) + segments);
          CHECK(r.elements == static_cast<std::uint64_t>(p - 1) * count);
          expect_received_once(c, r);
          if (p <= 17 && root == p - 1) expect_verified(c, executor_kind::sequential);
        }
      }
  for (int p : {3, 8, 17}) {  // pipelining on threads
    call c = make_call(collective::bcast, "chain", p, 1000, p / 2);
    c.args.params.segment = 37;
    expect_verified(c, executor_kind::threads);
  }
}

TEST_CASE("bcast: round counts and volumes of linear, scatter_allgather, scatter_ring(_tuned), mesh2d") {
  for (int p = 1; p <= 70; ++p) {
    const auto P = static_cast<std::uint64_t>(p);
    const std::vector<int> owned = scatter_ownership(p);
    std::uint64_t scatter_chunks = 0;  // chunks moved by the binomial scatter
    std::uint64_t lacking = 0;         // sum over ranks of chunks outside their subtree
    std::uint64_t popcounts = 0;
    for (int v = 0; v < p; ++v) {
      if (v != 0) scatter_chunks += static_cast<std::uint64_t>(owned[static_cast<std::size_t>(v)]);
      lacking += P - static_cast<std::uint64_t>(owned[static_cast<std::size_t>(v)]);
      popcounts += static_cast<std::uint64_t>(std::popcount(static_cast<unsigned>(v)));
    }
    CHECK(lacking == P * (P - 1) - popcounts);  // the closed form in bcast_scatter_ring_tuned.cpp
    const int lg = ceil_log2(p);
    const std::uint64_t chunk = 5;
    for (int root : roots_for(p)) {
      INFO("p=" << p << " root=" << root);
      const std::uint64_t count = chunk * P;  // every chunk non-empty, all of the same size
      {
        const call c = make_call(collective::bcast, "linear", p, count, root);
        const verify_report r = report_of(c);
        CHECK(r.rounds == P - 1);
        CHECK(r.messages == P - 1);
        expect_received_once(c, r);
      }
      {
        const call c = make_call(collective::bcast, "scatter_allgather", p, count, root);
        const verify_report r = report_of(c);
        CHECK(static_cast<int>(r.rounds) == 2 * lg);
        // scatter: each non-root gets its subtree; allgather: each rank gets the p-1 others
        CHECK(r.elements == (scatter_chunks + P * (P - 1)) * chunk);
      }
      const call native = make_call(collective::bcast, "scatter_ring", p, count, root);
      const call tuned = make_call(collective::bcast, "scatter_ring_tuned", p, count, root);
      const verify_report rn = report_of(native), rt = report_of(tuned);
      const std::uint64_t steps = p == 1 ? 0 : static_cast<std::uint64_t>(lg) + P - 1;
      CHECK(rn.rounds == steps);
      CHECK(rt.rounds == steps);  // the tuned ring takes the same steps
      // messages = scatter (p - 1, one per non-root) + ring chunk transfers
      CHECK(rn.messages == (P - 1) + P * (P - 1));
      CHECK(rt.messages == (P - 1) + lacking);
      CHECK(rn.elements == (scatter_chunks + P * (P - 1)) * chunk);
      CHECK(rt.elements == (scatter_chunks + lacking) * chunk);
      // The tuned broadcast writes every element of a non-root exactly once; the native
      // one writes a rank's descendants' chunks twice (scatter and ring).
      expect_received_once(tuned, rt);
      if (p >= 2) {
        const int v = 2 % p;  // relative rank 2 (or 0)
        const int rank = (v + root) % p;
        const auto& per = rn.receives_per_element[static_cast<std::size_t>(rank)];
        std::uint64_t twice = 0;
        for (auto n : per) twice += n == 2;
        if (rank != root) CHECK(twice == (static_cast<std::uint64_t>(owned[static_cast<std::size_t>(v)]) - 1) * chunk);
      }
      {
        const call c = make_call(collective::bcast, "mesh2d", p, count, root);
        const verify_report r = report_of(c);
        const int rr = static_cast<int>(std::floor(std::sqrt(static_cast<double>(p))));
        const int cols = (p + rr - 1) / rr, rows = (p + cols - 1) / cols;
        CHECK(static_cast<int>(r.rounds) == ceil_log2(std::min(cols, p)) + ceil_log2(rows));
        CHECK(r.messages == P - 1);
        expect_received_once(c, r);
      }
    }
  }
  // seed 003's figures: p = 8 -> 44 ring transfers instead of 56, p = 10 -> 75 instead of 90
  CHECK(report_of(make_call(collective::bcast, "scatter_ring_tuned", 8, 80)).messages == 7 + 44);
  CHECK(report_of(make_call(collective::bcast, "scatter_ring_tuned", 10, 100)).messages == 9 + 75);
  for (int p : {4, 16, 64, 256}) {  // powers of four: the mesh is square, log2 p rounds
    CHECK(static_cast<int>(report_of(make_call(collective::bcast, "mesh2d", p, 3)).rounds) == ceil_log2(p));
  }
  for (int p : {100, 127, 128, 129}) {  // the volume claims at the paper's larger sizes
    const auto P = static_cast<std::uint64_t>(p);
    std::uint64_t popcounts = 0;
    for (int v = 0; v < p; ++v) popcounts += static_cast<std::uint64_t>(std::popcount(static_cast<unsigned>(v)));
    const verify_report rt = report_of(make_call(collective::bcast, "scatter_ring_tuned", p, P, p / 3));
    const verify_report rn = report_of(make_call(collective::bcast, "scatter_ring", p, P, p / 3));
    CHECK(rt.messages == (P - 1) + P * (P - 1) - popcounts);
    CHECK(rn.messages == (P - 1) + P * (P - 1));
    CHECK(rt.rounds == rn.rounds);
  }
}

TEST_CASE("bcast: the registry entries") {
  for (const auto& n : bcast_algorithms) {
    const algorithm* a = registry::find(collective::bcast, n);
    REQUIRE_MESSAGE(a != nullptr, n);
    CHECK_FALSE(a->needs_commutative);
    CHECK_FALSE(a->needs_power_of_two);
    CHECK(static_cast<bool>(a->cost));
    const bool composed = n.rfind("scatter_", 0) == 0;
    CHECK_MESSAGE(a->composition.empty() != composed, n);
  }
}
