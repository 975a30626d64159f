// Allgather and allgatherv: the claims of the registered algorithms -- the round counts the
// sources state, every block received exactly once (the minimum volume), the registry
// entries, and the user API. Results against the reference: test_conformance.cpp.
// See docs/algorithms.md, "allgather".

#include "collective_checks.hpp"
#include "patterns/mesh.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

// The rounds the sources state; none for the algorithms whose rounds depend on more than p
// (circulant: test_circulant_collectives.cpp; direct: test_direct.cpp).
const round_claims allgather_rounds = {
    {"linear", [](int p) -> std::size_t { return p - 1; }},
    {"ring", [](int p) -> std::size_t { return p - 1; }},  // the 5DV050 lecture
    // J. Bruck et al., as A. D. Anenkov implements it: ceil(log2 p) rounds for any p.
    {"bruck", [](int p) -> std::size_t { return ceil_log2(p); }},
    // W. J. Loch, G. P. Koslovski, "Sparbit": ceil(log2 p) rounds for any p.
    {"sparbit", [](int p) -> std::size_t { return ceil_log2(p); }},
    {"recursive_doubling", folded_doubling_rounds},
    {"neighbor_exchange", [](int p) -> std::size_t { return p % 2 == 0 ? p / 2 : (p - 1) / 2 + 2; }},
    {"mesh2d", mesh2d_rounds},
};

}  // namespace

TEST_CASE("allgather: round counts as the sources state them") {
  check_round_claims(collective::allgather, allgather_rounds, ps_up_to(129));
}

TEST_CASE("allgather: every block reaches every rank exactly once (no redundant transfers)") {
  for (const algorithm* a : registry::for_collective(collective::allgather)) {
    if (!a->one_ported) continue;  // the direct algorithm reads remotely, it sends nothing
    // The hierarchical one moves blocks through temporaries and down the domains again: more
    // than the minimum volume, by design (docs/hierarchy.md).
    if (a->hierarchical) continue;
    // So does a composition such as gather_bcast, whose blocks travel to rank 0 and out again.
    if (!a->composition.empty()) continue;
    for (int p : {1, 2, 3, 5, 6, 7, 8, 12, 13, 16, 17, 31, 32, 33}) {
      const std::uint64_t n = 3;
      const call c = make_call(collective::allgather, p, n, 0, i32, ops::sum, {a->name});
      if (!meets_preconditions(*a, c.args)) continue;  // the two-process specialisation
      INFO("algorithm=" << a->name << " p=" << p);
      const verify_report r = report_of(c, true);
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
}

TEST_CASE("allgather(v): registry entries have no preconditions, a cost and a summary, one builder serves both") {
  for (collective coll : {collective::allgather, collective::allgatherv}) {
    check_registry_entries(coll);
    const collective other = coll == collective::allgather ? collective::allgatherv : collective::allgather;
    for (const algorithm* a : registry::for_collective(coll)) CHECK_MESSAGE(registry::find(other, a->name), a->name);
  }
}

TEST_CASE("allgather(v): the user API runs every algorithm") {
  for (const algorithm* a : registry::for_collective(collective::allgather)) {
    if (a->only_p != 0) continue;  // two_procs: its own suite runs it at p = 2
    const std::string algo_name(a->name);
    run(5, [&](comm& c) {
      std::vector<int> in{c.rank() * 10, c.rank() * 10 + 1};
      std::vector<int> out(10, -1);
      c.allgather(in, out, {algo_name});
      for (int j = 0; j < 5; ++j) {
        CHECK(out[2 * j] == j * 10);
        CHECK(out[2 * j + 1] == j * 10 + 1);
      }
      const std::vector<std::uint64_t> cnt{1, 0, 2, 1, 3};
      std::vector<int> vin(cnt[c.rank()], c.rank());
      std::vector<int> vout(7, -1);
      c.allgatherv(vin, vout, cnt, {}, {algo_name});
      CHECK(vout == std::vector<int>{0, 2, 2, 3, 4, 4, 4});
    });
  }
}
