// Shared by test_stress and test_faults: seeded random plans of collective calls and the
// code that plays them on a team.
//
// A plan is generated once per seed, before any rank starts, and every rank reads the same
// plan, so all ranks make the same calls in the same order. It covers every collective,
// every registered algorithm whose preconditions accept the call (asked of the registry,
// so new algorithms are covered without editing this file) and "auto", random roots,
// counts with zeros and irregular v-counts (with and without displacements), elements of
// 1 to 16 bytes, builtin and user operators (commutative and not), the typed API and the
// general entry point, blocking calls and requests completed in random orders (wait, test
// loops, wait_all, wait_any, test_all, destruction), and random team options.
//
// Inputs and expected outputs come from ranklab/check.hpp's make_test_data: a sequential
// reference written from the MPI semantics, independent of the schedules and executors;
// outputs are compared element by element here.
//
// Also here: the campaign settings and a watchdog that turns a hung team into a prompt test
// failure. Environment:
//   RANKLAB_STRESS_SEEDS        seeds per test case (defaults: per case, a tenth under sanitizers)
//   RANKLAB_STRESS_FIRST_SEED   first seed (1)
//   RANKLAB_STRESS_VERBOSE=1    print every plan before it runs
//   RANKLAB_STRESS_WATCHDOG_S   seconds a trial may take before it counts as hung (30; 120
//                               under sanitizers)
//   RANKLAB_STRESS_FINDINGS     a file where hangs are recorded as well (none by default)
#pragma once
#include <doctest/doctest.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <numeric>
#include <random>
#include <ranges>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "ranklab/check.hpp"
#include "ranklab/ranklab.hpp"

namespace ranklab::stress {

using clock = std::chrono::steady_clock;

// ---- campaign settings ----------------------------------------------------------------------

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool sanitized_build = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr bool sanitized_build = true;
#else
inline constexpr bool sanitized_build = false;
#endif
#else
inline constexpr bool sanitized_build = false;
#endif

inline std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// The seeds of one campaign: first_seed, first_seed + 1, ... (`count` of them), then the
// regression seeds (seeds that once found a runtime bug) not among them.
struct campaign {
  std::uint64_t first_seed = 1;
  int count = 0;
  std::vector<std::uint64_t> regressions;

  std::vector<std::uint64_t> seeds() const {
    std::vector<std::uint64_t> out;
    for (int i = 0; i < count; ++i) out.push_back(first_seed + static_cast<std::uint64_t>(i));
    for (std::uint64_t s : regressions)
      if (s < first_seed || s >= first_seed + static_cast<std::uint64_t>(count)) out.push_back(s);
    return out;
  }
};

// RANKLAB_STRESS_SEEDS (how many seeds) and RANKLAB_STRESS_FIRST_SEED override the
// defaults. Sanitizers make the runtime 5-20x slower, so their default is a tenth. The
// regression seeds run too, unless RANKLAB_STRESS_FIRST_SEED picks the seeds (a rerun).
inline campaign campaign_from_environment(int default_seeds, std::vector<std::uint64_t> regressions = {}) {
  const int scaled = sanitized_build ? std::max(1, default_seeds / 10) : default_seeds;
  const bool rerun = std::getenv("RANKLAB_STRESS_FIRST_SEED") != nullptr;
  return {env_number("RANKLAB_STRESS_FIRST_SEED", 1),
          static_cast<int>(env_number("RANKLAB_STRESS_SEEDS", static_cast<std::uint64_t>(scaled))),
          rerun ? std::vector<std::uint64_t>{} : std::move(regressions)};
}

// How many seeds ran clean, printed once per campaign (stdout, one line), failing seeds
// listed so that each can be rerun alone.
struct tally {
  std::string label;  // "stress [blocking]"
  campaign range;
  clock::time_point started = clock::now();
  std::vector<std::uint64_t> failing;

  void report() const {
    const double seconds = std::chrono::duration<double>(clock::now() - started).count();
    const std::size_t total = range.seeds().size();
    const std::size_t clean = total - failing.size();
    const std::string regressions =
        range.regressions.empty() ? "" : fmt::format(", regression seeds {}", fmt::join(range.regressions, ","));
    if (failing.empty())
      std::cout << fmt::format("{}: {} seeds clean (first seed {}{}) in {:.1f} s\n", label, clean, range.first_seed,
                               regressions, seconds);
    else
      std::cout << fmt::format("{}: {} of {} seeds clean (first seed {}{}) in {:.1f} s; failing seeds: {}\n", label,
                               clean, total, range.first_seed, regressions, seconds, fmt::join(failing, ", "));
    std::cout.flush();
  }
};

// The command line that reruns one seed of a test case.
inline std::string rerun_command(std::string_view executable, std::string_view case_filter, std::uint64_t seed) {
  return fmt::format("RANKLAB_STRESS_FIRST_SEED={} RANKLAB_STRESS_SEEDS=1 <build>/tests/{} -tc='{}'", seed, executable,
                     case_filter);
}

// ---- findings and the watchdog ---------------------------------------------------------------

// A hang leaves no trace once the process has exited except what it printed: the failure
// goes to stdout (ctest keeps it), and also to the file RANKLAB_STRESS_FINDINGS names, if
// any, for long campaigns run by hand.
inline void record_finding(const std::string& text) {
  std::cout << text << std::endl;
  const char* path = std::getenv("RANKLAB_STRESS_FINDINGS");
  if (path && *path) std::ofstream(path, std::ios::app) << text << "\n";
}

inline std::chrono::seconds watchdog_limit() {
  return std::chrono::seconds(env_number("RANKLAB_STRESS_WATCHDOG_S", sanitized_build ? 120 : 30));
}

// Runs trial() on a thread of its own and returns its result (or rethrows its exception).
// A team that hangs can be neither joined nor cancelled, so when the trial outlives the
// limit the hang is recorded (record_finding) and reported, and the process exits at
// once: ctest then reports a failure promptly instead of a stuck test.
template <class F>
std::invoke_result_t<F&> run_with_watchdog(const std::string& trial_name, F trial) {
  using result = std::invoke_result_t<F&>;
  std::packaged_task<result()> task(std::move(trial));
  std::future<result> outcome = task.get_future();
  std::thread worker(std::move(task));
  if (outcome.wait_for(watchdog_limit()) == std::future_status::timeout) {
    const std::string text = fmt::format("- HANG (watchdog, {} s, {:%Y-%m-%d %H:%M}): {}", watchdog_limit().count(),
                                         fmt::localtime(std::time(nullptr)), trial_name);
    record_finding(text);
    FAIL_CHECK(text);
    std::cout.flush();
    std::fflush(nullptr);
    std::_Exit(3);
  }
  worker.join();
  return outcome.get();
}

// ---- elements and operators --------------------------------------------------------------

struct rgb {  // a 3-byte element: odd sizes and unaligned blocks; moved, never reduced
  std::uint8_t c[3];
};

enum class element : std::uint8_t { int8, uint8, int16, int32, uint32, int64, uint64, float32, float64, rgb, matrix };
inline constexpr element all_elements[] = {element::int8,    element::uint8, element::int16,  element::int32,
                                           element::uint32,  element::int64, element::uint64, element::float32,
                                           element::float64, element::rgb,   element::matrix};

// Calls f(std::type_identity<T>{}) with the C++ type of `e`.
template <class F>
decltype(auto) with_element(element e, F&& f) {
  switch (e) {
    case element::int8:
      return f(std::type_identity<std::int8_t>{});
    case element::uint8:
      return f(std::type_identity<std::uint8_t>{});
    case element::int16:
      return f(std::type_identity<std::int16_t>{});
    case element::int32:
      return f(std::type_identity<std::int32_t>{});
    case element::uint32:
      return f(std::type_identity<std::uint32_t>{});
    case element::int64:
      return f(std::type_identity<std::int64_t>{});
    case element::uint64:
      return f(std::type_identity<std::uint64_t>{});
    case element::float32:
      return f(std::type_identity<float>{});
    case element::float64:
      return f(std::type_identity<double>{});
    case element::rgb:
      return f(std::type_identity<rgb>{});
    case element::matrix:
      return f(std::type_identity<matrix2x2>{});
  }
  throw std::logic_error("unknown element");
}

inline datatype type_of(element e) {
  return with_element(e, [](auto t) { return ranklab::datatype_of<typename decltype(t)::type>(); });
}

inline std::string_view element_name(element e) {
  switch (e) {
    case element::rgb:
      return "rgb(3 bytes)";
    case element::matrix:
      return "matrix2x2(16 bytes)";
    default:
      return name(type_of(e).kind);
  }
}

// User operators (callables at namespace scope, so they outlive every op however make_op
// holds them). Integer sums wrap (through unsigned arithmetic, as the reference does).
inline constexpr auto wrapping_add_i32 = [](std::int32_t a, std::int32_t b) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
};
inline constexpr auto wrapping_add_i64 = [](std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
};
// An affine map x -> m*x + a (mod 2^32) packed as m << 32 | a; f (+) g applies f, then g.
// Composition is associative but not commutative, so any reordering of operands shows.
inline constexpr auto affine_then = [](std::uint64_t f, std::uint64_t g) {
  const auto fm = static_cast<std::uint32_t>(f >> 32), fa = static_cast<std::uint32_t>(f);
  const auto gm = static_cast<std::uint32_t>(g >> 32), ga = static_cast<std::uint32_t>(g);
  return std::uint64_t{static_cast<std::uint32_t>(gm * fm)} << 32 | static_cast<std::uint32_t>(gm * fa + ga);
};

struct reduction {
  std::string_view name;
  op o;
};

// The operators that apply to `e`. make_test_data picks values that keep every builtin
// result exact in any order (small integers for float sums, +-1 for float products), so
// floats are safe too; the non-commutative operators check the rank order of reductions.
inline std::vector<reduction> reductions_for(element e) {
  std::vector<reduction> out;
  const bool floating = e == element::float32 || e == element::float64;
  const bool integral = !floating && e != element::rgb && e != element::matrix;
  if (integral || floating)
    out.insert(out.end(), {{"sum", ops::sum},
                           {"prod", ops::prod},
                           {"min", ops::min},
                           {"max", ops::max},
                           {"land", ops::land},
                           {"lor", ops::lor}});
  if (integral) out.insert(out.end(), {{"band", ops::band}, {"bor", ops::bor}, {"bxor", ops::bxor}});
  if (e == element::int32)
    out.push_back({"user wrapping add (commutative)", make_op<std::int32_t>(wrapping_add_i32, true)});
  if (e == element::int64)
    out.push_back({"user wrapping add (declared non-commutative)", make_op<std::int64_t>(wrapping_add_i64, false)});
  if (e == element::uint64)
    out.push_back({"user affine composition (non-commutative)", make_op<std::uint64_t>(affine_then, false)});
  if (e == element::matrix) out.push_back({"matrix2x2 product (non-commutative)", matrix2x2_product()});
  return out;
}

// ---- plans -------------------------------------------------------------------------------

struct call_spec {
  call c;  // c.choice.name is a registry name or "auto": static storage, safe to copy
  element elem = element::int32;
  std::string_view op_name = "-";
  bool nonblocking = false;
  bool in_place = false;       // allreduce(inout, ...)
  bool general_entry = false;  // comm::run_collective / start_collective instead of the typed API
  std::uint64_t data_seed = 0;
};

inline std::string describe(const call_spec& s) {
  std::string text =
      fmt::format("{} algo={} type={}", ranklab::describe(s.c.args), s.c.choice.name, element_name(s.elem));
  if (is_reduction(s.c.args.coll)) text += fmt::format(" op={}", s.op_name);
  if (has_vector_counts(s.c.args.coll)) text += fmt::format(" counts={}", fmt::join(s.c.args.counts, ","));
  if (!s.c.args.displs.empty()) text += fmt::format(" displs={}", fmt::join(s.c.args.displs, ","));
  if (s.nonblocking) text += " nonblocking";
  if (s.in_place) text += " in-place";
  if (s.general_entry) text += " via run_collective/start_collective";
  return text;
}

enum class completion : std::uint8_t { wait_each, test_loop, wait_all, wait_any, test_all_loop, destroy };

inline std::string_view completion_name(completion c) {
  constexpr std::string_view names[] = {"wait each", "test loop",     "wait_all",
                                        "wait_any",  "test_all loop", "destroy (the destructor waits)"};
  return names[static_cast<std::size_t>(c)];
}

struct step {
  enum class kind : std::uint8_t {
    issue,     // start calls[call]: blocking, or a request kept until a complete step
    complete,  // finish the requests of `requests` in a rank-specific order
    raise,     // throw planned_failure (test_faults)
    exchange,  // a point-to-point sendrecv round: to rank + shift, from rank - shift
  };
  kind what = kind::issue;
  std::size_t call = 0;
  completion how = completion::wait_each;
  std::vector<std::size_t> requests;
  std::uint64_t order_seed = 0;  // each rank shuffles `requests` with this seed and its rank
  int shift = 0;                 // exchange
  std::uint64_t count = 0;       // exchange: elements (uint64) each rank sends
};

struct plan {
  std::uint64_t seed = 0;
  int p = 1;
  team_options options;
  std::vector<call_spec> calls;
  std::vector<step> steps;
  // Algorithms whose builder refused a call the registry said they accept (a finding).
  std::vector<std::string> rejected;
};

inline std::string describe(const plan& pl) {
  std::string text = fmt::format(
      "plan of seed {}: p={} eager_limit={} progress_thread={} spin_polls={} yields={} "
      "trace={}",
      pl.seed, pl.p, pl.options.eager_limit, pl.options.progress_thread, pl.options.spin_polls, pl.options.yields,
      pl.options.trace);
  for (std::size_t i = 0; i < pl.steps.size(); ++i) {
    const step& s = pl.steps[i];
    if (s.what == step::kind::issue)
      text += fmt::format("\n  step {}: call {}: {}", i, s.call, describe(pl.calls[s.call]));
    else if (s.what == step::kind::complete)
      text +=
          fmt::format("\n  step {}: complete calls {} by {}", i, fmt::join(s.requests, ","), completion_name(s.how));
    else if (s.what == step::kind::exchange)
      text += fmt::format("\n  step {}: sendrecv to rank + {}, {} x uint64", i, s.shift, s.count);
    else
      text += fmt::format("\n  step {}: throw", i);
  }
  return text;
}

// Inserts an issue step for `c` before step `at` (at == steps.size(): at the end); returns
// the call's index.
inline std::size_t add_call(plan& pl, const call_spec& c, std::size_t at) {
  pl.calls.push_back(c);
  step s;
  s.call = pl.calls.size() - 1;
  pl.steps.insert(pl.steps.begin() + static_cast<std::ptrdiff_t>(at), s);
  return s.call;
}

// Requests issued before step `at` and not completed before it.
inline std::size_t outstanding_before(const plan& pl, std::size_t at) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < at && i < pl.steps.size(); ++i) {
    const step& s = pl.steps[i];
    if (s.what == step::kind::issue && pl.calls[s.call].nonblocking) ++n;
    if (s.what == step::kind::complete) n -= s.requests.size();
  }
  return n;
}

// What a generator produces; each test case has its own shape.
struct plan_shape {
  int min_calls = 10, max_calls = 30;
  int min_p = 1;
  double nonblocking_share = 0;         // probability that a call is an i-call
  std::vector<collective> collectives;  // empty: all of them
  double zero_count_share = 0.15;       // counts (and v-count entries) that are 0
  bool vary_options = true;             // random eager limit, progress thread, waiting
  double completion_share = 0.3;        // probability of a completion step after a call
  double exchange_share = 0;            // probability of a sendrecv round after a call
  std::size_t max_outstanding = 8;      // more and the next step completes some
};

inline std::vector<collective> all_collectives() {
  std::vector<collective> out;
  for (int c = 0; c < collective_count; ++c) out.push_back(static_cast<collective>(c));
  return out;
}

class plan_generator {
 public:
  plan_generator(std::uint64_t seed, plan_shape shape) : seed_(seed), shape_(std::move(shape)), rng_(seed) {
    if (shape_.collectives.empty()) shape_.collectives = all_collectives();
  }

  plan generate() {
    plan pl;
    pl.seed = seed_;
    pl.p = pick_p(shape_.min_p);
    pl.options = random_options();
    const int n = int_in(shape_.min_calls, shape_.max_calls);
    for (int i = 0; i < n; ++i) {
      call_spec c = make_call(pl.p, pick(shape_.collectives), /*positive_counts=*/false);
      c.nonblocking = chance(shape_.nonblocking_share);
      pl.calls.push_back(c);
    }
    pl.steps = interleave_completions(pl.calls);
    pl.rejected = std::move(rejected_);
    return pl;
  }

  // A call of collective `coll` on p ranks, blocking, with a random root, element type,
  // operator, counts (all > 0 when positive_counts) and algorithm.
  call_spec make_call(int p, collective coll, bool positive_counts) {
    const int root = is_rooted(coll) ? int_in(0, p - 1) : 0;
    const element e = pick_element(coll);
    const reduction r = is_reduction(coll) ? pick(reductions_for(e)) : reduction{"-", ops::sum};
    return build_call(p, coll, root, e, r, positive_counts);
  }

  // The same with a given element type and operator (a reduction).
  call_spec make_reduction_call(int p, collective coll, element e, const reduction& r, bool positive_counts) {
    const int root = is_rooted(coll) ? int_in(0, p - 1) : 0;
    return build_call(p, coll, root, e, r, positive_counts);
  }

  // The same call with one count changed (v-collectives: one rank's entry).
  call_spec with_other_count(call_spec s) {
    coll_args& a = s.c.args;
    if (has_vector_counts(a.coll))
      a.counts[int_in(0, static_cast<int>(a.counts.size()) - 1)] += int_in(1, 3);
    else
      a.count += int_in(1, 3);
    if (!a.displs.empty()) a.displs = scattered_displacements(a.counts);
    return s;
  }

  // The same call with another root (p >= 2).
  call_spec with_other_root(call_spec s) {
    s.c.args.root = (s.c.args.root + int_in(1, s.c.args.p - 1)) % s.c.args.p;
    return s;
  }

  int pick_p(int min_p) {
    // 1, 2, primes, 2^k - 1, 2^k, 2^k + 1 up to 17; rarely a large oversubscribed team.
    static constexpr int usual[] = {1, 2, 3, 4, 5, 7, 8, 9, 11, 13, 15, 16, 17};
    static constexpr int large[] = {31, 32, 33};
    int p = 0;
    do p = chance(0.04) ? pick(std::span(large)) : pick(std::span(usual));
    while (p < min_p);
    return p;
  }

  int int_in(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::uint64_t u64_in(std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng_);
  }
  bool chance(double probability) { return std::uniform_real_distribution<double>(0, 1)(rng_) < probability; }
  template <class R>
  std::ranges::range_value_t<R> pick(const R& range) {
    return range[static_cast<std::size_t>(int_in(0, static_cast<int>(std::size(range)) - 1))];
  }
  std::uint64_t next() { return rng_(); }

 private:
  // Every rank's largest buffer stays below this (p = 33 alltoall included).
  static constexpr std::uint64_t buffer_budget_bytes = 192 * 1024;

  call_spec build_call(int p, collective coll, int root, element e, const reduction& r, bool positive_counts) {
    call_spec s;
    coll_args& a = s.c.args;
    a.coll = coll;
    a.p = p;
    a.root = root;
    s.elem = e;
    s.c.type = type_of(e);
    a.elem_size = s.c.type.size;
    s.c.reduction = r.o;
    s.op_name = r.name;
    a.commutative = s.c.reduction.commutative;
    set_counts(s, positive_counts);
    choose_algorithm(s);
    s.general_entry = chance(0.2);
    s.in_place = coll == collective::allreduce && !s.general_entry && chance(0.3);
    s.data_seed = rng_();
    return s;
  }

  team_options random_options() {
    team_options o = team_options::from_environment();
    if (!shape_.vary_options) return o;
    static constexpr std::size_t eager_limits[] = {0, 64, 2048, 2048, 4096};
    o.eager_limit = pick(std::span(eager_limits));  // 0 and 64: nearly everything by descriptor
    o.progress_thread = chance(0.12);
    if (o.progress_thread) {  // a threads-mode feature, whatever the environment asks for
      o.execution = execution_mode::threads;
      o.seed.reset();
    }
    if (chance(0.15)) o.spin_polls = o.yields = 0;  // straight to the futex: the sleep and wake paths
    o.trace = chance(0.05);
    return o;
  }

  element pick_element(collective coll) {
    for (;;) {
      const element e = pick(std::span(all_elements));
      if (!is_reduction(coll) || !reductions_for(e).empty()) return e;
    }
  }

  // Blocks of one buffer: the largest per-rank buffer holds `blocks` blocks of `count`.
  std::uint64_t max_block(const coll_args& a) const {
    const bool one_block = a.coll == collective::bcast || a.coll == collective::reduce ||
                           a.coll == collective::allreduce || a.coll == collective::scan ||
                           a.coll == collective::exscan;
    const std::uint64_t blocks = one_block ? 1 : static_cast<std::uint64_t>(a.p);
    return std::max<std::uint64_t>(1, buffer_budget_bytes / (a.elem_size * blocks));
  }

  std::uint64_t pick_count(std::uint64_t limit, bool positive) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng_);
    std::uint64_t n = 0;
    if (!positive && u < shape_.zero_count_share)
      n = 0;
    else if (u < 0.55)
      n = u64_in(1, 16);  // express lane and small eager messages
    else if (u < 0.88)
      n = u64_in(17, 700);  // eager and descriptor, depending on the element
    else
      n = u64_in(701, 6000);  // descriptors, several blocks per algorithm
    return std::min(n, limit);
  }

  std::vector<std::uint64_t> pick_vector_counts(std::size_t n, std::uint64_t limit, bool positive) {
    std::vector<std::uint64_t> v(n);
    const int pattern = positive ? 0 : int_in(0, 9);
    if (pattern <= 5) {  // irregular, zeros included
      for (auto& x : v) x = pick_count(limit, positive);
    } else if (pattern == 6) {  // all zero
    } else if (pattern == 7) {  // a single non-empty block
      v[static_cast<std::size_t>(int_in(0, static_cast<int>(n) - 1))] =
          std::max<std::uint64_t>(1, pick_count(limit, true));
    } else {  // regular
      std::fill(v.begin(), v.end(), pick_count(limit, positive));
    }
    return v;
  }

  // Blocks in a random order with random gaps: a layout MPI allows, not the packed one.
  std::vector<std::uint64_t> scattered_displacements(const std::vector<std::uint64_t>& counts) {
    std::vector<std::size_t> order(counts.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::shuffle(order.begin(), order.end(), rng_);
    std::vector<std::uint64_t> displs(counts.size());
    std::uint64_t at = 0;
    for (std::size_t j : order) {
      at += u64_in(0, 3);
      displs[j] = at;
      at += counts[j];
    }
    return displs;
  }

  void set_counts(call_spec& s, bool positive) {
    coll_args& a = s.c.args;
    if (a.coll == collective::barrier) return;
    const std::uint64_t limit = max_block(a);
    if (!has_vector_counts(a.coll)) {
      a.count = pick_count(limit, positive);
      return;
    }
    const auto p = static_cast<std::size_t>(a.p);
    a.counts = pick_vector_counts(a.coll == collective::alltoallv ? p * p : p, limit, positive);
    const bool displaceable =
        a.coll == collective::allgatherv || a.coll == collective::scatterv || a.coll == collective::gatherv;
    if (displaceable && chance(0.4)) a.displs = scattered_displacements(a.counts);
  }

  algo_params random_params(int p) {
    algo_params prm;
    int levels = 0;
    while ((1 << levels) < p) ++levels;
    prm.blocks = int_in(1, 8);
    prm.radix = int_in(2, 6);
    prm.removed_steps = int_in(-1, levels);
    prm.segment = u64_in(1, 64);
    return prm;
  }

  // True when the algorithm the call resolves to builds every rank's schedule; else the
  // builder's complaint in `why`.
  static bool builds(const call_spec& s, std::string& why) {
    try {
      build_all(select_algorithm(s.c.args, s.c.type.size, s.c.choice.name), s.c.args);
      return true;
    } catch (const usage_error& e) {
      why = e.what();
      return false;
    }
  }

  // A random algorithm among those the registry says accept the call, or "auto" (what the
  // selection table picks). Random parameters now and then (blocks, radix, segment, r).
  void choose_algorithm(call_spec& s) {
    coll_args& a = s.c.args;
    std::vector<std::string_view> candidates{"auto"};
    for (const algorithm* x : registry::for_collective(a.coll))
      if (meets_preconditions(*x, a)) candidates.push_back(x->name);
    std::shuffle(candidates.begin(), candidates.end(), rng_);  // the first that builds wins
    if (chance(0.3)) a.params = random_params(a.p);
    s.c.choice.params = a.params;
    for (std::string_view candidate : candidates) {
      s.c.choice.name = candidate;
      std::string why;
      if (builds(s, why)) return;
      rejected_.push_back(fmt::format("{} with algorithm {}: {}", ranklab::describe(a), candidate, why));
    }
    throw std::logic_error("no algorithm builds " + ranklab::describe(a));
  }

  // Steps: every call issued in order; after an issue, now and then (always when too many
  // are outstanding) a random subset of the outstanding requests is completed in a random
  // way; at the end the rest.
  std::vector<step> interleave_completions(const std::vector<call_spec>& calls) {
    std::vector<step> steps;
    std::vector<std::size_t> outstanding;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      step s;
      s.call = i;
      steps.push_back(s);
      if (calls[i].nonblocking) outstanding.push_back(i);
      if (!outstanding.empty() && (chance(shape_.completion_share) || outstanding.size() >= shape_.max_outstanding))
        steps.push_back(completion_step(take_some(outstanding)));
      // (asked only when wanted: shapes without exchanges keep their plans seed for seed)
      if (shape_.exchange_share > 0 && chance(shape_.exchange_share)) steps.push_back(exchange_step(calls[i].c.args.p));
    }
    if (!outstanding.empty()) steps.push_back(completion_step(std::move(outstanding)));
    return steps;
  }

  std::vector<std::size_t> take_some(std::vector<std::size_t>& outstanding) {
    std::vector<std::size_t> taken, kept;
    for (std::size_t i : outstanding) (chance(0.5) ? taken : kept).push_back(i);
    if (taken.empty()) {
      taken.push_back(kept.back());
      kept.pop_back();
    }
    outstanding = std::move(kept);
    return taken;
  }

  // Sizes for the express lane (<= 40 bytes), inline messages and descriptors.
  step exchange_step(int p) {
    step s;
    s.what = step::kind::exchange;
    s.shift = int_in(0, p - 1);  // 0: a round to oneself
    static constexpr std::uint64_t counts[] = {0, 1, 5, 6, 64, 255, 256, 257, 600, 5000};
    s.count = pick(std::span(counts));
    s.order_seed = rng_();
    return s;
  }

  step completion_step(std::vector<std::size_t> requests) {
    step s;
    s.what = step::kind::complete;
    s.how = static_cast<completion>(int_in(0, static_cast<int>(completion::destroy)));
    s.requests = std::move(requests);
    s.order_seed = rng_();
    return s;
  }

  std::uint64_t seed_;
  plan_shape shape_;
  std::mt19937_64 rng_;
  std::vector<std::string> rejected_;
};

// ---- playing a plan ------------------------------------------------------------------------

// What a `raise` step throws: a type no library code knows, so run() must hand back this
// very object. Carries the moment it was thrown, to time how fast the others are released.
struct planned_failure : std::exception {
  int rank;
  std::size_t at_step;
  clock::time_point thrown_at = clock::now();
  std::string text;
  planned_failure(int r, std::uint64_t seed, std::size_t s)
      : rank(r), at_step(s), text(fmt::format("planned failure of rank {} at step {} (seed {})", r, s, seed)) {}
  const char* what() const noexcept override { return text.c_str(); }
};

// A broken invariant seen inside a rank (doctest assertions stay on the test's thread).
struct play_violation : std::logic_error {
  using std::logic_error::logic_error;
};

// True for a reduction over zero elements: every buffer of every rank is empty.
inline bool empty_reduction(const call& c) {
  if (!is_reduction(c.args.coll)) return false;
  if (c.args.coll == collective::reduce_scatter)
    return std::all_of(c.args.counts.begin(), c.args.counts.end(), [](std::uint64_t n) { return n == 0; });
  return c.args.count == 0;
}

// Inputs, pre-filled outputs and expected outputs of every call (ranklab/check.hpp). Empty
// reductions are built here directly (nothing to compute).
inline std::vector<test_data> make_data(const plan& pl) {
  std::vector<test_data> data;
  data.reserve(pl.calls.size());
  for (const call_spec& c : pl.calls) {
    if (empty_reduction(c.c)) {
      const std::vector<std::vector<std::byte>> none(static_cast<std::size_t>(pl.p));
      data.push_back(test_data{none, none, none});
    } else {
      data.push_back(make_test_data(c.c, c.data_seed));
    }
  }
  return data;
}

template <class T>
std::span<T> elements_of(std::vector<std::byte>& bytes) {
  return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
}

// The call through the typed API: the same arguments for the blocking form and the i-form.
template <class T>
request issue_typed(comm& cm, const call_spec& s, std::span<const T> in, std::span<T> out) {
  const coll_args& a = s.c.args;
  const algo how{s.c.choice.name, s.c.choice.params};
  const op& o = s.c.reduction;
  const comm::counts_view counts(a.counts), displs(a.displs);
#define RANKLAB_STRESS_ISSUE(NAME, ...) (s.nonblocking ? cm.i##NAME(__VA_ARGS__) : (cm.NAME(__VA_ARGS__), request{}))
  switch (a.coll) {
    case collective::barrier:
      return RANKLAB_STRESS_ISSUE(barrier, how);
    case collective::bcast:
      return RANKLAB_STRESS_ISSUE(bcast, out, a.root, how);
    case collective::reduce:
      return RANKLAB_STRESS_ISSUE(reduce, in, out, o, a.root, how);
    case collective::allreduce:
      if (s.in_place) {
        std::copy(in.begin(), in.end(), out.begin());
        return RANKLAB_STRESS_ISSUE(allreduce, out, o, how);
      }
      return RANKLAB_STRESS_ISSUE(allreduce, in, out, o, how);
    case collective::scan:
      return RANKLAB_STRESS_ISSUE(scan, in, out, o, how);
    case collective::exscan:
      return RANKLAB_STRESS_ISSUE(exscan, in, out, o, how);
    case collective::allgather:
      return RANKLAB_STRESS_ISSUE(allgather, in, out, how);
    case collective::reduce_scatter_block:
      return RANKLAB_STRESS_ISSUE(reduce_scatter_block, in, out, o, how);
    case collective::scatter:
      return RANKLAB_STRESS_ISSUE(scatter, in, out, a.root, how);
    case collective::gather:
      return RANKLAB_STRESS_ISSUE(gather, in, out, a.root, how);
    case collective::alltoall:
      return RANKLAB_STRESS_ISSUE(alltoall, in, out, how);
    case collective::allgatherv:
      return RANKLAB_STRESS_ISSUE(allgatherv, in, out, counts, displs, how);
    case collective::reduce_scatter:
      return RANKLAB_STRESS_ISSUE(reduce_scatter, in, out, counts, o, how);
    case collective::scatterv:
      return RANKLAB_STRESS_ISSUE(scatterv, in, out, counts, a.root, displs, how);
    case collective::gatherv:
      return RANKLAB_STRESS_ISSUE(gatherv, in, out, counts, a.root, displs, how);
    case collective::alltoallv:
      return RANKLAB_STRESS_ISSUE(alltoallv, in, out, counts, how);
  }
#undef RANKLAB_STRESS_ISSUE
  throw play_violation("unknown collective");
}

// Starts (or runs, if blocking) one call on this rank; returns its request or an empty one.
inline request issue(comm& cm, const call_spec& s, test_data& d) {
  std::vector<std::byte>& in = d.in[static_cast<std::size_t>(cm.rank())];
  std::vector<std::byte>& out = d.out[static_cast<std::size_t>(cm.rank())];
  if (s.general_entry) {
    const void* in_ptr = in.empty() ? nullptr : in.data();
    void* out_ptr = out.empty() ? nullptr : out.data();
    if (s.nonblocking) return cm.start_collective(s.c, in_ptr, out_ptr);
    cm.run_collective(s.c, in_ptr, out_ptr);
    return {};
  }
  return with_element(s.elem, [&](auto t) {
    using T = typename decltype(t)::type;
    return issue_typed<T>(cm, s, elements_of<T>(in), elements_of<T>(out));
  });
}

// Polls until poll() says done; after 50 ms of polling, waits instead, so that a deadlock a
// polling rank is part of is reported even by a detector that counts only waiting ranks as
// blocked (as the runtime did before f42decc); the fault trials must fail, not hang. Yields
// between polls: on 2 cores a spinning rank starves the ranks it waits for.
template <class Poll, class Wait>
void poll_then_wait(Poll poll, Wait wait) {
  const auto give_up = clock::now() + std::chrono::milliseconds(50);
  while (!poll()) {
    if (clock::now() > give_up) return wait();
    std::this_thread::yield();
  }
}

// Finishes the step's requests the step's way, in an order of this rank's own.
inline void complete(std::vector<request>& requests, const step& s, int rank) {
  std::vector<std::size_t> order = s.requests;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(s.order_seed ^ (0x9E3779B97F4A7C15ull * (rank + 1u))));
  std::vector<request> batch;
  for (std::size_t i : order) batch.push_back(std::move(requests[i]));
  switch (s.how) {
    case completion::wait_each:
      for (request& r : batch) r.wait();
      break;
    case completion::test_loop:
      for (request& r : batch) poll_then_wait([&] { return r.test(); }, [&] { r.wait(); });
      break;
    case completion::wait_all:
      wait_all(batch);
      break;
    case completion::wait_any:
      for (std::size_t i = wait_any(batch); i < batch.size(); i = wait_any(batch)) {
        if (!batch[i].done()) throw play_violation("wait_any returned an unfinished request");
        batch[i] = request{};  // invalid: the next wait_any looks at the others
      }
      break;
    case completion::test_all_loop:
      poll_then_wait([&] { return test_all(batch); }, [&] { wait_all(batch); });
      break;
    case completion::destroy:
      batch.clear();
      break;  // each destructor waits for its request
  }
  for (const request& r : batch)
    if (r.valid() && !r.done())
      throw play_violation(fmt::format("a request is not done after {}", completion_name(s.how)));
}

// The step's point-to-point round. Every value names its sender, step and index, so a
// message delivered to the wrong rank or round, or mixed with a collective's, shows.
inline void exchange(comm& cm, const step& s) {
  const int p = cm.size(), to = (cm.rank() + s.shift) % p, from = (cm.rank() - s.shift + p) % p;
  auto value = [&](int sender, std::uint64_t i) { return s.order_seed ^ (std::uint64_t(sender) << 48) ^ i; };
  std::vector<std::uint64_t> out(s.count), in(s.count + 3);  // a receive buffer may be larger
  for (std::uint64_t i = 0; i < s.count; ++i) out[i] = value(cm.rank(), i);
  const std::size_t got = cm.sendrecv(to, out, from, in);
  if (got != s.count)
    throw play_violation(
        fmt::format("rank {}: sendrecv from rank {} returned {} elements, sent {}", cm.rank(), from, got, s.count));
  for (std::uint64_t i = 0; i < s.count; ++i)
    if (in[i] != value(from, i))
      throw play_violation(fmt::format("rank {}: sendrecv from rank {}: element {} is {:#x}, expected {:#x}", cm.rank(),
                                       from, i, in[i], value(from, i)));
}

// One rank's part of a plan: the steps in order. (A test's user operator that misbehaves
// on one rank only asks ranklab::this_rank(), which is -1 while the reference is computed:
// a thread_local would not tell fibers apart.)
inline void play(comm& cm, const plan& pl, std::vector<test_data>& data) {
  std::vector<request> requests(pl.calls.size());
  for (std::size_t i = 0; i < pl.steps.size(); ++i) {
    const step& s = pl.steps[i];
    switch (s.what) {
      case step::kind::issue:
        requests[s.call] = issue(cm, pl.calls[s.call], data[s.call]);
        break;
      case step::kind::complete:
        complete(requests, s, cm.rank());
        break;
      case step::kind::raise:
        throw planned_failure(cm.rank(), pl.seed, i);
      case step::kind::exchange:
        exchange(cm, s);
        break;
    }
  }
}

// "" when rank r's output of the call equals the reference; else the first wrong element.
// (Not check.hpp's compare(): that one passes the null data() of empty buffers to memcmp,
// which UBSan reports.)
inline std::string wrong_element(const call_spec& c, const test_data& d, std::size_t r) {
  const std::vector<std::byte>& got = d.out[r];
  const std::vector<std::byte>& want = d.expected[r];
  if (got.size() != want.size())
    return fmt::format("rank {}: out has {} bytes, expected {}", r, got.size(), want.size());
  const auto [g, w] = std::mismatch(got.begin(), got.end(), want.begin());
  if (g == got.end()) return {};
  const std::size_t es = c.c.type.size, at = static_cast<std::size_t>(g - got.begin()) / es * es;
  return fmt::format("rank {}: element {} is {:02x}, expected {:02x}", r, at / es,
                     fmt::join(got.begin() + at, got.begin() + at + es, ""),
                     fmt::join(want.begin() + at, want.begin() + at + es, ""));
}

// "" when every element of every call's output equals the reference; else the first
// difference and the call it is in.
inline std::string first_difference(const plan& pl, const std::vector<test_data>& data) {
  for (std::size_t i = 0; i < pl.calls.size(); ++i)
    for (std::size_t r = 0; r < data[i].out.size(); ++r)
      if (std::string diff = wrong_element(pl.calls[i], data[i], r); !diff.empty())
        return fmt::format("call {} ({}): {}", i, describe(pl.calls[i]), diff);
  return {};
}

// The message of the exception in flight (inside a catch block).
inline std::string current_exception_text() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "a non-std exception";
  }
}

}  // namespace ranklab::stress
