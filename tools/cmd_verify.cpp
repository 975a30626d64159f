// `ranklab verify --p A..B [--blocks n1,n2,...]`: exhaustive check of the circulant
// broadcast schedules (J. L. Träff, seed 000; docs/algorithms.md 1.1-1.5) for every p in
// A..B and every rank: the paper's four correctness conditions, Algorithm 1 simulated for
// each number of blocks n (every non-root receives every block exactly once, in n - 1 + q
// rounds, only blocks it already holds are sent), at most 4 send-schedule violations, and
// the recursion/search bounds of the receive schedule (circulant.hpp).
// Cost O(p log p + p (n + q)) per p; parallel over p with oneTBB, largest p first.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "ranklab/circulant.hpp"

namespace ranklab::tools {

namespace {

namespace circ = ranklab::circulant;
using clock_type = std::chrono::steady_clock;

// Verify holds the schedules of one p in memory, p * (2q + 1) bytes per thread.
constexpr std::int64_t max_verify_p = std::int64_t{1} << 26;
// Algorithm 1 is simulated for n blocks in O(p (n + q)): n beyond this is a typo, not a check.
constexpr int max_verify_blocks = 1 << 20;
constexpr int max_threads = 1024;

// A number of blocks given relative to q: "a q + b" written as 7, q, q+1, 2q, 3q-2.
struct block_count {
  std::string text;
  int times_q = 0;
  int plus = 0;
  int eval(int q) const { return times_q * q + plus; }
};

bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

block_count parse_block_count(const std::string& token) {
  block_count bc{token};
  const auto qpos = token.find('q');
  bool ok = true;
  if (qpos == std::string::npos) {
    ok = parse_int(token, bc.plus) && bc.plus >= 1;
  } else {
    const std::string_view coeff(token.data(), qpos), rest(token.data() + qpos + 1, token.size() - qpos - 1);
    bc.times_q = 1;
    ok = coeff.empty() || (parse_int(coeff, bc.times_q) && bc.times_q >= 0);
    if (ok && !rest.empty()) {
      ok = (rest[0] == '+' || rest[0] == '-') && parse_int(rest.substr(1), bc.plus);
      if (rest[0] == '-') bc.plus = -bc.plus;
    }
  }
  // q <= 31, so these bounds keep every evaluated n within 0..max_verify_blocks + 31 * 1024.
  if (!ok || bc.times_q > 1024 || bc.plus > max_verify_blocks || bc.plus < -max_verify_blocks)
    usage_failure(fmt::format("--blocks {}: must be a block count in 1..{} or an expression a*q+b like q, q+1, "
                              "2q-1 (a in 0..1024)",
                              token, max_verify_blocks));
  return bc;
}

void parse_range(const std::string& text, std::int64_t& a, std::int64_t& b) {
  const auto dots = text.find("..");
  auto read = [&](std::string_view s, std::int64_t& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && ec == std::errc{} && end == s.data() + s.size();
  };
  const bool ok = dots == std::string::npos
                      ? read(text, a) && (b = a, true)
                      : read(std::string_view(text).substr(0, dots), a) &&
                            read(std::string_view(text).substr(dots + 2), b);
  if (!ok || a < 1 || b < a || b > max_verify_p)
    usage_failure(fmt::format("--p {}: must be A..B (or one P) with 1 <= A <= B <= {}", text, max_verify_p));
}

// A maximum over all graphs checked, with the smallest p (and a rank) reaching it.
struct record {
  int value = -1;
  std::int64_t p = 0, rank = -1;
  int q = 0;
  void offer(int v, std::int64_t at_p, int at_q, std::int64_t at_rank = -1) {
    if (v > value || (v == value && at_p < p)) *this = {v, at_p, at_rank, at_q};
  }
};

struct totals {
  std::mutex mutex;
  record violations, depth, calls, steps;
  std::vector<std::pair<std::int64_t, std::string>> failures;  // the smallest p that failed
  std::int64_t failed_graphs = 0;
};

struct worker {
  circ::schedule_table table;
  std::vector<int> scratch, counts;
};

// All checks for one p; returns the first failure or an empty string.
std::string verify_one(std::int64_t p, const std::vector<block_count>& blocks, worker& w, totals& tot) {
  const circ::skips s(p);
  const int q = s.q;
  circ::compute_schedule_table(s, w.table);
  const auto& m = w.table.max_stats;
  {
    std::lock_guard lock(tot.mutex);
    tot.violations.offer(m.violations, p, q, w.table.max_violations_rank);
    tot.depth.offer(m.recursion_depth, p, q);
    tot.calls.offer(m.recursive_calls, p, q);
    tot.steps.offer(m.search_steps, p, q);
  }
  if (m.violations > circ::max_violations)
    return fmt::format("p={} rank {}: {} send-schedule violations (bound {})", p,
                       w.table.max_violations_rank, m.violations, circ::max_violations);
  if (m.recursion_depth > circ::recursion_depth_bound(q) || m.recursive_calls > circ::recursive_calls_bound(q) ||
      m.search_steps > circ::search_steps_bound(q))
    return fmt::format("p={}: receive search depth {} calls {} steps {} exceed the bounds {} {} {}", p,
                       m.recursion_depth, m.recursive_calls, m.search_steps, circ::recursion_depth_bound(q),
                       circ::recursive_calls_bound(q), circ::search_steps_bound(q));
  if (auto c = circ::check_conditions(s, w.table); !c) return c.failure;
  w.counts.clear();
  for (const auto& bc : blocks)
    if (const int n = bc.eval(q); n >= 1) w.counts.push_back(n);  // skips e.g. q-1 for q = 1
  if (auto c = circ::check_broadcast(s, w.table, w.counts, w.scratch); !c) return c.failure;
  return {};
}

// Progress on stderr while it is a terminal: percentage of (p, rank) pairs, rate, ETA.
class progress_meter {
 public:
  progress_meter(std::int64_t total, const std::atomic<std::int64_t>& done, bool quiet)
      : total_(total), done_(done), enabled_(!quiet && isatty(fileno(stderr)) != 0) {
    if (enabled_) thread_ = std::thread([this] { run(); });
  }
  ~progress_meter() {
    if (!enabled_) return;
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
    std::fprintf(stderr, "\r%60s\r", "");
  }

 private:
  void run() {
    const auto start = clock_type::now();
    std::unique_lock lock(mutex_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) {
      const double secs = std::chrono::duration<double>(clock_type::now() - start).count();
      const auto done = done_.load(std::memory_order_relaxed);
      const double rate = done / std::max(secs, 1e-9);
      const double eta = rate > 0 ? (total_ - done) / rate : 0;
      std::fprintf(stderr, "\rverify: %5.1f%%  %.2fM (p, rank)/s  %.0fs elapsed, ~%.0fs left   ",
                   100.0 * done / total_, rate / 1e6, secs, eta);
      std::fflush(stderr);
    }
  }
  std::int64_t total_;
  const std::atomic<std::int64_t>& done_;
  bool enabled_;
  bool stop_ = false;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::thread thread_;
};

nlohmann::ordered_json json_of(const record& r) {
  if (r.value < 0) return nullptr;
  return {{"max", r.value}, {"p", r.p}, {"q", r.q}, {"rank", r.rank}};
}

std::string describe(const record& r, const char* what) {
  if (r.value < 0) return "-";
  std::string s = fmt::format("{} {} (first at p = {}, q = {}", what, r.value, r.p, r.q);
  if (r.rank >= 0) s += fmt::format(", rank {}", r.rank);
  return s + ")";
}

void print_summary(std::int64_t a, std::int64_t b, const std::vector<std::string>& block_texts, std::int64_t pairs,
                   const totals& tot, double secs, int parallelism) {
  const std::int64_t graphs = b - a + 1;
  fmt::print("verify p = {}..{} ({} value{} of p), blocks n = {}\n", a, b, graphs, graphs == 1 ? "" : "s", fmt::join(block_texts, ","));
  fmt::print("  checked {} (p, rank) pairs: conditions 1-4; Algorithm 1 for each n: every block\n"
             "  exactly once within n-1+q rounds, only held blocks sent, sender and receiver agree\n", pairs);
  fmt::print("  send-schedule violations: {}  [bound {}]\n", describe(tot.violations, "max"),
             circ::max_violations);
  fmt::print("  receive search depth:     {}  [bound q-1]\n", describe(tot.depth, "max"));
  fmt::print("  receive recursive calls:  {}  [bound q-1]\n", describe(tot.calls, "max"));
  fmt::print("  receive search steps:     {}  [bound 4q]\n", describe(tot.steps, "max"));
  fmt::print("  elapsed {:.2f} s on {} threads ({:.2f}M (p, rank)/s)\n", secs, parallelism,
             pairs / std::max(secs, 1e-9) / 1e6);
  if (tot.failed_graphs == 0) {
    fmt::print("  OK\n");
    return;
  }
  fmt::print("  FAILED for {} of {} values of p; first failures:\n", tot.failed_graphs, graphs);
  for (const auto& [p, what] : tot.failures) fmt::print("    {}\n", what);
}

}  // namespace

void add_verify_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "verify",
      "Check the circulant broadcast schedules exhaustively for a range of p: the paper's four "
      "correctness conditions, Algorithm 1 with n blocks, violation and recursion bounds");
  static std::string range;
  static std::vector<std::string> block_tokens = {"1", "2", "q+1"};
  static std::int64_t threads = 0;
  static std::int64_t show = 10;
  static output_options out;
  cmd->add_option("--p", range, "Range of p: A..B (or one P), 1 <= A <= B <= 2^26")->required();
  cmd->add_option("--blocks", block_tokens,
                  "Numbers of blocks n for the Algorithm 1 simulation, comma separated; may use q: "
                  "e.g. 1,2,q,q+1,2q-1 (n < 1 is skipped)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--threads", threads, fmt::format("Worker threads, 1..{} (0: all cores)", max_threads))
      ->capture_default_str();
  cmd->add_option("--show", show, "Failures to print, 1..1000")->capture_default_str();
  add_output_options(cmd, out, "{p_min, p_max, blocks, pairs, ok, failed_graphs, failures, maxima, seconds}");
  cmd->callback([] {
    check_range("--threads", threads, 0, max_threads, "0: all cores");
    check_range("--show", show, 1, 1000);
    std::int64_t a = 0, b = 0;
    parse_range(range, a, b);
    std::vector<block_count> blocks;
    for (const auto& t : block_tokens) blocks.push_back(parse_block_count(t));
    std::vector<std::string> block_texts;
    for (const auto& bc : blocks) block_texts.push_back(bc.text);

    const int parallelism = threads > 0 ? static_cast<int>(threads) : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(parallelism));
    const std::int64_t graphs = b - a + 1;
    const std::int64_t pairs = (a + b) * graphs / 2;
    std::atomic<std::int64_t> done{0};
    totals tot;
    tbb::enumerable_thread_specific<worker> workers;

    const auto start = clock_type::now();
    {
      progress_meter meter(pairs, done, out.quiet);
      // Indices run from the largest p down, so each worker starts on the expensive end of
      // its part and the cheap small p are left to balance the load at the end.
      tbb::parallel_for(
          tbb::blocked_range<std::int64_t>(0, graphs, 1),
          [&](const tbb::blocked_range<std::int64_t>& chunk) {
            auto& w = workers.local();
            for (std::int64_t i = chunk.begin(); i != chunk.end(); ++i) {
              const std::int64_t p = b - i;
              auto failure = verify_one(p, blocks, w, tot);
              if (!failure.empty()) {
                std::lock_guard lock(tot.mutex);
                ++tot.failed_graphs;
                tot.failures.emplace_back(p, std::move(failure));
                std::sort(tot.failures.begin(), tot.failures.end());
                if (tot.failures.size() > static_cast<std::size_t>(show)) tot.failures.pop_back();
              }
              done.fetch_add(p, std::memory_order_relaxed);
            }
          },
          tbb::simple_partitioner{});
    }
    const double secs = std::chrono::duration<double>(clock_type::now() - start).count();

    if (out.json) {
      nlohmann::ordered_json j{{"p_min", a}, {"p_max", b}, {"blocks", block_texts}, {"pairs", pairs},
                               {"ok", tot.failed_graphs == 0}, {"failed_graphs", tot.failed_graphs}};
      j["failures"] = nlohmann::ordered_json::array();
      for (const auto& [fp, what] : tot.failures) j["failures"].push_back({{"p", fp}, {"failure", what}});
      j["violations"] = json_of(tot.violations);
      j["recursion_depth"] = json_of(tot.depth);
      j["recursive_calls"] = json_of(tot.calls);
      j["search_steps"] = json_of(tot.steps);
      j["seconds"] = secs;
      j["threads"] = parallelism;
      write_json(out, j.dump());
    }
    if (out.text()) print_summary(a, b, block_texts, pairs, tot, secs, parallelism);
    if (tot.failed_graphs != 0) throw CLI::RuntimeError(1);
  });
}

}  // namespace ranklab::tools
