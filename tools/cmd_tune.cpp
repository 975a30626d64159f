// `ranklab tune`: calibrates the cost model on this machine and measures which registered
// algorithm is fastest per collective, p range and message-size band; writes a selection
// table (ranklab/selection.hpp) that "auto" uses when RANKLAB_SELECTION names it.
//   alpha, beta: one-way time of sendrecv ping-pong between two rank threads at several
//                sizes (fastest batch), least squares on relative error; where one line fits
//                poorly (eager inline messages vs descriptor copies, caches) the sizes are
//                split into bands.
//   gamma:       the sum kernel's time per byte (fastest batch; int32, float32, float64:
//                the median of the three).
//   rules:       every algorithm accepting the call, run on the thread executor through
//                comm::run_collective, batches interleaved across algorithms, the median of
//                the batches; the fastest per band, then the next fastest until one without
//                preconditions, so that "auto" falls through to a measured choice.
// Progress goes to stderr; the table to --out (or stdout).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "cli_checks.hpp"
#include "ranklab/check.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/executor.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/selection.hpp"
#include "ranklab/team.hpp"

namespace ranklab::tools {

namespace {

using clock_type = std::chrono::steady_clock;
using ojson = nlohmann::ordered_json;
using bench::median;

struct tune_options {
  std::string ps;     // empty: 2,4,8 (--quick 2,4)
  std::string sizes;  // empty: see add_tune_command
  std::string colls;  // empty: all
  std::string out;    // the same as --json FILE
  std::string show;
  bool quick = false;
  std::int64_t batches = 0;  // 0: 5, --quick 3
  double batch_ms = 0;       // 0: 4 ms, --quick 1 ms
  output_options output;
};

// Bounds of a measurement: every algorithm runs at every size, so huge sizes are typos.
constexpr std::uint64_t max_tune_bytes = 64 << 20;
constexpr std::int64_t max_tune_batches = 1000;
constexpr double max_batch_ms = 1000;

bool quiet = false;  // -q: no progress on stderr (set by the command before measuring)

// Progress and notes on stderr, unless -q.
template <class... Args>
void progress(fmt::format_string<Args...> format, Args&&... args) {
  if (!quiet) fmt::print(stderr, format, std::forward<Args>(args)...);
}

// ---- helpers -------------------------------------------------------------------------------
double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

std::string show_bytes(std::uint64_t b) {
  if (b >= (1u << 20) && b % (1u << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

std::string show_seconds(double s) {
  if (s >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.2f} us", s * 1e6);
  return fmt::format("{:.2f} ns", s * 1e9);
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  if (!(in >> a >> b >> c)) return "unknown";
  return a + " " + b + " " + c;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

team_options measuring_options() {
  team_options o = team_options::from_environment();
  // A busy, oversubscribed machine can stall a rank for a long time without any deadlock.
  o.deadlock_timeout = std::max(o.deadlock_timeout, std::chrono::milliseconds(10000));
  return o;
}

// ---- alpha and beta --------------------------------------------------------------------------
struct sample {
  double bytes = 0;
  double seconds = 0;
};

// One-way times from ping-pong between ranks 0 and 1 per size: the fastest of the batches
// (a calibration wants the machine's own cost; other processes on a shared machine only
// ever add time, and a ping-pong stalls whenever either thread loses its core).
std::vector<sample> ping_pong(const std::vector<std::uint64_t>& sizes, int batches, double batch_seconds) {
  std::vector<std::vector<double>> times(sizes.size());
  const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
  run(2,
      [&](comm& cm) {
        std::vector<std::byte> buf(std::max<std::size_t>(largest, 1));
        const int peer = 1 - cm.rank();
        auto exchange = [&](std::size_t bytes, std::uint64_t k) {
          const std::span<std::byte> msg(buf.data(), bytes);
          for (std::uint64_t i = 0; i < k; ++i) {
            if (cm.rank() == 0) {
              cm.send(peer, msg);
              cm.recv(peer, msg);
            } else {
              cm.recv(peer, msg);
              cm.send(peer, msg);
            }
          }
        };
        // Sizes are interleaved batch by batch, so that a burst of load on the machine hits
        // one batch of every size rather than all batches of one size.
        std::vector<std::uint64_t> iters(sizes.size());
        for (std::size_t s = 0; s < sizes.size(); ++s) {
          exchange(sizes[s], 3);  // warm-up: mailboxes, caches, page faults
          cm.barrier();
          const auto t0 = clock_type::now();
          exchange(sizes[s], 4);
          std::uint64_t k = static_cast<std::uint64_t>(
              std::clamp(batch_seconds / std::max(seconds_since(t0) / 4, 1e-9), 1.0, 20000.0));
          cm.bcast(std::span(&k, 1), 0);
          iters[s] = k;
        }
        for (int b = 0; b < batches; ++b)
          for (std::size_t s = 0; s < sizes.size(); ++s) {
            cm.barrier();
            const auto t0 = clock_type::now();
            exchange(sizes[s], iters[s]);
            if (cm.rank() == 0) times[s].push_back(seconds_since(t0) / (2.0 * static_cast<double>(iters[s])));
          }
      },
      measuring_options());
  std::vector<sample> out;
  for (std::size_t s = 0; s < sizes.size(); ++s)
    out.push_back({static_cast<double>(sizes[s]), *std::min_element(times[s].begin(), times[s].end())});
  return out;
}

struct line_fit {
  double alpha = 0, beta = 0, max_rel_error = 0, sum_sq_rel = 0;
};

// Least squares of t = alpha + beta * bytes on relative error (weights 1/t^2), so that small
// messages count as much as large ones; alpha and beta are kept non-negative.
line_fit fit_line(std::span<const sample> pts) {
  double s = 0, sx = 0, sxx = 0, sy = 0, sxy = 0;
  for (const sample& q : pts) {
    const double w = 1.0 / std::max(q.seconds * q.seconds, 1e-30);
    s += w, sx += w * q.bytes, sxx += w * q.bytes * q.bytes, sy += w * q.seconds, sxy += w * q.bytes * q.seconds;
  }
  line_fit f;
  const double det = s * sxx - sx * sx;
  f.beta = det > 0 ? (s * sxy - sx * sy) / det : 0;
  f.alpha = s > 0 ? (sy - f.beta * sx) / s : 0;
  if (f.alpha < 0) f.alpha = 0, f.beta = sxx > 0 ? sxy / sxx : 0;
  if (f.beta < 0) f.beta = 0, f.alpha = s > 0 ? sy / s : 0;
  for (const sample& q : pts) {
    const double rel = (f.alpha + f.beta * q.bytes - q.seconds) / std::max(q.seconds, 1e-30);
    f.max_rel_error = std::max(f.max_rel_error, std::abs(rel));
    f.sum_sq_rel += rel * rel;
  }
  return f;
}

constexpr double poor_fit = 0.20;  // max relative error above which a band is split
constexpr std::size_t min_band_points = 3;

// Splits the sizes where one line fits poorly: at the split minimising the summed squared
// relative error of the two sides, if that at least halves it, recursively (depth 2: at
// most 4 bands of at least 3 sizes each).
void split_bands(std::span<const sample> pts, int depth, std::vector<cost_band>& out) {
  const line_fit whole = fit_line(pts);
  if (depth == 0 || pts.size() < 2 * min_band_points || whole.max_rel_error <= poor_fit) {
    out.push_back(cost_band{static_cast<std::uint64_t>(pts.back().bytes), whole.alpha, whole.beta});
    return;
  }
  std::size_t best = 0;
  double best_err = 0.5 * whole.sum_sq_rel;
  for (std::size_t i = min_band_points; i + min_band_points <= pts.size(); ++i) {
    const double err = fit_line(pts.first(i)).sum_sq_rel + fit_line(pts.subspan(i)).sum_sq_rel;
    if (err < best_err) best = i, best_err = err;
  }
  if (best == 0) {
    out.push_back(cost_band{static_cast<std::uint64_t>(pts.back().bytes), whole.alpha, whole.beta});
    return;
  }
  split_bands(pts.first(best), depth - 1, out);
  split_bands(pts.subspan(best), depth - 1, out);
}

// ---- gamma -----------------------------------------------------------------------------------
template <class T>
double kernel_seconds_per_byte(const datatype& t, int batches, double batch_seconds) {
  constexpr std::size_t n = 8192;  // 32-64 KiB per operand: the reduction runs from cache
  std::vector<T> in(n, T(1)), inout(n, T(0));
  const reduce_kernel k = kernel_for(ops::sum, t);
  auto pass = [&](std::uint64_t reps) {
    for (std::uint64_t i = 0; i < reps; ++i) k(in.data(), inout.data(), n, nullptr);
  };
  pass(8);
  auto t0 = clock_type::now();
  pass(8);
  const auto reps =
      static_cast<std::uint64_t>(std::clamp(batch_seconds / std::max(seconds_since(t0) / 8, 1e-9), 1.0, 1e6));
  double per_byte = 1e30;  // the fastest batch, as for ping-pong
  for (int b = 0; b < batches; ++b) {
    t0 = clock_type::now();
    pass(reps);
    per_byte = std::min(per_byte, seconds_since(t0) / static_cast<double>(reps * n * sizeof(T)));
  }
  // Keep the result observable so the loop is not optimised away.
  if (inout[0] == T(-1)) std::fputs("", stderr);
  return per_byte;
}

// ---- algorithms --------------------------------------------------------------------------------
struct candidate {
  const algorithm* algo = nullptr;
  double seconds = 0;  // median over batches of the slowest rank
  std::string wrong;   // why its result was wrong, if it was
};

call make_tune_call(collective c, int p, std::uint64_t bytes) {
  call cl;
  cl.args.coll = c;
  cl.args.p = p;
  cl.args.root = 0;
  cl.type = datatype_of<double>();
  cl.reduction = ops::sum;
  cl.args.commutative = true;
  cl.args.elem_size = cl.type.size;
  const std::uint64_t count = c == collective::barrier ? 0 : std::max<std::uint64_t>(1, bytes / cl.type.size);
  if (has_vector_counts(c)) {
    const auto n = static_cast<std::size_t>(c == collective::alltoallv ? p * p : p);
    cl.args.counts.assign(n, count);
  } else {
    cl.args.count = count;
  }
  return cl;
}

// Times every candidate on one team. First each candidate runs once on the check harness's
// data (make_test_data) and its result is compared with the sequential reference: a wrong
// algorithm is never selected. Then per batch each candidate runs k calls (k sized so a
// batch lasts about batch_seconds), in an order rotated per batch, so slow phases of a busy
// machine are spread over all candidates. Sets seconds, and wrong for failed checks.
void time_on_team(const call& base, std::vector<candidate>& cands, int batches, double batch_seconds) {
  const int p = base.args.p;
  const std::size_t n = cands.size();
  const auto nb = static_cast<std::size_t>(batches), np = static_cast<std::size_t>(p);
  std::vector<double> times(n * nb * np, 0.0);
  std::vector<char> right(n * np, 0);
  std::vector<call> calls(n, base);
  for (std::size_t i = 0; i < n; ++i) calls[i].choice.name = cands[i].algo->name;
  test_data data = make_test_data(base, 1);
  const std::vector<std::vector<std::byte>> fresh_out = data.out;  // the 0xA5 fill
  const std::vector<rank_buffers> buffers = data.buffers();
  run(p,
      [&](comm& cm) {
        const auto r = static_cast<std::size_t>(cm.rank());
        const rank_buffers& buf = buffers[r];
        std::vector<std::uint64_t> iters(n, 1);
        for (std::size_t i = 0; i < n; ++i) {
          std::copy(fresh_out[r].begin(), fresh_out[r].end(), data.out[r].begin());
          cm.run_collective(calls[i], buf.in, buf.out);  // also builds and caches the schedule
          right[i * np + r] = data.out[r] == data.expected[r];
          // The fastest of three single calls sizes the batches: one call that lost the
          // core to another process must not make every batch a single call.
          double one = 1e30;
          for (int w = 0; w < 3; ++w) {
            cm.barrier();
            const auto t0 = clock_type::now();
            cm.run_collective(calls[i], buf.in, buf.out);
            one = std::min(one, seconds_since(t0));
          }
          std::uint64_t k =
              static_cast<std::uint64_t>(std::clamp(batch_seconds / std::max(one, 1e-9), 1.0, 10000.0));
          cm.bcast(std::span(&k, 1), 0);
          iters[i] = k;
        }
        for (std::size_t b = 0; b < nb; ++b)
          for (std::size_t j = 0; j < n; ++j) {
            const std::size_t i = (j + b) % n;
            cm.barrier();
            const auto t0 = clock_type::now();
            for (std::uint64_t k = 0; k < iters[i]; ++k) cm.run_collective(calls[i], buf.in, buf.out);
            times[(i * nb + b) * np + r] = seconds_since(t0) / static_cast<double>(iters[i]);
          }
      },
      measuring_options());
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> per_batch;
    for (std::size_t b = 0; b < nb; ++b) {
      const auto first = times.begin() + static_cast<std::ptrdiff_t>((i * nb + b) * np);
      per_batch.push_back(*std::max_element(first, first + p));
    }
    cands[i].seconds = median(per_batch);
    for (std::size_t r = 0; r < np && cands[i].wrong.empty(); ++r)
      if (!right[i * np + r]) cands[i].wrong = fmt::format("rank {} differs from the sequential reference", r);
  }
}

// Candidates for a call: registered, accepting it, with schedules the verifier accepts (an
// algorithm that rejects the case or is broken is reported and left out).
std::vector<candidate> candidates_for(const call& c) {
  std::vector<candidate> out;
  for (const algorithm* a : registry::for_collective(c.args.coll)) {
    if (!meets_preconditions(*a, c.args)) continue;
    try {
      const verify_report rep = verify(build_all(*a, c.args));
      if (!rep.ok) {
        progress("  {} left out: schedules do not verify: {}\n", a->name,
                 rep.problems.empty() ? "" : rep.problems.front());
        continue;
      }
    } catch (const std::exception& e) {
      progress("  {} left out: {}\n", a->name, e.what());
      continue;
    }
    out.push_back({a, 0, {}});
  }
  return out;
}

std::vector<candidate> measure(const call& c, int batches, double batch_seconds) {
  std::vector<candidate> cands = candidates_for(c);
  if (cands.empty()) return cands;
  try {
    time_on_team(c, cands, batches, batch_seconds);
  } catch (const std::exception& e) {
    // Find the culprit: one team per candidate.
    progress("  measuring together failed ({}); one at a time\n", e.what());
    std::vector<candidate> ok;
    for (candidate& one : cands) {
      std::vector<candidate> single{one};
      try {
        time_on_team(c, single, batches, batch_seconds);
        ok.push_back(single.front());
      } catch (const std::exception& e2) {
        progress("  {} left out: {}\n", one.algo->name, e2.what());
      }
    }
    cands = std::move(ok);
  }
  std::erase_if(cands, [](const candidate& k) {
    if (k.wrong.empty()) return false;
    progress("  {} left out: wrong result: {}\n", k.algo->name, k.wrong);
    return true;
  });
  std::stable_sort(cands.begin(), cands.end(),
                   [](const candidate& x, const candidate& y) { return x.seconds < y.seconds; });
  return cands;
}

bool unconditional(const algorithm& a) { return !a.needs_commutative && !a.needs_power_of_two; }

// The rules of one (collective, p range, band): the fastest, then the next fastest until
// one that accepts every call (no preconditions), so that calls the winner cannot run fall
// through to the best measured alternative instead of leaving the band.
std::vector<std::string> ranking_names(const std::vector<candidate>& ranked) {
  std::vector<std::string> names;
  for (const candidate& c : ranked) {
    names.emplace_back(c.algo->name);
    if (unconditional(*c.algo)) break;
  }
  return names;
}

struct band_result {
  std::uint64_t bytes = 0;        // measured size (selection_bytes)
  std::uint64_t max_bytes = 0;    // band upper bound
  std::vector<candidate> ranked;  // fastest first
};

std::string ranked_note(const std::vector<candidate>& ranked, std::size_t i, int p, std::uint64_t lo,
                        std::uint64_t hi) {
  const std::string where = lo == hi ? fmt::format("p {}, {}", p, show_bytes(lo))
                                     : fmt::format("p {}, {}..{}", p, show_bytes(lo), show_bytes(hi));
  std::string head = i == 0 ? "measured fastest" : fmt::format("measured #{}", i + 1);
  if (i > 0 && unconditional(*ranked[i].algo)) head += ", fastest without preconditions";
  if (lo != hi) return fmt::format("{} at {}", head, where);
  std::string note = fmt::format("{} at {}: {}", head, where, show_seconds(ranked[i].seconds));
  if (i + 1 < ranked.size())
    note += fmt::format(" (next {} {})", ranked[i + 1].algo->name, show_seconds(ranked[i + 1].seconds));
  return note;
}

// Rules for one collective and p range from the measured bands (ascending sizes); adjacent
// bands with the same ranking are merged.
void emit_rules(collective c, int p, int p_min, int p_max, const std::vector<band_result>& bands,
                std::vector<selection_rule>& rules) {
  std::size_t i = 0;
  while (i < bands.size()) {
    if (bands[i].ranked.empty()) {
      ++i;
      continue;
    }
    const auto names = ranking_names(bands[i].ranked);
    std::size_t j = i;
    while (j + 1 < bands.size() && !bands[j + 1].ranked.empty() && ranking_names(bands[j + 1].ranked) == names) ++j;
    for (std::size_t k = 0; k < names.size(); ++k) {
      selection_rule r;
      r.coll = c;
      r.p_min = p_min;
      r.p_max = p_max;
      r.max_bytes = bands[j].max_bytes;
      r.algorithm = names[k];
      r.note = ranked_note(bands[i].ranked, k, p, bands[i].bytes, bands[j].bytes);
      rules.push_back(std::move(r));
    }
    i = j + 1;
  }
}

// ---- the command -------------------------------------------------------------------------------
void show_table(const std::string& path) {
  const selection_table t = read_selection(path);
  fmt::print("table      {}\n", t.source);
  const auto machine = nlohmann::json::parse(t.machine_json);
  for (const char* key : {"description", "hostname", "date", "tool", "load_average_before", "load_average_after"})
    if (machine.contains(key)) fmt::print("{:<10} {}\n", key == std::string("description") ? "machine" : key,
                                          machine[key].is_string() ? machine[key].get<std::string>() : machine[key].dump());
  fmt::print("cost model alpha {}  beta {}/B ({:.2f} GB/s)  gamma {}/B\n", show_seconds(t.model.alpha),
             show_seconds(t.model.beta), t.model.beta > 0 ? 1e-9 / t.model.beta : 0.0, show_seconds(t.model.gamma));
  for (const cost_band& b : t.bands)
    fmt::print("  band {:>12}  alpha {}  beta {}/B\n",
               b.max_bytes == unbounded_bytes ? std::string("any size") : "<= " + show_bytes(b.max_bytes),
               show_seconds(b.alpha), show_seconds(b.beta));
  for (std::size_t i = 0; i < t.rules.size(); ++i)
    fmt::print("{:<22} {:<44} {}{}\n", name(t.rules[i].coll), describe_rule(t, i), t.rules[i].algorithm,
               t.rules[i].note.empty() ? "" : "  (" + t.rules[i].note + ")");
}

int tune_command(const tune_options& o) {
  // Every option is checked before the first measurement: a typo must not cost minutes.
  std::vector<int> ps = o.quick ? std::vector<int>{2, 4} : std::vector<int>{2, 4, 8};
  if (!o.ps.empty()) {
    try {
      ps = parse_int_list(o.ps);
    } catch (const std::invalid_argument& e) {
      usage_failure(fmt::format("-p {}: {}", o.ps, e.what()));
    }
  }
  for (int p : ps) check_range("-p", p, 2, max_ranks, "tune measures teams of at least 2 ranks");
  std::sort(ps.begin(), ps.end());
  ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
  std::vector<std::uint64_t> sizes = o.quick ? std::vector<std::uint64_t>{64, 4096, 65536}
                                             : std::vector<std::uint64_t>{8, 64, 512, 4096, 32768, 262144};
  if (!o.sizes.empty()) sizes = parse_sizes("--sizes", o.sizes, max_tune_bytes, "per rank");
  for (std::uint64_t& s : sizes) s = std::max<std::uint64_t>(8, s / 8 * 8);  // whole float64 elements
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::vector<collective> colls;
  for (collective c : parse_collective_list("--coll", o.colls.empty() ? "all" : o.colls))
    if (!registry::for_collective(c).empty()) colls.push_back(c);
  if (o.batches != 0) check_range("--batches", o.batches, 1, max_tune_batches, "or 0: 5, --quick 3");
  if (o.batch_ms != 0) check_real_range("--batch-ms", o.batch_ms, 0, max_batch_ms, "or 0: 4, --quick 1");
  // --out FILE is the older spelling of --json FILE.
  std::string out_file = o.output.json_to_stdout() ? "" : o.output.json_file;
  if (!o.out.empty() && !out_file.empty() && o.out != out_file)
    usage_failure(fmt::format("--out {} and --json {}: give the file once", o.out, out_file));
  if (!o.out.empty()) out_file = o.out;
  quiet = o.output.quiet;

  if (!o.show.empty()) {
    show_table(o.show);
    return 0;
  }
  const auto start = clock_type::now();
  const int batches = o.batches > 0 ? static_cast<int>(o.batches) : (o.quick ? 3 : 5);
  const double batch_seconds = (o.batch_ms > 0 ? o.batch_ms : (o.quick ? 1.0 : 4.0)) * 1e-3;
  const machine_info mi = machine();
  const std::string load_before = load_average();
  progress("ranklab tune: {} ({} cores), load average {}{}\n", mi.description, mi.cores, load_before,
           o.quick ? ", quick" : "");

  // 1. alpha, beta
  const team_options topt = team_options::from_environment();
  std::vector<std::uint64_t> pp_sizes =
      o.quick ? std::vector<std::uint64_t>{0, 64, 1024, 2048, 4096, 65536, 1 << 20}
              : std::vector<std::uint64_t>{0, 8, 64, 256, 1024, 2048, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20};
  // Many short batches: on a loaded machine a short window in which both threads keep their
  // cores is far more likely than a long one, and the fastest batch is what we keep.
  const int short_batches = 8 * batches;
  const double short_batch_seconds = 0.25e-3;
  progress("[1/3] ping-pong between two rank threads at {} sizes (eager limit {} B), fastest of {} batches\n",
           pp_sizes.size(), topt.eager_limit, short_batches);
  const std::vector<sample> pts = ping_pong(pp_sizes, short_batches, short_batch_seconds);
  for (const sample& s : pts)
    progress("      {:>10}  {}\n", show_bytes(static_cast<std::uint64_t>(s.bytes)), show_seconds(s.seconds));
  const line_fit global = fit_line(pts);
  std::vector<cost_band> bands;
  if (global.max_rel_error > poor_fit) {
    split_bands(pts, 2, bands);
    bands.back().max_bytes = unbounded_bytes;
    if (bands.size() == 1) bands.clear();  // no split helped: the global fit is the model
  }
  progress("      fit: alpha {}, beta {}/B ({:.2f} GB/s), max relative error {:.0f}%\n",
           show_seconds(global.alpha), show_seconds(global.beta), global.beta > 0 ? 1e-9 / global.beta : 0.0,
           100 * global.max_rel_error);
  for (const cost_band& b : bands)
    progress("      band {:>12}: alpha {}, beta {}/B\n",
             b.max_bytes == unbounded_bytes ? std::string("rest") : "<= " + show_bytes(b.max_bytes),
             show_seconds(b.alpha), show_seconds(b.beta));

  // 2. gamma
  progress("[2/3] reduction kernel (sum) throughput\n");
  const double g_i32 =
      kernel_seconds_per_byte<std::int32_t>(datatype_of<std::int32_t>(), short_batches, short_batch_seconds);
  const double g_f32 = kernel_seconds_per_byte<float>(datatype_of<float>(), short_batches, short_batch_seconds);
  const double g_f64 = kernel_seconds_per_byte<double>(datatype_of<double>(), short_batches, short_batch_seconds);
  const double gamma = median({g_i32, g_f32, g_f64});
  progress("      int32 {}/B, float32 {}/B, float64 {}/B -> gamma {}/B\n", show_seconds(g_i32),
           show_seconds(g_f32), show_seconds(g_f64), show_seconds(gamma));

  selection_table table;
  table.model = cost_model{global.alpha, global.beta, gamma};
  table.bands = bands;
  // Measure with the calibrated model in place (circulant sizes its blocks with it).
  {
    selection_table provisional = builtin_selection();
    provisional.model = table.model;
    provisional.bands = bands;
    provisional.source = "tune (calibrated model, built-in rules)";
    use_selection(std::move(provisional));
  }

  // 3. algorithms
  std::size_t groups = 0;
  for (collective c : colls) groups += ps.size() * (c == collective::barrier ? 1 : sizes.size());
  progress("[3/3] {} collective(s) x p {} x {} size(s): {} measurements, {} batches of ~{} ms\n",
           colls.size(), fmt::join(ps, ","), sizes.size(), groups, batches, batch_seconds * 1e3);
  std::size_t done = 0;
  ojson measured = ojson::array();
  for (collective c : colls) {
    for (std::size_t pi = 0; pi < ps.size(); ++pi) {
      const int p = ps[pi];
      const int p_min = pi == 0 ? 1 : ps[pi - 1] + 1;
      const int p_max = pi + 1 == ps.size() ? unbounded_p : p;
      std::vector<band_result> results;
      const std::vector<std::uint64_t> band_sizes =
          c == collective::barrier ? std::vector<std::uint64_t>{0} : sizes;
      for (std::size_t si = 0; si < band_sizes.size(); ++si) {
        const call cl = make_tune_call(c, p, band_sizes[si]);
        band_result br;
        br.bytes = selection_bytes(cl.args, cl.type.size);
        br.max_bytes = unbounded_bytes;
        if (si + 1 < band_sizes.size()) {  // up to the geometric middle between measured sizes
          const call next = make_tune_call(c, p, band_sizes[si + 1]);
          br.max_bytes = static_cast<std::uint64_t>(
              std::sqrt(static_cast<double>(br.bytes) * static_cast<double>(selection_bytes(next.args, 8))));
        }
        ++done;
        progress("[{}/{} {:.1f} s] {} p={} {}:", done, groups, seconds_since(start), name(c), p,
                 c == collective::barrier ? std::string("") : show_bytes(br.bytes));
        br.ranked = measure(cl, batches, batch_seconds);
        ojson entry{{"coll", std::string(name(c))}, {"p", p}, {"bytes", br.bytes}, {"seconds", ojson::object()}};
        for (const candidate& k : br.ranked) {
          progress(" {} {}", k.algo->name, show_seconds(k.seconds));
          entry["seconds"][std::string(k.algo->name)] = k.seconds;
        }
        progress("{}\n", br.ranked.empty() ? " no algorithm accepts the call" : "");
        measured.push_back(std::move(entry));
        results.push_back(std::move(br));
      }
      emit_rules(c, p, p_min, p_max, results, table.rules);
    }
  }
  reset_selection();

  ojson machine_j;
  machine_j["description"] = mi.description;
  machine_j["cores"] = mi.cores;
  machine_j["hardware_threads"] = mi.hardware_threads;
  machine_j["numa_nodes"] = mi.numa_nodes;
  machine_j["hostname"] = host_name();
  machine_j["date"] = utc_now();
  machine_j["tool"] = o.quick ? "ranklab tune --quick" : "ranklab tune";
  machine_j["load_average_before"] = load_before;
  machine_j["load_average_after"] = load_average();
  machine_j["eager_limit"] = topt.eager_limit;
  machine_j["binding"] = std::string(name(topt.binding));
  machine_j["p"] = ps;
  machine_j["sizes"] = sizes;
  machine_j["batches"] = batches;
  machine_j["batch_ms"] = batch_seconds * 1e3;
  table.machine_json = machine_j.dump();
  ojson pp = ojson::array();
  for (const sample& s : pts) pp.push_back({{"bytes", static_cast<std::uint64_t>(s.bytes)}, {"seconds", s.seconds}});
  ojson meas;
  meas["ping_pong_one_way"] = pp;
  meas["fit_max_relative_error"] = global.max_rel_error;
  meas["gamma_by_type"] = {{"int32", g_i32}, {"float32", g_f32}, {"float64", g_f64}};
  meas["algorithms"] = measured;
  table.measurements_json = meas.dump();

  if (out_file.empty()) {
    table.source = "stdout";
    std::cout << to_json(table);
  } else {
    table.source = out_file;
    write_selection(table, out_file);
    (void)read_selection(out_file);  // what we wrote must load
  }
  progress("ranklab tune: alpha {}, beta {}/B, gamma {}/B, {} band(s), {} rule(s) in {:.1f} s{}\n",
           show_seconds(table.model.alpha), show_seconds(table.model.beta), show_seconds(table.model.gamma),
           table.bands.size(), table.rules.size(), seconds_since(start),
           out_file.empty() ? "" : "; use it with RANKLAB_SELECTION=" + out_file);
  return 0;
}

}  // namespace

void add_tune_command(CLI::App& app) {
  static tune_options o;
  auto* cmd = app.add_subcommand("tune", "Calibrate alpha, beta, gamma and measure the algorithms; write a selection table");
  cmd->add_option("-p", o.ps, fmt::format("Team sizes to measure, each 2..{} (default 2,4,8; --quick 2,4)", max_ranks));
  cmd->add_option("--sizes", o.sizes,
                  fmt::format("Message sizes in bytes per rank, as bench: 8,1Ki,64Ki or lo:hi[:factor], each at most "
                              "{} (default 8,64,512,4Ki,32Ki,256Ki; --quick 64,4Ki,64Ki)",
                              size_label(max_tune_bytes)));
  cmd->add_option("--coll", o.colls, "Only these collectives: C[,C...] or all (default: all)");
  cmd->add_option("--out", o.out, "Write the table to this file (the same as --json FILE; default: stdout)")
      ->check(writable_path());
  cmd->add_flag("--quick", o.quick, "Fewer sizes, p and batches: under a minute on 2 cores");
  cmd->add_option("--batches", o.batches,
                  fmt::format("Timed batches per measurement, 1..{} (median taken; 0: 5, --quick 3)", max_tune_batches))
      ->capture_default_str();
  cmd->add_option("--batch-ms", o.batch_ms,
                  fmt::format("Approximate length of one batch in ms, up to {} (0: 4, --quick 1)", max_batch_ms))
      ->capture_default_str();
  cmd->add_option("--show", o.show, "Check and print a selection table instead of measuring");
  add_output_options(cmd, o.output, "the selection table");
  // The table is tune's only output on stdout, so --json without FILE is the default.
  cmd->get_option("--json")->description(
      "Write the selection table to FILE (the same as --out); without FILE on stdout, the default");
  cmd->callback([] {
    const int rc = tune_command(o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace ranklab::tools
