// The exhaustive check of the circulant broadcast schedules (see circulant_check.hpp).
#include "schedules/circulant_check.hpp"

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "bench/timing.hpp"
#include "ranklab/circulant.hpp"

namespace ranklab::tools {

namespace {

namespace circ = ranklab::circulant;
using bench::clock_type;
using bench::seconds_since;

// Algorithm 1 is simulated for n blocks in O(p (n + q)): n beyond this is a typo, not a check.
constexpr int max_verify_blocks = 1 << 20;

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
    usage_failure(
        fmt::format("--blocks {}: must be a block count in 1..{} or an expression a*q+b like q, q+1, "
                    "2q-1 (a in 0..1024)",
                    token, max_verify_blocks));
  return bc;
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
    return fmt::format("p={} rank {}: {} send-schedule violations (bound {})", p, w.table.max_violations_rank,
                       m.violations, circ::max_violations);
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
      const double secs = seconds_since(start);
      const auto done = done_.load(std::memory_order_relaxed);
      const double rate = done / std::max(secs, 1e-9);
      const double eta = rate > 0 ? (total_ - done) / rate : 0;
      std::fprintf(stderr, "\rverify: %5.1f%%  %.2fM (p, rank)/s  %.0fs elapsed, ~%.0fs left   ", 100.0 * done / total_,
                   rate / 1e6, secs, eta);
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
  fmt::print("verify p = {}..{} ({} value{} of p), blocks n = {}\n", a, b, graphs, graphs == 1 ? "" : "s",
             fmt::join(block_texts, ","));
  fmt::print(
      "  checked {} (p, rank) pairs: conditions 1-4; Algorithm 1 for each n: every block\n"
      "  exactly once within n-1+q rounds, only held blocks sent, sender and receiver agree\n",
      pairs);
  fmt::print("  send-schedule violations: {}  [bound {}]\n", describe(tot.violations, "max"), circ::max_violations);
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

// Every p of the range, in parallel; `show` failures are kept (the smallest p).
void check_range_of_p(std::int64_t a, std::int64_t b, const std::vector<block_count>& blocks, int show, bool quiet,
                      totals& tot) {
  const std::int64_t graphs = b - a + 1;
  std::atomic<std::int64_t> done{0};
  tbb::enumerable_thread_specific<worker> workers;
  progress_meter meter((a + b) * graphs / 2, done, quiet);
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

std::string json_of(std::int64_t a, std::int64_t b, const std::vector<std::string>& block_texts, std::int64_t pairs,
                    const totals& tot, double secs, int parallelism) {
  nlohmann::ordered_json j{{"p_min", a},
                           {"p_max", b},
                           {"blocks", block_texts},
                           {"pairs", pairs},
                           {"ok", tot.failed_graphs == 0},
                           {"failed_graphs", tot.failed_graphs}};
  j["failures"] = nlohmann::ordered_json::array();
  for (const auto& [fp, what] : tot.failures) j["failures"].push_back({{"p", fp}, {"failure", what}});
  j["violations"] = json_of(tot.violations);
  j["recursion_depth"] = json_of(tot.depth);
  j["recursive_calls"] = json_of(tot.calls);
  j["search_steps"] = json_of(tot.steps);
  j["seconds"] = secs;
  j["threads"] = parallelism;
  return j.dump();
}

}  // namespace

bool check_circulant(const circulant_check_options& o, const output_options& out) {
  const std::int64_t a = o.ps.first, b = o.ps.last;
  std::vector<block_count> blocks;
  for (const auto& t : o.block_tokens) blocks.push_back(parse_block_count(t));
  std::vector<std::string> block_texts;
  for (const auto& bc : blocks) block_texts.push_back(bc.text);

  const int parallelism =
      o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(parallelism));
  const std::int64_t pairs = (a + b) * (b - a + 1) / 2;
  totals tot;
  const auto start = clock_type::now();
  check_range_of_p(a, b, blocks, o.show, out.quiet, tot);
  const double secs = seconds_since(start);
  if (out.json) write_json(out, json_of(a, b, block_texts, pairs, tot, secs, parallelism));
  if (out.text()) print_summary(a, b, block_texts, pairs, tot, secs, parallelism);
  return tot.failed_graphs == 0;
}

}  // namespace ranklab::tools
