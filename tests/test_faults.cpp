// Fault campaigns: failures must release everyone and never hang. Each trial takes a random
// plan (stress_support.hpp: random p >= 2, random calls, requests outstanding) that every
// rank plays, except one "odd" rank whose copy of the plan is changed:
//  * [throw] it throws a planned_failure at a random step (often with requests outstanding):
//    every other rank gets remote_failure naming it, promptly, and run() rethrows the
//    original object;
//  * [throwing-operator] the same, thrown by a user operator inside a scan, i.e. from the
//    runtime's progress code;
//  * [skip-last] it skips the last call: deadlock_error naming the rank that returned;
//  * [other-collective], [other-root], [other-count] it calls another collective, another
//    root or other counts at one position: mismatch_error naming it;
//  * [skip-middle] it skips a call in the middle: mismatch_error naming it (or a deadlock
//    at the end, when the calls it shifts look alike).
// [withdrawn-descriptor] repeats one mismatch many times for a rare race: a peer meeting
// the failing rank's withdrawn descriptor before the team was marked failed used to report
// a failure of its own, which run() could rethrow instead of the original. Every trial runs
// under the watchdog: a hang is reported with its seed and ends the process with a failure. Seeds as in test_stress
// (RANKLAB_STRESS_SEEDS, RANKLAB_STRESS_FIRST_SEED; RANKLAB_STRESS_VERBOSE=1 prints every
// trial's plans first); timings (trial time, release after a throw) are reported as
// MESSAGEs, asserted only against generous bounds.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>

#include "stress_support.hpp"
#include "test_support.hpp"

namespace {

using namespace ranklab;
using namespace ranklab::testing;
using namespace ranklab::stress;
using namespace std::chrono_literals;

// ---- running a trial ---------------------------------------------------------------------

// How one rank's function ended.
struct rank_ending {
  std::string kind = "not run";  // "ok", "remote_failure", "deadlock_error", "mismatch_error",
                                 // "planned_failure", or another exception's kind
  int error_rank = no_rank;      // ranklab::error::rank()
  int origin = no_rank;          // remote_failure::origin_rank()
  std::string what, cause;
  clock::time_point at{};
};

struct trial_result {
  std::exception_ptr thrown;  // what run() rethrew
  std::vector<rank_ending> endings;
  double seconds = 0;
};

void note_error(rank_ending& e, std::string kind, const ranklab::error& x) {
  e.kind = std::move(kind);
  e.error_rank = x.rank();
  e.what = x.what();
  e.cause = x.cause();
}

// Runs fn, records how it ended (and when), and rethrows.
template <class F>
void recording(rank_ending& e, F fn) {
  try {
    fn();
    e.kind = "ok";
  } catch (const remote_failure& x) {
    note_error(e, "remote_failure", x);
    e.origin = x.origin_rank();
    e.at = clock::now();
    throw;
  } catch (const deadlock_error& x) {
    note_error(e, "deadlock_error", x);
    throw;
  } catch (const mismatch_error& x) {
    note_error(e, "mismatch_error", x);
    throw;
  } catch (const ranklab::error& x) {
    note_error(e, "ranklab::error", x);
    throw;
  } catch (const planned_failure& x) {
    e.kind = "planned_failure";
    e.what = x.what();
    throw;
  } catch (...) {
    e.kind = "other exception";
    e.what = current_exception_text();
    throw;
  }
}

// Every rank plays `normal` except `odd_rank`, which plays `odd`.
trial_result run_trial(const plan& normal, const plan& odd, int odd_rank, const std::string& trial_name) {
  if (env_number("RANKLAB_STRESS_VERBOSE", 0))
    std::cout << fmt::format("{}\nodd rank {}'s {}\nothers' {}", trial_name, odd_rank, describe(odd), describe(normal))
              << std::endl;
  std::vector<test_data> normal_data = make_data(normal), odd_data = make_data(odd);
  trial_result res;
  res.endings.resize(static_cast<std::size_t>(normal.p));
  const auto t0 = clock::now();
  run_with_watchdog(trial_name, [&] {
    try {
      run(
          normal.p,
          [&](comm& cm) {
            const bool is_odd = cm.rank() == odd_rank;
            recording(res.endings[static_cast<std::size_t>(cm.rank())],
                      [&] { play(cm, is_odd ? odd : normal, is_odd ? odd_data : normal_data); });
          },
          normal.options);
    } catch (...) {
      res.thrown = std::current_exception();
    }
  });
  res.seconds = std::chrono::duration<double>(clock::now() - t0).count();
  if (env_number("RANKLAB_STRESS_VERBOSE", 0))
    std::cout << fmt::format("trial took {:.3f} s", res.seconds) << std::endl;
  return res;
}

// The exception in `e` as an E (a copy), if it is one.
template <class E>
std::optional<E> caught_as(const std::exception_ptr& e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const E& x) {
    return x;
  } catch (...) {
  }
  return std::nullopt;
}

std::string text_of(const std::exception_ptr& e) {
  if (!e) return "nothing";
  try {
    std::rethrow_exception(e);
  } catch (...) {
    return current_exception_text();
  }
}

std::string rank_text(int r) { return "rank " + std::to_string(r); }

// ---- plans for the trials ----------------------------------------------------------------

// Short sequences with many requests, on teams of at least two ranks. The small deadlock
// timeout keeps the deadlock and mismatch trials fast.
const plan_shape fault_shape{.min_calls = 4, .max_calls = 14, .min_p = 2, .nonblocking_share = 0.5};

plan base_plan(plan_generator& gen) {
  plan pl = gen.generate();
  pl.options.deadlock_timeout = 150ms;
  return pl;
}

// Collectives in which every rank needs data from every other rank (with counts > 0): no
// rank can finish one of these while another rank stays away.
call_spec everyone_waits_call(plan_generator& gen, int p) {
  static const collective everyone_waits[] = {collective::barrier, collective::allreduce, collective::allgather,
                                              collective::alltoall, collective::reduce_scatter_block};
  return gen.make_call(p, gen.pick(std::span(everyone_waits)), /*positive_counts=*/true);
}

// A step index to disturb: half of the time one with requests outstanding (if any).
std::size_t pick_step(plan_generator& gen, const plan& pl, std::size_t last) {
  std::vector<std::size_t> busy;
  for (std::size_t i = 0; i <= last; ++i)
    if (outstanding_before(pl, i) > 0) busy.push_back(i);
  if (!busy.empty() && gen.chance(0.5)) return gen.pick(busy);
  return static_cast<std::size_t>(gen.int_in(0, static_cast<int>(last)));
}

// ---- reporting ---------------------------------------------------------------------------

std::string endings_text(const trial_result& res) {
  std::string text = fmt::format("run() threw: {}", text_of(res.thrown));
  for (std::size_t r = 0; r < res.endings.size(); ++r)
    text += fmt::format("\n  rank {}: {} {}", r, res.endings[r].kind, res.endings[r].what);
  return text;
}

struct verdict {
  std::vector<std::string> problems;
  std::string context;
  double seconds = 0;                   // the whole trial: run() until every rank returned
  std::vector<double> release_seconds;  // throw trials: from the throw to each release
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

std::string timing_summary(std::string_view what, const std::vector<double>& seconds) {
  return fmt::format("{} over {}: p50 {:.1f} ms, max {:.1f} ms", what, seconds.size(), 1e3 * percentile(seconds, 0.5),
                     1e3 * percentile(seconds, 1.0));
}

// Seeds of one campaign (in the test case named "faults [<label>]: ..."), each trial's
// problems (empty: clean) reported with the rerun command and the plans, and the tally line
// at the end.
class fault_campaign {
 public:
  fault_campaign(std::string_view label, int default_seeds, std::vector<std::uint64_t> regressions = {})
      : label_(label),
        filter_(fmt::format("faults [{}]*", label)),
        result_{fmt::format("faults [{}]", label), campaign_from_environment(default_seeds, std::move(regressions))} {}

  // trial(seed, trial_name) -> verdict. Reports the trials' durations and, if any, the
  // release times (timing is reported, not asserted beyond the trials' generous bounds).
  template <class Trial>
  void run(Trial trial) {
    const campaign& range = result_.range;
    std::vector<double> trial_seconds, release_seconds;
    for (std::uint64_t seed : range.seeds()) {
      const std::string rerun = rerun_command("test_faults", filter_, seed);
      const verdict v = trial(seed, fmt::format("test_faults [{}] seed {}: {}", label_, seed, rerun));
      trial_seconds.push_back(v.seconds);
      release_seconds.insert(release_seconds.end(), v.release_seconds.begin(), v.release_seconds.end());
      if (v.problems.empty()) continue;
      result_.failing.push_back(seed);
      // The endings and plans for the first few failures only: a systematic bug fails many.
      const std::string context = result_.failing.size() <= 3 ? "\n" + v.context : "";
      FAIL_CHECK("seed ", seed, ": ", fmt::format("{}", fmt::join(v.problems, "\n")), "\nrerun: ", rerun, context);
    }
    result_.report();
    MESSAGE(result_.label, ": ", timing_summary("trial time (run() until all returned)", trial_seconds));
    if (!release_seconds.empty())
      MESSAGE(result_.label, ": ", timing_summary("release after the throw, released ranks", release_seconds),
              " (bound 5 s)");
  }

 private:
  std::string label_, filter_;
  tally result_;
};

// ---- the throwing rank -------------------------------------------------------------------

// Checks that run() rethrew the thrower's own planned_failure, that the thrower ended with
// one of `thrower_endings`, and that every other rank was released with remote_failure
// naming it (its rank, origin, cause and text) within 5 s of the throw.
void check_released(const trial_result& res, int thrower, const std::vector<std::string>& thrower_endings, verdict& v) {
  const std::optional<planned_failure> original = caught_as<planned_failure>(res.thrown);
  if (!original) {
    v.problems.push_back("run() did not rethrow the planned_failure but " + text_of(res.thrown));
    return;
  }
  if (original->rank != thrower) v.problems.push_back("run() rethrew another rank's planned_failure");
  const std::string& own = res.endings[static_cast<std::size_t>(thrower)].kind;
  if (std::find(thrower_endings.begin(), thrower_endings.end(), own) == thrower_endings.end())
    v.problems.push_back("the thrower ended with " + own);
  for (int r = 0; r < static_cast<int>(res.endings.size()); ++r) {
    if (r == thrower) continue;
    const rank_ending& e = res.endings[static_cast<std::size_t>(r)];
    const bool released = e.kind == "remote_failure" && e.origin == thrower && e.error_rank == r &&
                          contains(e.cause, original->text) && contains(e.what, rank_text(thrower));
    if (!released) {
      v.problems.push_back(fmt::format("rank {} was not released with remote_failure naming rank {}: {} {}", r, thrower,
                                       e.kind, e.what));
      continue;
    }
    const double seconds = std::chrono::duration<double>(e.at - original->thrown_at).count();
    v.release_seconds.push_back(seconds);
    if (seconds > 5.0) v.problems.push_back(fmt::format("rank {} was released only after {:.2f} s", r, seconds));
  }
}

verdict throwing_rank_trial(std::uint64_t seed, const std::string& trial_name) {
  plan_generator gen(seed, fault_shape);
  plan normal = base_plan(gen);
  // A final barrier: without it a rank could legally finish the plan without meeting the
  // thrower (its last calls may need nothing from it) and then nobody must release it.
  add_call(normal, gen.make_call(normal.p, collective::barrier, true), normal.steps.size());
  const int thrower = gen.int_in(0, normal.p - 1);
  plan odd = normal;
  const std::size_t at = pick_step(gen, normal, normal.steps.size() - 1);
  step raise;
  raise.what = step::kind::raise;
  odd.steps.insert(odd.steps.begin() + static_cast<std::ptrdiff_t>(at), raise);

  const trial_result res = run_trial(normal, odd, thrower, trial_name);
  verdict v;
  v.seconds = res.seconds;
  v.context = fmt::format("rank {} throws at step {} ({} requests outstanding)\n{}\n{}", thrower, at,
                          outstanding_before(normal, at), endings_text(res), describe(odd));
  check_released(res, thrower, {"planned_failure"}, v);
  return v;
}

// ---- a user operator that throws inside the library ----------------------------------------

// A wrapping int64 sum that throws a planned_failure when run by one rank's thread: the
// exception leaves through the runtime's progress code (maybe while the rank waits for
// another request), and run() must still hand back this very object.
struct throwing_sum {
  int rank;
  std::uint64_t seed;
  std::size_t step;
};

void sum_or_throw(const void* in, void* inout, std::size_t n, const void* context) {
  const auto& c = *static_cast<const throwing_sum*>(context);
  if (this_rank() == c.rank) throw planned_failure(c.rank, c.seed, c.step);
  const auto* a = static_cast<const std::int64_t*>(in);
  auto* b = static_cast<std::int64_t*>(inout);
  for (std::size_t i = 0; i < n; ++i) b[i] = wrapping_add_i64(a[i], b[i]);
}

verdict throwing_operator_trial(std::uint64_t seed, const std::string& trial_name) {
  plan_generator gen(seed, fault_shape);
  plan pl = base_plan(gen);
  pl.options.progress_thread = false;  // the operator must run on the rank's own thread
  // In every scan algorithm but one each rank but 0 combines what it receives with its own input.
  throwing_sum context{gen.int_in(1, pl.p - 1), seed, 0};
  const reduction throwing{"sum that throws on one rank", op::user(sum_or_throw, true, &context)};
  context.step = pick_step(gen, pl, pl.steps.size());
  call_spec scan = gen.make_reduction_call(pl.p, collective::scan, element::int64, throwing, true);
  // Except `ordered`: there the owner of a block folds its prefixes for every rank, so with
  // fewer blocks than ranks the thrower may never combine anything (seed 14 of this campaign).
  if (select_algorithm(scan.c.args, scan.c.type.size, scan.c.choice.name).name == "ordered")
    scan.c.choice.name = "linear";
  add_call(pl, scan, context.step);
  add_call(pl, gen.make_call(pl.p, collective::barrier, true), pl.steps.size());

  const trial_result res = run_trial(pl, pl, context.rank, trial_name);
  verdict v;
  v.seconds = res.seconds;
  v.context = fmt::format("rank {}'s operator throws in the scan of step {}\n{}\n{}", context.rank, context.step,
                          endings_text(res), describe(pl));
  // The thrower may also meet its own failure later (a request destructor swallows it).
  check_released(res, context.rank, {"planned_failure", "remote_failure"}, v);
  return v;
}

// ---- the rank that skips the last call -------------------------------------------------

verdict skipped_last_call_trial(std::uint64_t seed, const std::string& trial_name) {
  plan_generator gen(seed, fault_shape);
  plan normal = base_plan(gen);
  add_call(normal, everyone_waits_call(gen, normal.p), normal.steps.size());
  const int skipper = gen.int_in(0, normal.p - 1);
  plan odd = normal;
  odd.steps.pop_back();

  const trial_result res = run_trial(normal, odd, skipper, trial_name);
  verdict v;
  v.seconds = res.seconds;
  v.context = fmt::format("rank {} skips the last call ({})\n{}\n{}", skipper, describe(normal.calls.back()),
                          endings_text(res), describe(normal));
  const std::string what = text_of(res.thrown);
  if (!caught_as<deadlock_error>(res.thrown))
    v.problems.push_back("run() did not throw deadlock_error");
  else if (!contains(what, rank_text(skipper) + " has returned"))
    v.problems.push_back(fmt::format("the deadlock report does not say that rank {} has returned", skipper));
  if (res.endings[skipper].kind != "ok")
    v.problems.push_back("the skipping rank ended with " + res.endings[skipper].kind);
  for (int r = 0; r < normal.p; ++r)
    if (r != skipper && res.endings[static_cast<std::size_t>(r)].kind != "deadlock_error")
      v.problems.push_back(fmt::format("rank {} ended with {}", r, res.endings[static_cast<std::size_t>(r)].kind));
  return v;
}

// ---- ranks that disagree on a call ---------------------------------------------------------

enum class deviation { other_collective, other_root, other_count, skipped_call };

std::string_view deviation_name(deviation d) {
  constexpr std::string_view names[] = {"calls another collective", "uses another root", "passes other counts",
                                        "skips a call in the middle"};
  return names[static_cast<std::size_t>(d)];
}

collective rooted_collective(plan_generator& gen) {
  static const collective rooted[] = {collective::bcast,    collective::reduce, collective::scatter,
                                      collective::scatterv, collective::gather, collective::gatherv};
  return gen.pick(std::span(rooted));
}

// Collectives that have counts (all but barrier).
std::vector<collective> counted_collectives() {
  std::vector<collective> out = all_collectives();
  std::erase(out, collective::barrier);
  return out;
}

// The odd rank's version of a blocking call inserted into the plan at a random step.
void insert_disagreement(plan_generator& gen, deviation d, plan& normal, plan& odd) {
  const std::vector<collective> everything = all_collectives();
  const collective coll = d == deviation::other_root    ? rooted_collective(gen)
                          : d == deviation::other_count ? gen.pick(counted_collectives())
                                                        : gen.pick(everything);
  const call_spec agreed = gen.make_call(normal.p, coll, /*positive_counts=*/true);
  call_spec different = agreed;
  if (d == deviation::other_collective) {
    collective other = coll;
    while (other == coll) other = gen.pick(everything);
    different = gen.make_call(normal.p, other, true);
  } else if (d == deviation::other_root) {
    different = gen.with_other_root(agreed);
  } else {
    different = gen.with_other_count(agreed);
  }
  // The odd call must be one its rank could make: a count its algorithm refuses (a fence
  // payload over the limit: slots at seed 10) is a precondition error of that rank alone,
  // before any other rank is met, not a disagreement.
  const algorithm* named =
      different.c.choice.name == "auto" ? nullptr : registry::find(different.c.args.coll, different.c.choice.name);
  if (named != nullptr && !meets_preconditions(*named, different.c.args)) different.c.choice.name = "auto";
  const std::size_t at = pick_step(gen, normal, normal.steps.size());
  add_call(normal, agreed, at);
  add_call(odd, different, at);
}

// The odd rank leaves out one call (not the last: that is the deadlock trial).
void drop_a_call(plan_generator& gen, plan& odd) {
  std::vector<std::size_t> issues;
  for (std::size_t i = 0; i < odd.steps.size(); ++i)
    if (odd.steps[i].what == step::kind::issue) issues.push_back(i);
  odd.steps.erase(odd.steps.begin() + static_cast<std::ptrdiff_t>(gen.pick(issues)));
}

verdict disagreement_trial(deviation d, std::uint64_t seed, const std::string& trial_name) {
  plan_generator gen(seed, fault_shape);
  plan normal = base_plan(gen);
  plan odd = normal;
  const int odd_rank = gen.int_in(0, normal.p - 1);
  if (d == deviation::skipped_call)
    drop_a_call(gen, odd);
  else
    insert_disagreement(gen, d, normal, odd);
  // A final barrier: a rank that passed its odd call without meeting anyone still has to
  // meet everyone once more, so the disagreement cannot go unnoticed.
  const call_spec last = gen.make_call(normal.p, collective::barrier, true);
  add_call(normal, last, normal.steps.size());
  add_call(odd, last, odd.steps.size());

  const trial_result res = run_trial(normal, odd, odd_rank, trial_name);
  verdict v;
  v.seconds = res.seconds;
  v.context = fmt::format("rank {} {}\n{}\nodd rank's {}\nothers' {}", odd_rank, deviation_name(d), endings_text(res),
                          describe(odd), describe(normal));
  const std::string what = text_of(res.thrown);
  const bool mismatch = caught_as<mismatch_error>(res.thrown).has_value();
  const bool deadlock_allowed = d == deviation::skipped_call && caught_as<deadlock_error>(res.thrown).has_value();
  if (!mismatch && !deadlock_allowed)
    v.problems.push_back("run() threw neither mismatch_error" +
                         std::string(d == deviation::skipped_call ? " nor deadlock_error" : "") + ": " +
                         text_of(res.thrown));
  else if (!contains(what, rank_text(odd_rank)))
    v.problems.push_back(fmt::format("the error does not name rank {}: {}", odd_rank, what));
  // Every rank stops with the error itself or is released by it (or finished first).
  for (int r = 0; r < normal.p; ++r) {
    const std::string& kind = res.endings[static_cast<std::size_t>(r)].kind;
    if (kind != "mismatch_error" && kind != "remote_failure" && kind != "ok" &&
        !(deadlock_allowed && kind == "deadlock_error"))
      v.problems.push_back(fmt::format("rank {} ended with {}", r, kind));
  }
  return v;
}

void run_disagreements(deviation d, std::string_view label, std::vector<std::uint64_t> regressions = {}) {
  fault_campaign(label, 30, std::move(regressions)).run([d](std::uint64_t seed, const std::string& name) {
    return disagreement_trial(d, seed, name);
  });
}

}  // namespace

TEST_SUITE("faults") {
  TEST_CASE(
      "faults [throw]: a rank throws at a random step: the others get remote_failure naming it, run rethrows the "
      "original") {
    fault_campaign("throw", 100).run([](std::uint64_t seed, const std::string& name) {
      return throwing_rank_trial(seed, name);
    });
  }

  TEST_CASE(
      "faults [throwing-operator]: a user operator throws inside a scan on one rank: run rethrows it, the others are "
      "released") {
    fault_campaign("throwing-operator", 60).run([](std::uint64_t seed, const std::string& name) {
      return throwing_operator_trial(seed, name);
    });
  }

  TEST_CASE("faults [skip-last]: a rank skips the last call: deadlock_error naming the rank that returned") {
    fault_campaign("skip-last", 30).run([](std::uint64_t seed, const std::string& name) {
      return skipped_last_call_trial(seed, name);
    });
  }

  TEST_CASE("faults [other-collective]: a rank calls another collective at one position: mismatch_error naming it") {
    run_disagreements(deviation::other_collective, "other-collective");
  }

  // Regression seeds: 76, 106 crashed in direct scatter(v) about every other run (a root that
  // is only read from unwound without waiting for its readers); 78, 129 lost a root mismatch
  // in direct gather(v) (no rank read, so nothing compared the calls until fences did).
  TEST_CASE("faults [other-root]: a rank passes another root at one position: mismatch_error naming it") {
    run_disagreements(deviation::other_root, "other-root", {76, 78, 106, 129});
  }

  // Regression seed 20: crashed in direct scatterv about every other run (as above).
  TEST_CASE("faults [other-count]: a rank passes other counts at one position: mismatch_error naming it") {
    run_disagreements(deviation::other_count, "other-count", {20});
  }

  TEST_CASE("faults [skip-middle]: a rank skips a call in the middle: mismatch_error (or deadlock_error) naming it") {
    run_disagreements(deviation::skipped_call, "skip-middle");
  }

  // Found by faults [other-count]: the rank that raises the
  // original error withdraws its posted descriptors before the team is marked failed; a
  // receiver that meets one in between raises a remote_failure of its own ("sender withdrew
  // its message"), which may be recorded first and replace the original. The window is short:
  // oversubscription (p = 31) and descriptors for every message (eager_limit 0) make it show
  // about once in 1000 runs under load (never on a quiet machine), so this repeats one such
  // call many times: a cheap guard, not a reliable reproducer.
  TEST_CASE(
      "faults [withdrawn-descriptor]: a count mismatch with every message by descriptor: run() rethrows the "
      "mismatch_error") {
    team_options options = team_options::from_environment();
    options.eager_limit = 0;
    options.deadlock_timeout = 150ms;
    const int runs = campaign_from_environment(500).count;
    int lost = 0;
    std::string example;
    for (int i = 0; i < runs; ++i) {
      std::exception_ptr thrown;
      run_with_watchdog(fmt::format("test_faults [withdrawn-descriptor] run {}", i), [&] {
        try {
          run(
              31,
              [](comm& c) {
                const std::size_t n = c.rank() == 25 ? 15 : 14;  // rank 25 passes another count
                std::vector<std::int32_t> in(n, c.rank()), out(n * static_cast<std::size_t>(c.size()));
                c.allgather(in, out, {"mesh2d"});
              },
              options);
        } catch (...) {
          thrown = std::current_exception();
        }
      });
      if (caught_as<mismatch_error>(thrown)) continue;
      if (lost++ == 0) example = text_of(thrown);
    }
    std::cout << fmt::format("faults [withdrawn-descriptor]: {} of {} runs rethrew the original mismatch_error\n",
                             runs - lost, runs);
    CHECK_MESSAGE(lost == 0, lost, " of ", runs, " runs lost the original mismatch_error, e.g. run() threw: ", example);
  }

}  // TEST_SUITE
