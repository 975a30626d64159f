// Shared helpers for the collective test suites: build a call, run it on an executor and
// check it against the sequential reference (ranklab/check.hpp).
#pragma once
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "ranklab/check.hpp"
#include "ranklab/ranklab.hpp"

namespace ranklab::testing {

inline call make_call(collective c, std::string_view algorithm, int p, std::uint64_t count, int root = 0,
                      datatype type = datatype_of<std::int32_t>(), op reduction = ops::sum) {
  call cl;
  cl.args.coll = c;
  cl.args.p = p;
  cl.args.root = root;
  cl.args.count = count;
  cl.args.commutative = reduction.commutative;
  cl.type = type;
  cl.reduction = reduction;
  cl.choice.name = algorithm;
  return cl;
}

inline std::string label(const call& c, executor_kind ex) {
  return fmt::format("{} algorithm={} type={} op={} executor={}", describe(c.args), c.choice.name, name(c.type.kind),
                     name(c.reduction.kind), ex == executor_kind::threads ? "threads" : "sequential");
}

// Runs and checks; returns the result for further assertions (rounds, messages ...).
inline check_result expect_verified(const call& c, executor_kind ex, int iterations = 1) {
  const check_result r = run_check(c, ex, iterations);
  INFO(label(c, ex));
  CHECK_MESSAGE(r.report.ok, (r.report.problems.empty() ? "" : r.report.problems.front()));
  CHECK_MESSAGE(r.verified, r.difference);
  return r;
}

// Names of the registered algorithms of a collective that accept the call.
inline std::vector<std::string> algorithms_accepting(const call& c) {
  std::vector<std::string> out;
  for (const algorithm* a : registry::for_collective(c.args.coll))
    if (meets_preconditions(*a, c.args)) out.emplace_back(a->name);
  return out;
}

}  // namespace ranklab::testing
