// The semantic check: what a schedule set computes, from the schedules alone. It runs them
// on symbols (which ranks' contributions, of which element, combined in which order) in
// the sequential executor's lockstep order, then compares every element of every rank's
// `out` with the collective's definition: placement for bcast, scatter, gather, allgather
// and alltoall (and their v-forms); for the reductions each contribution exactly once, in
// rank order when the operator is not commutative; for barrier, that every rank's exit
// depends on every rank's entry. An in-place call (coll_args::in_place) is run with `in`
// and `out` the same buffer, as the executors run it. See docs/writing-algorithms.md.
//
// verify_algorithm sweeps one algorithm over the calls that find the usual mistakes:
// every root, in place and out of place, counts 0, 1 and irregular, commutative and not.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ranklab/collective.hpp"
#include "ranklab/executor.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab {

// The first element a schedule set gets wrong, in words: element `index` of rank `rank`'s
// out buffer should hold `expected` and holds `got` ("element 3 combined over ranks 0..7",
// "rank 2's element 5", "what out held before the call" ...).
struct wrong_element {
  int rank = no_rank;
  std::uint64_t index = 0;
  std::string expected, got;
};

struct semantic_report {
  bool ok = true;
  std::vector<std::string> problems;  // the first few, readable
  std::optional<wrong_element> first;
  std::uint64_t wrong_elements = 0;
};

// Checks what `schedules` (all ranks' schedules of the call `args`) leave in every out
// buffer. Throws usage_error when the set does not have args.p schedules.
semantic_report check_semantics(const schedule_set& schedules, const coll_args& args);

// Structure (verify(schedules)) and, when that passes, semantics: one report.
verify_report verify(const schedule_set& schedules, const coll_args& args);

// One call of a sweep that failed: the call (root, in place, counts) and the findings.
struct verify_failure {
  coll_args args;
  std::vector<std::string> problems;
};

// The calls verify_algorithm tries at one p.
struct verify_sweep {
  bool every_root = true;   // false: roots 0, p/2 and p-1
  bool in_place = true;     // also in place, where the collective has an in-place form
  bool irregular = true;    // v-collectives: irregular counts and displacements too
  bool both_orders = true;  // reductions: a non-commutative operator too, when the algorithm takes one
  // With the uneven count, the parameters that reshape schedules too: blocks 3, radix 3,
  // segments of 2 elements, one removed step (algorithms that take none ignore them).
  bool params = true;
  // Instead of counts 0, 1 and an uneven one: this count only (a v-collective's per rank).
  std::optional<std::uint64_t> count;
  std::optional<int> root;  // instead of the roots above: this one only
  // Every call with these domains (coll_args::hierarchy), at the p it has ranks for; other p
  // are skipped. Not owned.
  const rank_hierarchy* hierarchy = nullptr;
};

struct verify_summary {
  std::size_t calls = 0;  // calls verified
  std::string skipped;    // why the algorithm cannot run at this p (its precondition), if so
  std::vector<verify_failure> failures;
  std::size_t rounds = 0;      // the most rounds of any call verified
  std::uint64_t messages = 0;  // the most messages of any call verified
  bool ok() const { return failures.empty(); }
};

// Builds and verifies `a` at p for every call of the sweep (count 0, 1 and one that does
// not divide evenly; every root; in place and not; commutative and not). A builder that
// throws is a failure of that call.
verify_summary verify_algorithm(const algorithm& a, int p, const verify_sweep& sweep = {});

// "bcast(p=8, root=3, count=0, in place)" with the operator's order where it matters: how
// a failing call is named in reports.
std::string describe_verified_call(const coll_args& args);

}  // namespace ranklab
