// Stress campaigns: per seed a random team size and a random sequence of 10-30 collective
// calls (stress_support.hpp: every collective, every registered algorithm that accepts the
// call, random roots, zero and irregular counts, 1- to 16-byte elements, builtin and user
// operators), run on threads and checked element by element against the sequential
// reference of ranklab/check.hpp. Cases: [blocking] blocking calls only; [nonblocking]
// requests mixed with blocking calls, completed in random orders; [vcounts] v-collectives
// with zero, irregular and displaced counts; [p2p] sendrecv rounds among them;
// [many-requests] up to 24 requests in flight.
//
// RANKLAB_STRESS_SEEDS=n runs n seeds per test case (defaults: about 30 s for the file on
// 2 cores, a tenth under sanitizers), RANKLAB_STRESS_FIRST_SEED=s starts at seed s. A
// failure names its seed and the command that reruns it alone; each campaign ends with one
// line on stdout: "stress [<case>]: N seeds clean (first seed S) in T s".
// RANKLAB_STRESS_VERBOSE=1 prints every plan before it runs.
#include <doctest/doctest.h>

#include "stress_support.hpp"

namespace {

using namespace ranklab;
using namespace ranklab::stress;

// Runs the plan on a team (under the watchdog) and checks every call's output. Returns ""
// when the seed ran clean, else what went wrong.
std::string run_plan(const plan& pl, const std::string& trial_name) {
  std::vector<test_data> data = make_data(pl);
  try {
    run_with_watchdog(trial_name, [&] {
      run(
          pl.p, [&](comm& cm) { play(cm, pl, data); }, pl.options);
    });
  } catch (...) {
    return "run threw: " + current_exception_text();
  }
  return first_difference(pl, data);
}

constexpr std::size_t shown_plans = 3;

// One campaign: `default_seeds` plans of `shape` (unless the environment says otherwise),
// in the test case named "stress [<label>]: ...".
void run_campaign(std::string_view label, const plan_shape& shape, int default_seeds) {
  const std::string case_filter = fmt::format("stress [{}]*", label);
  const campaign range = campaign_from_environment(default_seeds);
  tally result{fmt::format("stress [{}]", label), range};
  for (std::uint64_t seed : range.seeds()) {
    const plan pl = plan_generator(seed, shape).generate();
    if (env_number("RANKLAB_STRESS_VERBOSE", 0)) std::cout << describe(pl) << std::endl;
    const std::string rerun = rerun_command("test_stress", case_filter, seed);
    const std::string failure =
        run_plan(pl, fmt::format("test_stress [{}] seed {} p={}: {}", label, seed, pl.p, rerun));
    // A builder that refuses a call its registry entry accepts: the registry's
    // preconditions are incomplete (the plan used another algorithm instead).
    for (const std::string& refusal : pl.rejected)
      FAIL_CHECK("seed ", seed, ": registry preconditions admit a call the builder rejects: ", refusal);
    if (failure.empty() && pl.rejected.empty()) continue;
    result.failing.push_back(seed);
    // The whole plan for the first few failures only: a systematic bug fails many seeds.
    const std::string plan_text = result.failing.size() <= shown_plans ? "\n" + describe(pl) : "";
    if (!failure.empty()) FAIL_CHECK("seed ", seed, " (p=", pl.p, ") failed: ", failure, "\nrerun: ", rerun, plan_text);
  }
  result.report();
}

const plan_shape blocking_shape{.nonblocking_share = 0};
const plan_shape nonblocking_shape{.nonblocking_share = 0.7};

// Only v-collectives, with many zero entries (all-zero, single-block, irregular patterns
// come from the generator) and displacements with gaps; a few requests among them.
const plan_shape vector_shape{.nonblocking_share = 0.3,
                              .collectives = {collective::allgatherv, collective::reduce_scatter, collective::scatterv,
                                              collective::gatherv, collective::alltoallv},
                              .zero_count_share = 0.4};

// Long runs of requests, completed rarely: up to 24 outstanding at once, more than the
// runtime's 16 call slots (docs/runtime.md: any number may be outstanding).
const plan_shape many_requests_shape{
    .min_calls = 20, .max_calls = 40, .nonblocking_share = 1.0, .completion_share = 0.05, .max_outstanding = 24};

// Point-to-point sendrecv rounds between the collectives, with requests outstanding (the
// sendrecv fast path is only for a rank with nothing in flight; messages of calls not yet
// reached are stashed).
const plan_shape point_to_point_shape{.nonblocking_share = 0.6, .exchange_share = 0.4};

}  // namespace

TEST_SUITE("stress") {
  TEST_CASE(
      "stress [blocking]: random sequences of blocking collectives, every accepting algorithm, vs the reference") {
    run_campaign("blocking", blocking_shape, 250);
  }

  TEST_CASE(
      "stress [nonblocking]: requests outstanding at once, mixed with blocking calls, completed in random orders") {
    run_campaign("nonblocking", nonblocking_shape, 250);
  }

  TEST_CASE("stress [vcounts]: v-collectives with zero, irregular and displaced counts") {
    run_campaign("vcounts", vector_shape, 250);
  }

  TEST_CASE("stress [p2p]: sendrecv rounds (express, inline, descriptor sizes) among collectives and requests") {
    run_campaign("p2p", point_to_point_shape, 200);
  }

  TEST_CASE("stress [many-requests]: up to 24 requests outstanding at once, completed in random orders") {
    run_campaign("many-requests", many_requests_shape, 200);
  }

}  // TEST_SUITE
