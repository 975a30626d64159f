// `ranklab bench`: times collectives for every requested algorithm, p and size (bytes per
// rank, as bench/peers/mpi_collectives.c means them), with the MPI peers' timing conventions,
// next to baselines measured in the same run (memcpy by one and two threads, oneTBB, OpenMP)
// and, with --compare, Open MPI and MPICH, and next to the machine's floor measured in the
// same run too (a cache line bounced between two cores). Warns when the machine is busy
// (--require-quiet refuses to run). Prints OSU-style tables; writes CSV, JSON, SVG and a
// dated Markdown result set on request. The harness lives in tools/bench/.
// With --backend mpi the ranks are MPI processes instead of threads: ranklab's one-ported
// algorithms over MPI point-to-point against the same MPI's native collectives, in one run
// per (MPI, p) of mpi/bench/ranklab_mpi_bench (tools/bench/mpi_sweep.hpp).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/cache_line.hpp"
#include "bench/machine.hpp"
#include "bench/mpi_report.hpp"
#include "bench/mpi_sweep.hpp"
#include "bench/plot.hpp"
#include "bench/report.hpp"
#include "bench/sweep.hpp"
#include "bench/workload.hpp"
#include "cli/checks.hpp"
#include "cli/option_parse.hpp"
#include "commands/commands.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::tools {

namespace {

using namespace bench;
namespace fs = std::filesystem;

constexpr double max_seconds = 60;
constexpr int max_batches = 1000;
constexpr int max_mpi_processes = 256;

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
  bool rewrite = false;
  bool require_quiet = false;
  output_options out;
  std::string csv, plot, output_dir, peers_dir;
  double peer_timeout = 0;  // 0: 60 s, --quick 20 s
  std::string max_memory = "4Gi";
  std::string backend = "threads";
  std::string mpi = "both";
  std::string mpi_dir;
  double max_time = -1;  // --backend mpi: budget per size and variant; < 0: the program's default
  long max_iters = 0;
  std::vector<std::string> argv;
};

// Every --algo name must be an algorithm of one of the collectives asked for.
void check_algorithms(const std::vector<std::string>& asked, const std::vector<collective>& colls) {
  if (asked.empty()) usage_failure("--algo: no algorithm given (all, auto or names)");
  for (const std::string& a : asked) {
    if (a == "all" || a == "auto") continue;
    bool known = false;
    for (collective c : colls) known = known || registry::find(c, a) != nullptr;
    if (known) continue;
    std::vector<std::string> names{"all", "auto"};
    for (collective c : colls)
      for (const algorithm* x : registry::for_collective(c))
        if (std::find(names.begin(), names.end(), x->name) == names.end()) names.emplace_back(x->name);
    usage_failure(fmt::format("--algo {}: not an algorithm of the requested collectives{}; valid: {}", a,
                              did_you_mean(a, names), fmt::join(names, ", ")));
  }
}

// The sweep the options ask for, every value checked before anything runs.
sweep_settings checked_settings(const bench_options& o) {
  sweep_settings s;
  s.colls = parse_collective_list("--coll", o.colls);
  try {
    s.ps = parse_int_list(o.ps);
  } catch (const std::invalid_argument& e) {
    usage_failure(fmt::format("--p {}: {}", o.ps, e.what()));
  }
  for (int p : s.ps) check_range("--p", p, 1, max_ranks, "ranks are threads");
  try {
    s.max_memory = parse_size(o.max_memory);
  } catch (const std::invalid_argument& e) {
    usage_failure(fmt::format("--max-memory {}: {}", o.max_memory, e.what()));
  }
  s.max_memory_text = o.max_memory;
  // A size whose buffers exceed --max-memory on one rank alone could only be skipped.
  s.sizes = parse_sizes("--sizes", o.sizes, s.max_memory, "--max-memory " + o.max_memory);
  check_real_range("--time", o.seconds, 0, max_seconds);
  check_range("--batches", o.batches, 1, max_batches);
  check_real_range("--peer-timeout", o.peer_timeout, 0, 3600, "0: 60, --quick 20", true);
  s.algos = split_list(o.algos);
  check_algorithms(s.algos, s.colls);

  s.timing.target_seconds = o.seconds;
  s.timing.batches = o.batches;
  if (o.quick) s.timing.target_seconds = 0.01, s.timing.batches = 3, s.timing.calib_seconds = 0.002;
  s.check = !o.no_check;
  s.rewrite = o.rewrite;
  // The rivals and baselines reuse their data unchanged: set beside a rewriting ranklab,
  // their figures would not time the same thing.
  if (s.rewrite && o.compare) usage_failure("--rewrite times ranklab alone: drop --compare");
  s.baselines = !o.no_baselines && !s.rewrite;
  s.compare = o.compare;
  if (s.compare) s.peers.dir = o.peers_dir.empty() ? default_peers_dir() : o.peers_dir;
  s.peers.timeout_seconds = o.peer_timeout > 0 ? o.peer_timeout : (o.quick ? 20 : 60);
  s.peers.time_per_size = s.timing.target_seconds;
  s.peers.batches = s.timing.batches;
  s.peers.check = s.check;
  s.quiet = o.out.quiet;
  return s;
}

// The request as the results record it, in the fields both backends share (the settings are
// a sweep_settings or an mpi_sweep_settings).
template <class Settings>
bench_request request_core(const Settings& s, const bench_options& o, double seconds, int batches) {
  bench_request q;
  for (collective c : s.colls) q.colls.emplace_back(name(c));
  q.algos = s.algos;
  q.ps = s.ps;
  q.sizes = s.sizes;
  q.seconds = seconds;
  q.batches = batches;
  q.quick = o.quick;
  q.check = s.check;
  for (const std::string& a : o.argv) q.command_line += (q.command_line.empty() ? "" : " ") + a;
  return q;
}

bench_request request_of(const sweep_settings& s, const bench_options& o) {
  bench_request q = request_core(s, o, s.timing.target_seconds, s.timing.batches);
  q.compare = s.compare;
  q.baselines = s.baselines;
  q.rewrite = s.rewrite;
  return q;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << text;
  if (!out) throw std::runtime_error("error writing " + path);
}

// --output-dir: DIR/YYYY-MM-DD-<tag> (tag cut to 80 characters), DIR created.
fs::path result_base(const bench_options& o, std::string tag) {
  fs::create_directories(o.output_dir);
  if (tag.size() > 80) tag = tag.substr(0, 80);
  return fs::path(o.output_dir) / (local_date() + "-" + tag);
}

// Writes base.<extension> for each (extension, text), in order, and says so.
void write_result_files(const bench_options& o, const fs::path& base,
                        const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> extensions;
  for (const auto& [extension, text] : files) {
    write_file(base.string() + "." + extension, text);
    extensions.push_back(extension);
  }
  if (!o.out.quiet) fmt::print(stderr, "wrote {}.{{{}}}\n", base.string(), fmt::join(extensions, ","));
}

// --output-dir: DIR/YYYY-MM-DD-<colls>.{json,csv,svg,md}.
void write_result_set(const bench_options& o, const sweep_settings& s, const bench_results& res) {
  std::string tag;
  if (split_list(o.colls) == std::vector<std::string>{"all"})
    tag = "all";
  else
    for (collective c : s.colls) tag += (tag.empty() ? "" : "-") + std::string(name(c));
  const fs::path base = result_base(o, tag);
  const std::string svg_name = base.filename().string() + ".svg";
  write_result_files(o, base,
                     {{"json", to_json(res).dump(2) + "\n"},
                      {"csv", to_csv(res)},
                      {"svg", render_svg(res)},
                      {"md", to_markdown(res, svg_name)}});
}

// What the run measured of the machine itself, printed before the tables and recorded in
// the machine table.
struct machine_floor {
  load_check load_before;
  cache_line_figures cache_line;
};

void add_floor(nlohmann::ordered_json& m, const machine_floor& f) {
  m["load_average_before"] = f.load_before.load1 < 0
                                 ? nlohmann::ordered_json("unknown")
                                 : nlohmann::ordered_json(fmt::format("{:.2f}", f.load_before.load1));
  add_cache_line(m, f.cache_line);
}

void print_floor(const machine_floor& f) {
  fmt::print("# {}\n", describe(f.cache_line));
  if (f.load_before.load1 >= 0)
    fmt::print("# 1-minute load average at the start {:.2f} on {} core(s){}\n\n", f.load_before.load1,
               f.load_before.cores, f.load_before.busy ? ": busy, figures are noisy" : "");
}

void write_outputs(const bench_options& o, const sweep_settings& s, bench_results& res, const machine_floor& floor) {
  if (o.out.text()) {
    print_floor(floor);
    print_tables(stdout, res);
    if (o.compare) print_comparison(stdout, res);
    std::fflush(stdout);
  }
  const bool want_files = o.out.json || !o.output_dir.empty();
  if (want_files || o.compare) {
    res.machine = describe_machine();
    add_floor(res.machine, floor);
  }
  if (!o.csv.empty()) write_file(o.csv, to_csv(res));
  if (o.out.json) write_json(o.out, to_json(res).dump(2));
  if (!o.plot.empty()) write_file(o.plot, render_svg(res));
  if (!o.output_dir.empty()) write_result_set(o, s, res);
}

// ---- --backend mpi ----------------------------------------------------------------------

// The MPIs asked for whose ranklab_mpi_bench exists; a usage error naming what to build if
// one asked for by name (or, with "both", every one) is missing.
std::vector<std::string> available_mpis(const bench_options& o, const std::string& dir) {
  const std::vector<std::string> asked =
      o.mpi == "both" ? std::vector<std::string>{"openmpi", "mpich"} : std::vector<std::string>{o.mpi};
  std::vector<std::string> found;
  for (const std::string& impl : asked)
    if (!mpi_bench_program(dir, impl).empty()) found.push_back(impl);
  const auto where = fmt::format("{}/<mpi>/ranklab_mpi_bench", dir.empty() ? "<build>/mpi" : dir);
  if (found.empty() || (o.mpi != "both" && found.size() != asked.size()))
    usage_failure(
        fmt::format("--backend mpi: no MPI benchmark program for {} (looked for {}); build ranklab with an MPI "
                    "(Open MPI or MPICH, found by pkg-config) and -DRANKLAB_BUILD_BENCH=ON (targets "
                    "ranklab_mpi_bench_<mpi>), or point --mpi-dir at <build>/mpi",
                    fmt::join(asked, " and "), where));
  if (found.size() != asked.size() && !o.out.quiet)
    fmt::print(stderr, "note: no ranklab_mpi_bench for {}: measuring {} only\n",
               asked[0] == found[0] ? asked[1] : asked[0], found[0]);
  return found;
}

// Every --algo name must be a one-ported algorithm of a requested collective: processes
// cannot run the shared-memory "direct" ones.
void check_mpi_algorithms(const std::vector<std::string>& asked, const std::vector<collective>& colls) {
  std::vector<std::string> names{"all", "auto"};
  for (collective c : colls)
    for (const algorithm* x : registry::for_collective(c))
      if (x->one_ported && std::find(names.begin(), names.end(), x->name) == names.end()) names.emplace_back(x->name);
  for (const std::string& a : asked)
    if (std::find(names.begin(), names.end(), a) == names.end())
      usage_failure(fmt::format("--algo {}: not a one-ported algorithm of the requested collectives{}; valid: {}", a,
                                did_you_mean(a, names), fmt::join(names, ", ")));
}

std::vector<collective> mpi_collectives(const std::string& text) {
  const std::vector<collective>& ok = mpi_bench_collectives();
  if (split_list(text) == std::vector<std::string>{"all"}) return ok;
  std::vector<collective> colls = parse_collective_list("--coll", text);
  for (collective c : colls)
    if (std::find(ok.begin(), ok.end(), c) == ok.end()) {
      std::vector<std::string_view> names;
      for (collective x : ok) names.push_back(name(x));
      usage_failure(fmt::format("--coll {}: --backend mpi times {} (or all)", name(c), fmt::join(names, ", ")));
    }
  return colls;
}

mpi_sweep_settings checked_mpi_settings(const bench_options& o) {
  for (const auto& [given, option] :
       {std::pair{o.compare, "--compare"}, std::pair{o.no_baselines, "--no-baselines"},
        std::pair{!o.plot.empty(), "--plot"}, std::pair{!o.peers_dir.empty(), "--peers-dir"}})
    if (given)
      usage_failure(
          fmt::format("{} does not apply to --backend mpi (the native MPI collective is always measured)", option));
  mpi_sweep_settings s;
  s.colls = mpi_collectives(o.colls);
  try {
    s.ps = parse_int_list(o.ps);
  } catch (const std::invalid_argument& e) {
    usage_failure(fmt::format("--p {}: {}", o.ps, e.what()));
  }
  for (int p : s.ps) check_range("--p", p, 1, max_mpi_processes, "ranks are MPI processes");
  s.sizes = parse_sizes("--sizes", o.sizes, std::uint64_t{1} << 30, "MPI's int counts");
  check_real_range("--time", o.seconds, 0, max_seconds);
  check_range("--batches", o.batches, 1, max_batches);
  check_real_range("--peer-timeout", o.peer_timeout, 0, 86400, "0: estimated from the sweep", true);
  if (o.max_time >= 0) check_real_range("--max-time", o.max_time, 0, 3600, "0: no budget", true);
  check_range("--max-iters", o.max_iters, 0, 100000000, "0: no cap");
  s.algos = split_list(o.algos);
  if (s.algos.empty()) usage_failure("--algo: no algorithm given (all, auto or names)");
  check_mpi_algorithms(s.algos, s.colls);
  s.seconds = o.quick ? 0.01 : o.seconds;
  s.batches = o.quick ? 3 : o.batches;
  s.max_seconds = o.max_time >= 0 ? o.max_time : (o.quick ? 0.5 : -1);
  s.max_iters = o.max_iters;
  s.check = !o.no_check;
  s.dir = o.mpi_dir.empty() ? default_mpi_bench_dir() : o.mpi_dir;
  s.impls = available_mpis(o, s.dir);
  s.timeout_seconds = o.peer_timeout;
  s.quiet = o.out.quiet;
  return s;
}

void write_mpi_outputs(const bench_options& o, bench_results& res, const std::string& load_before,
                       const machine_floor& floor) {
  if (o.out.text()) {
    print_floor(floor);
    print_mpi_tables(stdout, res);
    std::fflush(stdout);
  }
  res.machine = describe_machine();
  add_cache_line(res.machine, floor.cache_line);
  res.machine["load_average_before"] = load_before;  // "load_average": at the end
  nlohmann::ordered_json j = to_json(res);
  j["request"]["backend"] = "mpi";
  j["request"]["mpi"] = o.mpi;
  if (!o.csv.empty()) write_file(o.csv, to_csv(res));
  if (o.out.json) write_json(o.out, j.dump(2));
  if (o.output_dir.empty()) return;
  std::string tag = "mpi";
  for (const std::string& c : res.request.colls) tag += "-" + c;
  write_result_files(o, result_base(o, tag),
                     {{"json", j.dump(2) + "\n"}, {"csv", to_csv(res)}, {"md", mpi_markdown(res)}});
}

// Before anything is measured: the load (a warning when busy; with --require-quiet a busy
// machine ends the command with status 2), then the cache-line round trip.
machine_floor measure_floor(const bench_options& o, const timing_options& timing) {
  machine_floor f;
  f.load_before = current_load();
  if (f.load_before.busy) {
    if (o.require_quiet) {
      fmt::print(stderr, "ranklab bench: refusing to run (--require-quiet): {}\n", f.load_before.message);
      throw CLI::RuntimeError(usage_exit_code);
    }
    fmt::print(stderr, "ranklab bench: warning: {} (--require-quiet refuses to run then)\n", f.load_before.message);
  }
  f.cache_line = measure_cache_line(timing);
  return f;
}

int bench_mpi_command(const bench_options& o) {
  const mpi_sweep_settings s = checked_mpi_settings(o);
  timing_options timing;
  timing.target_seconds = s.seconds, timing.batches = s.batches;
  if (o.quick) timing.calib_seconds = 0.002;
  const machine_floor floor = measure_floor(o, timing);
  const std::string load_before = load_average();
  bench_results res;
  res.request = request_core(s, o, s.seconds, s.batches);
  res.request.baselines = false;
  const bool ok = run_mpi_sweep(s, res);
  write_mpi_outputs(o, res, load_before, floor);
  return ok ? 0 : 1;
}

int bench_command(const bench_options& o) {
  if (o.backend == "mpi") return bench_mpi_command(o);
  const sweep_settings s = checked_settings(o);
  const machine_floor floor = measure_floor(o, s.timing);
  bench_results res;
  res.request = request_of(s, o);
  const bool all_verified = run_sweep(s, res);
  write_outputs(o, s, res, floor);
  return all_verified ? 0 : 1;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  static bench_options o;
  auto* cmd = app.add_subcommand(
      "bench",
      "Time collectives per algorithm, p and size against memcpy, oneTBB, OpenMP and (--compare) Open MPI / "
      "MPICH, next to the cache-line round trip between two cores; with --backend mpi, as MPI processes against "
      "the MPI's native collectives");
  cmd->add_option("--coll", o.colls,
                  fmt::format("Collectives: C[,C...] or all; C one of {}", fmt::join(collective_names(), ", ")))
      ->required();
  cmd->add_option("--algo", o.algos, "all (every registered algorithm and auto), auto, or names")
      ->capture_default_str();
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
  cmd->add_flag("--no-baselines", o.no_baselines, "Skip the memcpy, oneTBB and OpenMP baselines");
  cmd->add_flag("--rewrite", o.rewrite,
                "Every rank rewrites the data it sends before each timed call (memset, timed with it), as a "
                "program producing new data does, instead of sending the same cache-resident data again; "
                "ranklab alone (no baselines, not with --compare)");
  cmd->add_flag("--require-quiet", o.require_quiet,
                "Refuse to run (exit status 2) when the 1-minute load average is above 1.0 per core (without it: a "
                "warning)");
  cmd->add_flag("--compare", o.compare, "Also run the Open MPI and MPICH peers (bench/peers)");
  cmd->add_option("--peers-dir", o.peers_dir,
                  "Where mpi_collectives.{openmpi,mpich} are (default: <build>/bench/peers)");
  cmd->add_option("--peer-timeout", o.peer_timeout,
                  "Seconds per peer launch before it is killed (default 60, --quick 20; --backend mpi: per "
                  "launch of ranklab_mpi_bench, default estimated from the sweep)");
  cmd->add_option("--csv", o.csv, "Write every row as CSV")->check(writable_path());
  cmd->add_option("--plot", o.plot, "Write an SVG: time against size, log-log, a panel per (coll, p)")
      ->check(writable_path());
  cmd->add_option("--output-dir", o.output_dir, "Write DIR/YYYY-MM-DD-<colls>.{json,csv,svg,md}");
  cmd->add_option("--max-memory", o.max_memory, "Skip configurations whose buffers need more")->capture_default_str();
  cmd->add_option("--backend", o.backend,
                  "threads: ranks are threads of this process; mpi: MPI processes, ranklab's one-ported "
                  "algorithms over MPI point-to-point against the MPI's native collectives")
      ->check(CLI::IsMember({"threads", "mpi"}))
      ->capture_default_str();
  cmd->add_option("--mpi", o.mpi, "--backend mpi: openmpi, mpich or both (those built)")
      ->check(CLI::IsMember({"openmpi", "mpich", "both"}))
      ->capture_default_str();
  cmd->add_option("--mpi-dir", o.mpi_dir,
                  "--backend mpi: where <mpi>/ranklab_mpi_bench is (default: <dir of ranklab>/mpi)");
  cmd->add_option("--max-time", o.max_time,
                  "--backend mpi: seconds per size and variant, calibration included, before fewer batches "
                  "are run (default max(2, 10 * --time); 0: none)");
  cmd->add_option("--max-iters", o.max_iters,
                  "--backend mpi: calls per batch at most (bounds slow oversubscribed runs; 0: no cap)");
  add_output_options(cmd, o.out, "every row, the request and the machine");
  cmd->callback([] {
    o.argv = own_command_line();
    const int rc = bench_command(o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace ranklab::tools
