// Alltoall and alltoallv: the claims of the registered algorithms -- the round counts,
// message sizes, volumes and copy-freedom the sources and builders state, hypercube's
// precondition, the registry entries and the user API. Results against the reference:
// test_conformance.cpp. See docs/algorithms.md, "alltoall".
#include <bit>

#include "collective_checks.hpp"
#include "patterns/mesh.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

bool power_of_two(int p) { return (p & (p - 1)) == 0; }

call alltoall_call(std::string_view algo, int p, std::uint64_t n) {
  return make_call(collective::alltoall, p, n, 0, i32, ops::sum, {algo});
}

// The rounds the sources state; none for the direct algorithm (test_direct.cpp).
const round_claims alltoall_rounds = {
    {"linear", [](int p) -> std::size_t { return p - 1; }},
    {"pairwise", [](int p) -> std::size_t { return p - 1; }},
    {"ring", [](int p) -> std::size_t { return p - 1; }},
    {"bruck", [](int p) -> std::size_t { return ceil_log2(p); }},
    {"hypercube", [](int p) -> std::size_t { return ceil_log2(p); }},
    {"mesh2d", mesh2d_rounds},
};

// 1..70 and a few larger p (the verifier's cost grows with p^2 regions per round).
std::vector<int> round_ps() {
  std::vector<int> ps = ps_up_to(70);
  ps.insert(ps.end(), {100, 127, 128, 129});
  return ps;
}

}  // namespace

TEST_CASE("alltoall: round counts, message sizes and no local copies") {
  check_round_claims(collective::alltoall, alltoall_rounds, round_ps());
  // Blocks are sent from where they are and received where they go: the only local copy is
  // each rank's block to itself.
  for (const algorithm* a : registry::for_collective(collective::alltoall)) {
    if (!a->one_ported) continue;  // the direct algorithm copies every block itself
    for (int p : round_ps()) {
      const std::uint64_t n = 2;
      const call c = alltoall_call(a->name, p, n);
      if (!meets_preconditions(*a, c.args)) continue;
      INFO("algorithm=" << a->name << " p=" << p);
      CHECK(report_of(c).local_elements == static_cast<std::uint64_t>(p) * n);
    }
  }
}

TEST_CASE("alltoall: pairwise takes p-1 rounds, each moving exactly one block, XOR partners for p = 2^k") {
  for (int p = 1; p <= 64; ++p) {
    const std::uint64_t n = 5;
    const schedule_set set = plans_of(alltoall_call("pairwise", p, n));
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
    auto elements = [&](const char* algo) { return report_of(alltoall_call(algo, p, n)).elements; };
    INFO("p=" << p);
    const auto P = static_cast<std::uint64_t>(p);
    // Ring (the 5DV050 lecture): step k forwards p-k blocks: p * p(p-1)/2 in all.
    CHECK(elements("ring") == P * P * (P - 1) / 2);
    // Bruck and hypercube: a block travels once per set bit of its distance.
    std::uint64_t hops = 0;
    for (int t = 1; t < p; ++t) hops += static_cast<std::uint64_t>(std::popcount(static_cast<unsigned>(t)));
    CHECK(elements("bruck") == P * hops);
    if (power_of_two(p)) CHECK(elements("hypercube") == P * P / 2 * static_cast<std::uint64_t>(ceil_log2(p)));
  }
}

TEST_CASE("alltoall: hypercube rejects p that is not a power of two") {
  for (int p : {3, 5, 6, 7, 12, 33}) {
    INFO("p=" << p);
    CHECK_THROWS_AS(run_check(alltoall_call("hypercube", p, 1), executor_kind::sequential), usage_error);
    const call v =
        make_vcall(collective::alltoallv, p, matrix_of(matrix_pattern::random, p), {}, 0, i32, ops::sum, {"hypercube"});
    CHECK_THROWS_AS(run_check(v, executor_kind::sequential), usage_error);
    coll_args a = alltoall_call("hypercube", p, 1).args;
    CHECK_THROWS_AS(registry::find(collective::alltoall, "hypercube")->build(a, 0), usage_error);
  }
  CHECK(registry::find(collective::alltoall, "hypercube")->needs_power_of_two);
  CHECK(registry::find(collective::alltoallv, "hypercube")->needs_power_of_two);
}

TEST_CASE("alltoall(v): registry entries") {
  for (collective coll : {collective::alltoall, collective::alltoallv}) check_registry_entries(coll, {}, {"hypercube"});
}

TEST_CASE("alltoall(v): the user API runs every algorithm") {
  for (const algorithm* a : registry::for_collective(collective::alltoall)) {
    const std::string algo(a->name);
    const int p = a->only_p != 0 ? a->only_p : a->needs_power_of_two ? 4 : 6;
    run(p, [&](comm& c) {
      std::vector<int> in(p), out(p, -1);
      for (int j = 0; j < p; ++j) in[j] = c.rank() * 100 + j;
      c.alltoall(in, out, {algo});
      for (int j = 0; j < p; ++j) CHECK(out[j] == j * 100 + c.rank());
      if (registry::find(collective::alltoallv, algo) == nullptr) return;  // alltoall alone (bine, two_procs)
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
