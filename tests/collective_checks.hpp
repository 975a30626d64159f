// Shared checks of the collective test suites: run a call on an executor and check it
// against the sequential reference (ranklab/check.hpp), verify an algorithm's schedules
// without running them, and the claims the suites share (rounds, registry entries). The
// calls' parts (operands, roots, counts, layouts): call_shapes.hpp.
#pragma once
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "call_shapes.hpp"
#include "ranklab/check.hpp"
#include "ranklab/ranklab.hpp"

namespace ranklab::testing {

// ---- running and checking ---------------------------------------------------------------------

// Runs and checks; returns the result for further assertions (rounds, messages ...).
inline check_result expect_verified(const call& c, executor_kind ex, int iterations = 1) {
  const check_result r = run_check(c, ex, iterations);
  INFO(label(c, ex));
  CHECK_MESSAGE(r.report.ok, (r.report.problems.empty() ? "" : r.report.problems.front()));
  CHECK_MESSAGE(r.verified, r.difference);
  return r;
}

// The call's arguments as the check harness hands them to the builders.
inline coll_args prepared(const call& c) {
  coll_args a = c.args;
  a.commutative = c.reduction.commutative;
  a.elem_size = c.type.size;
  return a;
}

// All ranks' schedules of the call's (named) algorithm.
inline schedule_set plans_of(const call& c) {
  const algorithm* a = registry::find(c.args.coll, c.choice.name);
  REQUIRE_MESSAGE(a != nullptr, name(c.args.coll), "/", c.choice.name);
  return build_all(*a, prepared(c));
}

// Verifies the call's schedules without running them (rounds, messages, volumes; with
// count_receives also how often each output element is received).
inline verify_report report_of(const call& c, bool count_receives = false) {
  const verify_report r = verify(plans_of(c), count_receives);
  CHECK_MESSAGE(r.ok, (r.problems.empty() ? "" : r.problems.front()));
  return r;
}

// The rounds an algorithm's source states at p ranks (p > 1; every algorithm takes none at
// p = 1), by algorithm name.
using round_claims = std::map<std::string, std::function<std::size_t(int p)>, std::less<>>;

// For every registered algorithm of `c` with a claim and every p in `ps` it accepts: the
// verifier's rounds for `count` elements (per rank or block) equal the claim.
inline void check_round_claims(collective c, const round_claims& claims, const std::vector<int>& ps,
                               std::uint64_t count = 2) {
  for (const algorithm* a : registry::for_collective(c)) {
    const auto claim = claims.find(a->name);
    if (claim == claims.end()) continue;
    for (int p : ps) {
      const call cl = make_call(c, p, count, 0, i32, ops::sum, {a->name});
      if (!meets_preconditions(*a, cl.args)) continue;
      INFO(name(c), "/", a->name, " p=", p);
      CHECK(report_of(cl).rounds == (p == 1 ? 0 : claim->second(p)));
    }
  }
}

// The registry entries of `c`: every one has a cost and a summary and needs p a power of two
// only if `power_of_two` names it; the algorithms `commutative` names need a commutative
// operator as it says (for data movement none does).
inline void check_registry_entries(collective c, const std::map<std::string, bool, std::less<>>& commutative = {},
                                   const std::vector<std::string_view>& power_of_two = {}) {
  for (const auto& [algo, needs] : commutative) CHECK_MESSAGE(registry::find(c, algo) != nullptr, algo);
  for (const algorithm* a : registry::for_collective(c)) {
    INFO(name(c), "/", a->name);
    CHECK(a->needs_power_of_two ==
          (std::find(power_of_two.begin(), power_of_two.end(), a->name) != power_of_two.end()));
    CHECK(static_cast<bool>(a->cost));
    CHECK_FALSE(a->summary.empty());
    if (!is_reduction(c)) CHECK_FALSE(a->needs_commutative);
    const auto claim = commutative.find(a->name);
    if (claim != commutative.end()) CHECK(a->needs_commutative == claim->second);
  }
}

// Names of the registered algorithms of a collective that accept the call.
inline std::vector<std::string> algorithms_accepting(const call& c) {
  std::vector<std::string> out;
  for (const algorithm* a : registry::for_collective(c.args.coll))
    if (meets_preconditions(*a, c.args)) out.emplace_back(a->name);
  return out;
}

// ---- claims -----------------------------------------------------------------------------------

// Rounds of recursive doubling with non-power-of-two p folded onto the largest power of two
// below it (one round before, one after).
inline std::size_t folded_doubling_rounds(int p) {
  return static_cast<std::size_t>(floor_log2(p) + ((p & (p - 1)) == 0 ? 0 : 2));
}

// Rounds of rings along the rows, then the columns of the most square grid rows x cols = p
// (rows the largest divisor of p not above sqrt p; prime p: one ring): mesh2d allgather and
// alltoall.
inline std::size_t mesh2d_rounds(int p) {
  int rows = 1;
  for (int d = 1; d * d <= p; ++d)
    if (p % d == 0) rows = d;
  return static_cast<std::size_t>((rows - 1) + (p / rows - 1));
}

// Every non-root element is written by exactly one receive (report_of with count_receives).
inline void expect_received_once(const call& c, const verify_report& r) {
  for (int rank = 0; rank < c.args.p; ++rank) {
    if (rank == c.args.root) continue;
    const auto& per = r.receives_per_element[static_cast<std::size_t>(rank)];
    const bool once = std::all_of(per.begin(), per.end(), [](std::uint32_t n) { return n == 1; });
    CHECK_MESSAGE(once, "rank ", rank, " does not receive every element exactly once");
  }
}

}  // namespace ranklab::testing
