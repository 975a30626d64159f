// Broadcast: the claims of the registered algorithms -- the round counts and message volumes
// the sources state, each derived here independently of the builders: linear p-1, k-nomial
// (an oracle built from the parent function), chain p-2+S, scatter_allgather 2 ceil(log2 p),
// scatter_ring ceil(log2 p)+p-1 with p(p-1) ring transfers, scatter_ring_tuned with
// p(p-1) - sum popcount(v) ring transfers (the scatter tree's ownership), mesh2d
// ceil(log2 c) + ceil(log2 rows); algorithm parameters; the registry entries. Results against
// the reference: test_conformance.cpp. See docs/algorithms.md, "bcast".
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

call bcast_call(std::string_view algo, int p, std::uint64_t count, int root = 0, algo_params params = {}) {
  return make_call(collective::bcast, p, count, root, i32, ops::sum, {algo, params});
}

// The top-down binomial scatter tree, simulated the way H. Zhou et al. describe it ("A
// Bandwidth-saving Optimization for MPI Broadcast Collective Operation"): the root owns
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
          recv_round[static_cast<std::size_t>(list[i].second)] =
              recv_round[static_cast<std::size_t>(u)] + 1 + static_cast<std::int64_t>(i);
          rounds = std::max(rounds, recv_round[static_cast<std::size_t>(list[i].second)] + 1);
        }
      }
      int levels = 0;
      for (std::int64_t pw = 1; pw < p; pw *= k) ++levels;
      for (int root : roots_for(p)) {
        call c = bcast_call("knomial", p, 10, root);
        c.args.params.radix = k;
        INFO("k=" << k << " p=" << p << " root=" << root);
        const verify_report r = report_of(c, true);
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
      call c = bcast_call("knomial", static_cast<int>(pw), 4);
      c.args.params.radix = k;
      CHECK(static_cast<std::int64_t>(report_of(c, true).rounds) == L * (k - 1));
    }
  }
  // the default radix is 4
  CHECK(report_of(bcast_call("knomial", 64, 4), true).rounds == 9);
  call bad = bcast_call("knomial", 8, 4);
  bad.args.params.radix = 1;
  CHECK_THROWS_AS(run_check(bad, executor_kind::sequential), usage_error);
}

TEST_CASE("bcast chain: p - 2 + S rounds, explicit and default segments") {
  for (int p = 1; p <= 40; ++p)
    for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{97}, std::uint64_t{1000}})
      for (std::uint64_t seg :
           {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{64}, std::uint64_t{5000}}) {
        for (int root : roots_for(p)) {
          call c = bcast_call("chain", p, count, root);
          c.args.params.segment = seg;
          INFO("p=" << p << " count=" << count << " segment=" << seg);
          const verify_report r = report_of(c, true);
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
    call c = bcast_call("chain", p, 1000, p / 2);
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
        const call c = bcast_call("linear", p, count, root);
        const verify_report r = report_of(c, true);
        CHECK(r.rounds == P - 1);
        CHECK(r.messages == P - 1);
        expect_received_once(c, r);
      }
      {
        const call c = bcast_call("scatter_allgather", p, count, root);
        const verify_report r = report_of(c, true);
        CHECK(static_cast<int>(r.rounds) == 2 * lg);
        // scatter: each non-root gets its subtree; allgather: each rank gets the p-1 others
        CHECK(r.elements == (scatter_chunks + P * (P - 1)) * chunk);
      }
      const call native = bcast_call("scatter_ring", p, count, root);
      const call tuned = bcast_call("scatter_ring_tuned", p, count, root);
      const verify_report rn = report_of(native, true), rt = report_of(tuned, true);
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
        const call c = bcast_call("mesh2d", p, count, root);
        const verify_report r = report_of(c, true);
        const int rr = static_cast<int>(std::floor(std::sqrt(static_cast<double>(p))));
        const int cols = (p + rr - 1) / rr, rows = (p + cols - 1) / cols;
        CHECK(static_cast<int>(r.rounds) == ceil_log2(std::min(cols, p)) + ceil_log2(rows));
        CHECK(r.messages == P - 1);
        expect_received_once(c, r);
      }
    }
  }
  // H. Zhou et al.'s figures: p = 8 -> 44 ring transfers instead of 56, p = 10 -> 75 instead of 90
  CHECK(report_of(bcast_call("scatter_ring_tuned", 8, 80), true).messages == 7 + 44);
  CHECK(report_of(bcast_call("scatter_ring_tuned", 10, 100), true).messages == 9 + 75);
  for (int p : {4, 16, 64, 256}) {  // powers of four: the mesh is square, log2 p rounds
    CHECK(static_cast<int>(report_of(bcast_call("mesh2d", p, 3), true).rounds) == ceil_log2(p));
  }
  for (int p : {100, 127, 128, 129}) {  // the volume claims at the paper's larger sizes
    const auto P = static_cast<std::uint64_t>(p);
    std::uint64_t popcounts = 0;
    for (int v = 0; v < p; ++v) popcounts += static_cast<std::uint64_t>(std::popcount(static_cast<unsigned>(v)));
    const verify_report rt = report_of(bcast_call("scatter_ring_tuned", p, P, p / 3), true);
    const verify_report rn = report_of(bcast_call("scatter_ring", p, P, p / 3), true);
    CHECK(rt.messages == (P - 1) + P * (P - 1) - popcounts);
    CHECK(rn.messages == (P - 1) + P * (P - 1));
    CHECK(rt.rounds == rn.rounds);
  }
}

TEST_CASE("bcast: the registry entries, the scatter + allgather and hierarchical broadcasts say so") {
  check_registry_entries(collective::bcast);
  for (const algorithm* a : registry::for_collective(collective::bcast)) {
    const bool composed = a->name.starts_with("scatter_") || a->hierarchical;
    CHECK_MESSAGE(a->composition.empty() != composed, a->name);
  }
}
