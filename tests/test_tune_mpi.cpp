// The rules of `ranklab tune --backend mpi` (tools/tune/mpi_rules.hpp) from synthetic benchmark
// rows: native wins unless an algorithm beats it by the margin; an algorithm with
// preconditions is followed by the next candidate, down to native; bands with the same
// ranking merge; p ranges follow the measured p; and the table written loads and decides the
// interposer's choice as measured.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ranklab/registry.hpp"
#include "ranklab/selection.hpp"
#include "tune/mpi_rules.hpp"

using namespace ranklab;
using namespace ranklab::tools;

namespace {

bench::result_row row(const std::string& coll, int p, std::uint64_t bytes, const std::string& algo, double usec) {
  bench::result_row r;
  r.impl = "openmpi";
  r.coll = coll;
  r.p = p;
  r.bytes = bytes;
  r.algo = algo;
  r.usec_median = usec;
  return r;
}

std::vector<std::string> algorithms_of(const std::vector<selection_rule>& rules, int p, std::uint64_t bytes) {
  std::vector<std::string> out;
  for (const selection_rule& r : rules)
    if (r.matches(r.coll, p, bytes)) out.push_back(r.algorithm);
  return out;
}

}  // namespace

TEST_SUITE("tune --backend mpi") {
  TEST_CASE("native unless faster by the margin; preconditions fall through; bands merge; p ranges") {
    REQUIRE(registry::find(collective::allreduce, "circulant")->needs_commutative);
    REQUIRE(!registry::find(collective::allreduce, "recursive_doubling")->needs_commutative);
    std::vector<bench::result_row> rows;
    // p = 2: 8 and 64 B native clearly faster (one band); 4 KiB circulant only 5% faster
    // (within the 10% margin: native); 256 KiB circulant 2x faster, then recursive_doubling
    // 1.5x faster (no preconditions: the list ends there, native never reached).
    for (std::uint64_t b : {8u, 64u}) {
      rows.push_back(row("allreduce", 2, b, "native", 1.0));
      rows.push_back(row("allreduce", 2, b, "circulant", 3.0));
    }
    rows.push_back(row("allreduce", 2, 4096, "native", 10.0));
    rows.push_back(row("allreduce", 2, 4096, "circulant", 9.5));
    rows.push_back(row("allreduce", 2, 262144, "native", 100.0));
    rows.push_back(row("allreduce", 2, 262144, "circulant", 50.0));
    rows.push_back(row("allreduce", 2, 262144, "recursive_doubling", 66.0));
    rows.push_back(row("allreduce", 2, 262144, "auto", 10.0));  // never a candidate
    // p = 4: only circulant faster (2x) at every size: circulant, then native.
    for (std::uint64_t b : {8u, 64u, 4096u, 262144u}) {
      rows.push_back(row("allreduce", 4, b, "native", 2.0));
      rows.push_back(row("allreduce", 4, b, "circulant", 1.0));
      rows.push_back(row("allreduce", 4, b, "recursive_doubling", 1.95));
    }
    const tune::mpi_rule_plan plan{{collective::allreduce}, {2, 4}, {8, 64, 4096, 262144}, 0.1};
    const tune::mpi_ranking ranked = tune::rank_over_mpi(plan, rows);
    // The matching rules in order (the first whose algorithm accepts the call decides). The 8 and
    // 64 B bands and 4 KiB (all native) merged into one band up to sqrt(4096 * 262144).
    const std::vector<std::string> small{"native", "circulant", "recursive_doubling"};
    CHECK(algorithms_of(ranked.rules, 2, 8) == small);
    CHECK(algorithms_of(ranked.rules, 2, 32768) == small);
    CHECK(algorithms_of(ranked.rules, 2, 32769) == std::vector<std::string>{"circulant", "recursive_doubling"});
    CHECK(ranked.rules.size() == 3 + 2);
    CHECK(ranked.rules[0].max_bytes == 32768);
    CHECK(ranked.rules[0].p_min == 1);
    CHECK(ranked.rules[0].p_max == 2);
    CHECK(ranked.rules[1].algorithm == "circulant");
    CHECK(ranked.rules[2].algorithm == "recursive_doubling");
    CHECK(ranked.rules[3].p_min == 3);
    CHECK(ranked.rules[3].p_max == unbounded_p);
    CHECK(ranked.rules[3].algorithm == "circulant");
    CHECK(ranked.rules[4].algorithm == "native");  // recursive_doubling is within the margin
    CHECK(ranked.measured.size() == 8);

    // The table decides as measured: native where native won (the interposer's fallback),
    // circulant, and for a non-commutative operator the next rule.
    selection_table t;
    t.rules = ranked.rules;
    const selection_table back = parse_selection(to_json(t), "mpi-openmpi.json");
    auto args = [](int p, std::uint64_t count, bool commutative) {
      coll_args a;
      a.coll = collective::allreduce;
      a.p = p;
      a.count = count;
      a.elem_size = 4;
      a.commutative = commutative;
      return a;
    };
    CHECK(choose_from(back, args(2, 2, true), 4, true).native);
    CHECK(choose_from(back, args(2, 65536, true), 4, true).algo->name == "circulant");
    CHECK(choose_from(back, args(2, 65536, false), 4, true).algo->name == "recursive_doubling");
    CHECK(choose_from(back, args(7, 16, true), 4, true).algo->name == "circulant");
    CHECK(choose_from(back, args(7, 16, false), 4, true).native);
  }

  TEST_CASE("a configuration without a native time, or without any algorithm, stays native") {
    std::vector<bench::result_row> rows{row("bcast", 2, 8, "binomial", 1.0), row("bcast", 2, 64, "native", 1.0)};
    bench::result_row failed = row("bcast", 2, 64, "binomial", 0.1);
    failed.status = "timeout";
    rows.push_back(failed);
    const tune::mpi_ranking ranked = tune::rank_over_mpi({{collective::bcast}, {2}, {8, 64}, 0.1}, rows);
    REQUIRE(ranked.rules.size() == 1);  // both bands native: merged
    CHECK(ranked.rules[0].algorithm == "native");
    CHECK(ranked.rules[0].max_bytes == unbounded_bytes);
  }

  TEST_CASE("passes pool by the median of each configuration; one slow pass does not move the table") {
    // Pass 2 ran on a slow host for binomial: the median of the three is pass 1's or 3's.
    const std::vector<std::vector<bench::result_row>> passes{
        {row("bcast", 2, 8, "native", 2.0), row("bcast", 2, 8, "binomial", 1.0)},
        {row("bcast", 2, 8, "native", 2.2), row("bcast", 2, 8, "binomial", 9.0)},
        {row("bcast", 2, 8, "native", 1.8), row("bcast", 2, 8, "binomial", 1.2)}};
    const std::vector<bench::result_row> pooled = tune::pooled_passes(passes);
    REQUIRE(pooled.size() == 2);
    CHECK(*pooled[0].usec_median == doctest::Approx(2.0));
    CHECK(*pooled[1].usec_median == doctest::Approx(1.2));
    CHECK(*pooled[1].usec_min == doctest::Approx(1.0));
    CHECK(*pooled[1].usec_max == doctest::Approx(9.0));
    const tune::mpi_ranking ranked = tune::rank_over_mpi({{collective::bcast}, {2}, {8}, 0.1}, pooled);
    REQUIRE(ranked.rules.size() == 1);  // binomial takes every bcast: native is never reached
    CHECK(ranked.rules[0].algorithm == "binomial");

    // Two passes: the mean of the two; a pass that timed out does not count.
    bench::result_row lost = row("bcast", 2, 8, "binomial", 0.01);
    lost.status = "timeout";
    const std::vector<bench::result_row> two = tune::pooled_passes(
        {{row("bcast", 2, 8, "binomial", 1.0)}, {row("bcast", 2, 8, "binomial", 3.0)}, {lost}});
    REQUIRE(two.size() == 1);
    CHECK(*two[0].usec_median == doctest::Approx(2.0));
    CHECK(two[0].status == "ok");

    // Never ran: the first pass's row as it was.
    const std::vector<bench::result_row> none = tune::pooled_passes({{lost}});
    REQUIRE(none.size() == 1);
    CHECK(none[0].status == "timeout");
  }
}
