// `ranklab bench`: times collectives for every requested algorithm, p and size (bytes per
// rank, as bench/peers/mpi_collectives.c means them), with the MPI peers' timing conventions,
// next to baselines measured in the same run (memcpy by one and two threads, oneTBB) and,
// with --compare, Open MPI and MPICH. Prints OSU-style tables; writes CSV, JSON, SVG and a
// dated Markdown result set on request. The parts live in bench_*.{hpp,cpp}.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "bench_measure.hpp"
#include "bench_peers.hpp"
#include "bench_plot.hpp"
#include "bench_report.hpp"
#include "bench_tbb.hpp"
#include "bench_util.hpp"
#include "cli_checks.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::tools {

namespace {

using namespace bench;
namespace fs = std::filesystem;

constexpr double max_seconds = 60;
constexpr int max_batches = 1000;

struct bench_options {
  std::string colls;
  std::string algos = "all";
  std::string ps = "2,4";
  std::string sizes = "8,1Ki,64Ki,1Mi";
  double seconds = 0.2;
  int batches = 7;
  bool quick = false;
  bool no_check = false;
  bool compare = false;
  bool no_baselines = false;
  output_options out;
  std::string csv, plot, output_dir, peers_dir;
  double peer_timeout = 0;  // 0: 60 s, --quick 20 s
  std::string max_memory = "4Gi";
  std::vector<std::string> argv;
};

// The algorithms to run for c: "auto" and registered names, in the order asked.
std::vector<std::string> algos_for(collective c, const std::vector<std::string>& asked) {
  std::vector<std::string> out;
  auto add = [&](const std::string& a) {
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  };
  for (const std::string& a : asked) {
    if (a == "all") {
      add("auto");
      for (const algorithm* x : registry::for_collective(c)) add(std::string(x->name));
    } else if (a == "auto" || registry::find(c, a) != nullptr) {
      add(a);
    }
  }
  return out;
}

std::string precondition_reason(const algorithm& a, const coll_args& args) {
  if (a.needs_commutative && !args.commutative) return "needs a commutative operator";
  return fmt::format("needs p to be a power of two (p = {})", args.p);
}

class progress {
 public:
  progress(int total, bool quiet) : total_(total), quiet_(quiet) {}
  void step(const std::string& what) {
    ++done_;
    if (!quiet_) fmt::print(stderr, "[{}/{}] {}\n", done_, total_, what);
  }
  void note(const std::string& what) const {
    if (!quiet_) fmt::print(stderr, "  {}\n", what);
  }

 private:
  int total_, done_ = 0;
  bool quiet_;
};

void fill_times(result_row& row, const measurement& m, int batches) {
  row.usec_median = m.usec.median;
  row.usec_min = m.usec.min;
  row.usec_max = m.usec.max;
  row.iterations = m.iterations;
  row.batches = batches;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << text;
  if (!out) throw std::runtime_error("error writing " + path);
}

// This process's arguments (for the record in the JSON and Markdown).
std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> out;
  std::string arg;
  while (std::getline(in, arg, '\0')) out.push_back(arg);
  if (out.empty()) out = {"ranklab", "bench"};
  return out;
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

int bench_command(const bench_options& o) {
  // ---- the request ------------------------------------------------------------------------
  const std::vector<collective> colls = parse_collective_list("--coll", o.colls);
  std::vector<int> ps;
  try {
    ps = parse_int_list(o.ps);
  } catch (const std::invalid_argument& e) {
    usage_failure(fmt::format("--p {}: {}", o.ps, e.what()));
  }
  for (int p : ps) check_range("--p", p, 1, max_ranks, "ranks are threads");
  std::uint64_t max_memory = 0;
  try {
    max_memory = parse_size(o.max_memory);
  } catch (const std::invalid_argument& e) {
    usage_failure(fmt::format("--max-memory {}: {}", o.max_memory, e.what()));
  }
  // A size whose buffers exceed --max-memory on one rank alone could only be skipped.
  const std::vector<std::uint64_t> sizes = parse_sizes("--sizes", o.sizes, max_memory, "--max-memory " + o.max_memory);
  check_real_range("--time", o.seconds, 0, max_seconds);
  check_range("--batches", o.batches, 1, max_batches);
  check_real_range("--peer-timeout", o.peer_timeout, 0, 3600, "0: 60, --quick 20", true);
  const std::vector<std::string> asked = split_list(o.algos);
  if (asked.empty()) usage_failure("--algo: no algorithm given (all, auto or names)");
  for (const std::string& a : asked) {
    if (a == "all" || a == "auto") continue;
    bool known = false;
    for (collective c : colls) known = known || registry::find(c, a) != nullptr;
    if (!known) {
      std::vector<std::string> names{"all", "auto"};
      for (collective c : colls)
        for (const algorithm* x : registry::for_collective(c))
          if (std::find(names.begin(), names.end(), x->name) == names.end()) names.emplace_back(x->name);
      usage_failure(fmt::format("--algo {}: not an algorithm of the requested collectives{}; valid: {}", a,
                                did_you_mean(a, names), fmt::join(names, ", ")));
    }
  }

  timing_options timing;
  timing.target_seconds = o.seconds;
  timing.batches = o.batches;
  if (o.quick) timing.target_seconds = 0.01, timing.batches = 3, timing.calib_seconds = 0.002;
  const bool check = !o.no_check;
  const bool baselines = !o.no_baselines;

  bench_results res;
  res.request.colls.clear();
  for (collective c : colls) res.request.colls.emplace_back(name(c));
  res.request.algos = asked;
  res.request.ps = ps;
  res.request.sizes = sizes;
  res.request.seconds = timing.target_seconds;
  res.request.batches = timing.batches;
  res.request.quick = o.quick;
  res.request.check = check;
  res.request.compare = o.compare;
  res.request.baselines = baselines;
  for (const std::string& a : o.argv) res.request.command_line += (res.request.command_line.empty() ? "" : " ") + a;

  // ---- the plan: which configurations run, which are skipped -----------------------------
  struct job {
    collective coll;
    int p;
    std::uint64_t bytes;
    std::string algo;
  };
  std::vector<job> jobs;
  int baseline_steps = 0;
  for (collective c : colls)
    for (int p : ps) {
      std::vector<std::uint64_t> bs;
      for (std::uint64_t s : c == collective::barrier ? std::vector<std::uint64_t>{0} : sizes) {
        const std::uint64_t b = reported_bytes(c, s);
        if (std::find(bs.begin(), bs.end(), b) == bs.end()) bs.push_back(b);
      }
      for (std::uint64_t b : bs) {
        for (const std::string& a : algos_for(c, asked)) {
          const call cl = make_bench_call(c, p, b, a);
          if (a != "auto") {
            const algorithm* alg = registry::find(c, a);
            if (!meets_preconditions(*alg, cl.args)) {
              res.skipped.push_back({std::string(name(c)), a, p, b, precondition_reason(*alg, cl.args)});
              continue;
            }
          }
          const std::uint64_t mem = buffer_bytes(cl) * (check ? 2 : 1);
          if (mem > max_memory) {
            res.skipped.push_back({std::string(name(c)), a, p, b,
                                   fmt::format("needs {} of buffers, more than --max-memory {}", size_label(mem), o.max_memory)});
            continue;
          }
          jobs.push_back({c, p, b, a});
        }
        if (baselines && c != collective::barrier) baseline_steps += 1;
      }
    }
  const int peer_steps = o.compare ? 2 * static_cast<int>(colls.size() * ps.size()) : 0;
  progress prog(static_cast<int>(jobs.size()) + baseline_steps + peer_steps, o.out.quiet);

  // ---- ranklab ------------------------------------------------------------------------------
  bool all_verified = true;
  for (const job& j : jobs) {
    const std::string coll(name(j.coll));
    prog.step(fmt::format("{} p={} {} {}", coll, j.p, size_label(j.bytes), j.algo));
    const call cl = make_bench_call(j.coll, j.p, j.bytes, j.algo);
    result_row row;
    row.impl = "ranklab", row.coll = coll, row.algo = j.algo, row.p = j.p, row.bytes = j.bytes;
    row.checked = check;
    try {
      const impl_result r = measure_ranklab(cl, timing, check);
      row.selected = j.algo == "auto" ? r.selected : "";
      row.verified = r.verified;
      if (r.timed) fill_times(row, r.m, timing.batches);
      if (check && !r.verified) {
        row.status = "wrong";
        row.note = r.difference;
        all_verified = false;
        fmt::print(stderr, "ranklab bench: {} {} p={} {}: result differs from the reference: {}\n", coll, j.algo, j.p,
                   size_label(j.bytes), r.difference);
      }
    } catch (const usage_error& e) {  // a precondition the registry does not state
      res.skipped.push_back({coll, j.algo, j.p, j.bytes, e.what()});
      prog.note("skipped: " + std::string(e.what()));
      continue;
    } catch (const std::exception& e) {
      row.status = "error";
      row.note = e.what();
      all_verified = false;
      fmt::print(stderr, "ranklab bench: {} {} p={} {}: {}\n", coll, j.algo, j.p, size_label(j.bytes), e.what());
    }
    res.rows.push_back(std::move(row));
  }

  // ---- baselines: oneTBB and memcpy of one rank's result ------------------------------------
  if (baselines) {
    std::map<std::pair<std::uint64_t, int>, measurement> memcpy_cache;  // (bytes, threads)
    for (collective c : colls) {
      if (c == collective::barrier) continue;
      const std::string coll(name(c));
      for (int p : ps) {
        std::vector<std::uint64_t> done;
        for (std::uint64_t s : sizes) {
          const std::uint64_t b = reported_bytes(c, s);
          if (std::find(done.begin(), done.end(), b) != done.end()) continue;
          done.push_back(b);
          prog.step(fmt::format("{} p={} {} baselines (tbb, memcpy)", coll, p, size_label(b)));
          const call cl = make_bench_call(c, p, b, "auto");
          result_row t;
          t.impl = "tbb", t.coll = coll, t.p = p, t.bytes = b, t.checked = check;
          if (buffer_bytes(cl) * (check ? 2 : 1) > max_memory) {
            t.status = "skipped";
            t.note = "more than --max-memory";
          } else {
            try {
              const auto r = measure_tbb(cl, timing, check);
              if (!r) {
                t.status = "n/a";
              } else {
                t.verified = r->verified;
                if (r->timed) fill_times(t, r->m, timing.batches);
                if (check && !r->verified) {
                  t.status = "wrong";
                  t.note = r->difference;
                  all_verified = false;
                  fmt::print(stderr, "ranklab bench: tbb baseline {} p={} {} is wrong: {}\n", coll, p, size_label(b), r->difference);
                }
              }
            } catch (const std::exception& e) {
              t.status = "error";
              t.note = e.what();
            }
          }
          res.rows.push_back(std::move(t));
          const std::uint64_t copy = result_bytes(c, p, b);
          for (int threads : {1, 2}) {
            auto key = std::pair{copy, threads};
            if (!memcpy_cache.count(key)) memcpy_cache[key] = measure_memcpy(copy, threads, timing);
            result_row m;
            m.impl = threads == 1 ? "memcpy" : "memcpy2";
            m.coll = coll, m.p = p, m.bytes = b;
            m.note = fmt::format("copy of {} bytes by {} thread(s)", copy, threads);
            fill_times(m, memcpy_cache[key], timing.batches);
            res.rows.push_back(std::move(m));
          }
        }
      }
    }
  }

  // ---- the MPI peers --------------------------------------------------------------------------
  if (o.compare) {
    peer_settings ps_settings;
    ps_settings.dir = o.peers_dir.empty() ? default_peers_dir() : o.peers_dir;
    ps_settings.timeout_seconds = o.peer_timeout > 0 ? o.peer_timeout : (o.quick ? 20 : 60);
    ps_settings.time_per_size = timing.target_seconds;
    ps_settings.batches = timing.batches;
    ps_settings.check = check;
    for (collective c : colls)
      for (int p : ps)
        for (const char* impl : {"openmpi", "mpich"}) {
          const std::string coll(name(c));
          prog.step(fmt::format("{} p={} {}", coll, p, impl));
          peer_run run = run_peer(ps_settings, impl, c, p, sizes);
          if (run.status != "ok") prog.note(fmt::format("{}: {}", run.status, run.detail));
          std::vector<std::uint64_t> want;
          for (std::uint64_t s : c == collective::barrier ? std::vector<std::uint64_t>{0} : sizes) {
            const std::uint64_t b = reported_bytes(c, s);
            if (std::find(want.begin(), want.end(), b) == want.end()) want.push_back(b);
          }
          for (std::uint64_t b : want) {
            result_row row;
            row.impl = impl, row.coll = coll, row.p = p, row.bytes = b;
            row.checked = check;
            const peer_row* got = nullptr;
            for (const peer_row& pr : run.rows)
              if (pr.coll == coll && pr.p == p && pr.bytes == b) got = &pr;
            if (got != nullptr) {
              row.usec_median = got->usec;
              row.mode = got->mode;
              row.batches = timing.batches;
              row.verified = check;  // the peer aborts on a wrong result
            } else {
              row.status = run.status == "ok" ? "missing" : run.status;
              row.note = run.detail;
            }
            res.rows.push_back(std::move(row));
          }
          res.peer_runs.push_back(std::move(run));
        }
  }

  // ---- output -------------------------------------------------------------------------------
  if (o.out.text()) {
    print_tables(stdout, res);
    if (o.compare) print_comparison(stdout, res);
    std::fflush(stdout);
  }
  const bool want_files = o.out.json || !o.output_dir.empty();
  if (want_files || o.compare) res.machine = describe_machine();
  if (!o.csv.empty()) write_file(o.csv, to_csv(res));
  if (o.out.json) write_json(o.out, to_json(res).dump(2));
  if (!o.plot.empty()) write_file(o.plot, render_svg(res));
  if (!o.output_dir.empty()) {
    fs::create_directories(o.output_dir);
    std::string tag;
    if (split_list(o.colls) == std::vector<std::string>{"all"}) tag = "all";
    else
      for (collective c : colls) tag += (tag.empty() ? "" : "-") + std::string(name(c));
    if (tag.size() > 80) tag = tag.substr(0, 80);
    const fs::path base = fs::path(o.output_dir) / (today() + "-" + tag);
    const std::string svg_name = base.filename().string() + ".svg";
    write_file(base.string() + ".json", to_json(res).dump(2) + "\n");
    write_file(base.string() + ".csv", to_csv(res));
    write_file(base.string() + ".svg", render_svg(res));
    write_file(base.string() + ".md", to_markdown(res, svg_name));
    if (!o.out.quiet) fmt::print(stderr, "wrote {}.{{json,csv,svg,md}}\n", base.string());
  }
  return all_verified ? 0 : 1;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  static bench_options o;
  auto* cmd = app.add_subcommand(
      "bench", "Time collectives per algorithm, p and size against memcpy, oneTBB and (--compare) Open MPI / MPICH");
  cmd->add_option("--coll", o.colls,
                  fmt::format("Collectives: C[,C...] or all; C one of {}", fmt::join(collective_names(), ", ")))
      ->required();
  cmd->add_option("--algo", o.algos, "all (every registered algorithm and auto), auto, or names")->capture_default_str();
  cmd->add_option("-p,--p", o.ps, fmt::format("Numbers of ranks, e.g. 2,4,8,16 (each 1..{})", max_ranks))
      ->capture_default_str();
  cmd->add_option("--sizes", o.sizes,
                  "Bytes per rank (as bench/peers/mpi_collectives.c): 8,1Ki,64Ki,1Mi or lo:hi[:factor]")
      ->capture_default_str();
  cmd->add_option("--time", o.seconds,
                  fmt::format("Seconds of timed batches per configuration (> 0, <= {})", max_seconds))
      ->capture_default_str();
  cmd->add_option("--batches", o.batches, fmt::format("Timed batches, 1..{} (the median is reported)", max_batches))
      ->capture_default_str();
  cmd->add_flag("--quick", o.quick, "Short batches (3 of ~3 ms): for tests and a first look");
  cmd->add_flag("--no-check", o.no_check, "Skip the check against the sequential reference");
  cmd->add_flag("--no-baselines", o.no_baselines, "Skip the memcpy and oneTBB baselines");
  cmd->add_flag("--compare", o.compare, "Also run the Open MPI and MPICH peers (bench/peers)");
  cmd->add_option("--peers-dir", o.peers_dir, "Where mpi_collectives.{openmpi,mpich} are (default: <build>/bench/peers)");
  cmd->add_option("--peer-timeout", o.peer_timeout, "Seconds per peer launch before it is killed (default 60, --quick 20)");
  cmd->add_option("--csv", o.csv, "Write every row as CSV")->check(writable_path());
  cmd->add_option("--plot", o.plot, "Write an SVG: time against size, log-log, a panel per (coll, p)")
      ->check(writable_path());
  cmd->add_option("--output-dir", o.output_dir, "Write DIR/YYYY-MM-DD-<colls>.{json,csv,svg,md}");
  cmd->add_option("--max-memory", o.max_memory, "Skip configurations whose buffers need more")->capture_default_str();
  add_output_options(cmd, o.out, "every row, the request and the machine");
  cmd->callback([] {
    o.argv = own_command_line();
    const int rc = bench_command(o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace ranklab::tools
