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
//                comm::run_collective, batches interleaved across algorithms, ranked by the
//                median over batches of each one's time over the batch's fastest (over all
//                --passes, a whole sweep apart); the fastest per band, then the next fastest
//                until one without preconditions, so that "auto" falls through to a measured
//                choice.
// With --levels it fits alpha, beta, gamma per level of this machine's hierarchy instead and
// writes a level-cost file (ranklab/hierarchy.hpp) that comms take from RANKLAB_LEVEL_COSTS.
// Progress goes to stderr; the table to --out (or stdout). The measurements live in
// tools/tune/ (cost_fit: alpha, beta, gamma; ranking: the rules; levels: the level costs).
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <ranges>
#include <string>
#include <vector>

#include "bench/machine.hpp"
#include "bench/timing.hpp"
#include "cli/checks.hpp"
#include "cli/option_parse.hpp"
#include "commands/commands.hpp"
#include "ranklab/hierarchy.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/selection.hpp"
#include "ranklab/team.hpp"
#include "bench/mpi_sweep.hpp"
#include "bench/workload.hpp"
#include "tune/cost_fit.hpp"
#include "tune/levels.hpp"
#include "tune/mpi_rules.hpp"
#include "tune/output.hpp"
#include "tune/ranking.hpp"

namespace ranklab::tools {

namespace {

using bench::clock_type;
using bench::seconds_since;
using ojson = nlohmann::ordered_json;
using tune::progress;
using tune::show_bytes;
using tune::show_seconds;

struct tune_options {
  std::string ps;     // empty: 2,4,8 (--quick 2,4)
  std::string sizes;  // empty: see add_tune_command
  std::string colls;  // empty: all
  std::string out;    // the same as --json FILE
  std::string show;
  bool quick = false;
  bool levels = false;  // --levels: level costs instead of a selection table
  std::int64_t batches = 0;  // 0: 5, --quick 3
  double batch_ms = 0;       // 0: 4 ms, --quick 1 ms
  std::int64_t passes = 1;
  output_options output;
  // --backend mpi
  std::string backend = "threads";
  std::string mpi = "openmpi";
  std::string mpi_dir;       // empty: <directory of this binary>/mpi
  double seconds = 0;        // per variant and size; 0: 0.05 s, --quick 0.01 s
  double margin = 0.1;       // ranklab must beat native by this fraction
  double peer_timeout = 0;   // 0: estimated from the sweep
};

// Bounds of a measurement: every algorithm runs at every size, so huge sizes are typos.
constexpr std::uint64_t max_tune_bytes = 64 << 20;
constexpr std::int64_t max_tune_batches = 1000;
constexpr double max_batch_ms = 1000;
constexpr std::int64_t max_passes = 100;

// What to measure and where the table goes, every option checked before the first
// measurement: a typo must not cost minutes.
struct tune_request {
  tune::ranking_plan plan;
  std::string out_file;  // empty: stdout
};

tune_request checked_request(const tune_options& o) {
  tune_request r;
  std::vector<int>& ps = r.plan.ps;
  ps = o.quick ? std::vector<int>{2, 4} : std::vector<int>{2, 4, 8};
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
  std::vector<std::uint64_t>& sizes = r.plan.sizes;
  sizes = o.quick ? std::vector<std::uint64_t>{64, 4096, 65536}
                  : std::vector<std::uint64_t>{8, 64, 512, 4096, 32768, 262144};
  if (!o.sizes.empty()) sizes = parse_sizes("--sizes", o.sizes, max_tune_bytes, "per rank");
  for (std::uint64_t& s : sizes) s = std::max<std::uint64_t>(8, s / 8 * 8);  // whole float64 elements
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  for (collective c : parse_collective_list("--coll", o.colls.empty() ? "all" : o.colls))
    if (!registry::for_collective(c).empty()) r.plan.colls.push_back(c);
  if (o.batches != 0) check_range("--batches", o.batches, 1, max_tune_batches, "or 0: 5, --quick 3");
  if (o.batch_ms != 0) check_real_range("--batch-ms", o.batch_ms, 0, max_batch_ms, "or 0: 4, --quick 1");
  check_range("--passes", o.passes, 1, max_passes, "sweeps over every configuration");
  // --out FILE is the older spelling of --json FILE.
  r.out_file = o.output.json_to_stdout() ? "" : o.output.json_file;
  if (!o.out.empty() && !r.out_file.empty() && o.out != r.out_file)
    usage_failure(fmt::format("--out {} and --json {}: give the file once", o.out, r.out_file));
  if (!o.out.empty()) r.out_file = o.out;
  r.plan.batches = o.batches > 0 ? static_cast<int>(o.batches) : (o.quick ? 3 : 5);
  r.plan.batch_seconds = (o.batch_ms > 0 ? o.batch_ms : (o.quick ? 1.0 : 4.0)) * 1e-3;
  r.plan.passes = static_cast<int>(o.passes);
  return r;
}

// Steps 1 and 2: the cost model of this machine.
struct calibration {
  std::vector<tune::sample> ping_pong;
  tune::line_fit global;
  std::vector<cost_band> bands;
  tune::kernel_rates rates;
  double gamma = 0;
};

calibration calibrate(bool quick, int batches, const team_options& topt) {
  calibration cal;
  std::vector<std::uint64_t> pp_sizes =
      quick ? std::vector<std::uint64_t>{0, 64, 1024, 2048, 4096, 65536, 1 << 20}
            : std::vector<std::uint64_t>{0, 8, 64, 256, 1024, 2048, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20};
  // Many short batches: on a loaded machine a short window in which both threads keep their
  // cores is far more likely than a long one, and the fastest batch is what we keep.
  const int short_batches = 8 * batches;
  const double short_batch_seconds = 0.25e-3;
  progress("[1/3] ping-pong between two rank threads at {} sizes (eager limit {} B), fastest of {} batches\n",
           pp_sizes.size(), topt.eager_limit, short_batches);
  cal.ping_pong = tune::ping_pong(pp_sizes, short_batches, short_batch_seconds);
  for (const tune::sample& s : cal.ping_pong)
    progress("      {:>10}  {}\n", show_bytes(static_cast<std::uint64_t>(s.bytes)), show_seconds(s.seconds));
  const tune::line_fit& global = cal.global = tune::fit_line(cal.ping_pong);
  cal.bands = tune::fit_bands(cal.ping_pong, global);
  progress("      fit: alpha {}, beta {}/B ({:.2f} GB/s), max relative error {:.0f}%\n", show_seconds(global.alpha),
           show_seconds(global.beta), global.beta > 0 ? 1e-9 / global.beta : 0.0, 100 * global.max_rel_error);
  for (const cost_band& b : cal.bands)
    progress("      band {:>12}: alpha {}, beta {}/B\n",
             b.max_bytes == unbounded_bytes ? std::string("rest") : "<= " + show_bytes(b.max_bytes),
             show_seconds(b.alpha), show_seconds(b.beta));

  progress("[2/3] reduction kernel (sum) throughput\n");
  const tune::kernel_rates& g = cal.rates = tune::reduction_rates(short_batches, short_batch_seconds);
  cal.gamma = bench::median({g.int32, g.float32, g.float64});
  progress("      int32 {}/B, float32 {}/B, float64 {}/B -> gamma {}/B\n", show_seconds(g.int32),
           show_seconds(g.float32), show_seconds(g.float64), show_seconds(cal.gamma));
  return cal;
}

// The table's record of where, when and how it was measured.
std::string machine_record(const tune_options& o, const tune_request& r, const machine_info& mi,
                           const std::string& load_before, const team_options& topt) {
  ojson m;
  m["description"] = mi.description;
  m["cores"] = mi.cores;
  m["hardware_threads"] = mi.hardware_threads;
  m["numa_nodes"] = mi.numa_nodes;
  m["hostname"] = bench::host_name();
  m["date"] = bench::utc_timestamp();
  m["tool"] = o.quick ? "ranklab tune --quick" : "ranklab tune";
  m["load_average_before"] = load_before;
  m["load_average_after"] = bench::load_average();
  m["eager_limit"] = topt.eager_limit;
  m["binding"] = std::string(name(topt.binding));
  m["p"] = r.plan.ps;
  m["sizes"] = r.plan.sizes;
  m["batches"] = r.plan.batches;
  m["batch_ms"] = r.plan.batch_seconds * 1e3;
  m["passes"] = r.plan.passes;
  return m.dump();
}

std::string measurements_record(const calibration& cal, const ojson& algorithms) {
  ojson pp = ojson::array();
  for (const tune::sample& s : cal.ping_pong)
    pp.push_back({{"bytes", static_cast<std::uint64_t>(s.bytes)}, {"seconds", s.seconds}});
  ojson meas;
  meas["ping_pong_one_way"] = pp;
  meas["fit_max_relative_error"] = cal.global.max_rel_error;
  meas["gamma_by_type"] = {{"int32", cal.rates.int32}, {"float32", cal.rates.float32}, {"float64", cal.rates.float64}};
  meas["algorithms"] = algorithms;
  return meas.dump();
}

void show_level_costs(const std::string& path) {
  const level_costs c = read_level_costs(path);
  fmt::print("level costs {}\n", c.source);
  const auto machine = nlohmann::json::parse(c.machine_json);
  for (const char* key : {"description", "hostname", "date", "tool"})
    if (machine.contains(key) && machine[key].is_string())
      fmt::print("{:<11} {}\n", key == std::string("description") ? "machine" : key, machine[key].get<std::string>());
  for (const level_cost& v : c.levels)
    fmt::print("{:<8} alpha {}  beta {}/B  gamma {}/B  ({}, load {}{}{})\n", v.name, show_seconds(v.cost.alpha),
               show_seconds(v.cost.beta), show_seconds(v.cost.gamma),
               v.max_bytes == 0 ? std::string("sizes not recorded")
                                : show_bytes(v.min_bytes) + " .. " + show_bytes(v.max_bytes),
               v.load_average.empty() ? "not recorded" : v.load_average,
               v.cores.size() == 2 ? fmt::format(", cores {} and {}", v.cores[0], v.cores[1]) : "",
               v.note.empty() ? "" : "; " + v.note);
}

// Whether `path` holds a level-cost file rather than a selection table (by its "format").
bool is_level_cost_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;  // read_selection says why
  const auto doc = nlohmann::json::parse(in, nullptr, false);
  return doc.is_object() && doc.contains("format") && doc["format"] == "ranklab-level-costs";
}

void show_table(const std::string& path) {
  if (is_level_cost_file(path)) return show_level_costs(path);
  const selection_table t = read_selection(path);
  fmt::print("table      {}\n", t.source);
  const auto machine = nlohmann::json::parse(t.machine_json);
  for (const char* key : {"description", "hostname", "date", "tool", "load_average_before", "load_average_after"})
    if (machine.contains(key))
      fmt::print("{:<10} {}\n", key == std::string("description") ? "machine" : key,
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

// ---- --backend mpi -----------------------------------------------------------------------
// Every one-ported algorithm and the native collective of one MPI, timed side by side by
// ranklab_mpi_bench (one launch per p, as `ranklab bench --backend mpi`), ranked per band
// against native (tune/mpi_rules.hpp). The table goes to data/selection/mpi-<impl>.json to
// ship it, or to RANKLAB_MPI_SELECTION.
int tune_mpi_command(const tune_options& o) {
  const auto start = clock_type::now();
  bench::mpi_sweep_settings s;
  const std::vector<collective>& measurable = bench::mpi_bench_collectives();
  s.colls = measurable;
  if (!o.colls.empty() && o.colls != "all") {
    s.colls = parse_collective_list("--coll", o.colls);
    for (collective c : s.colls)
      if (std::find(measurable.begin(), measurable.end(), c) == measurable.end())
        usage_failure(fmt::format("--coll {}: --backend mpi measures {}", name(c),
                                  fmt::join(measurable | std::views::transform([](collective x) { return name(x); }),
                                            ", ")));
  }
  s.ps = o.quick ? std::vector<int>{2, 4} : std::vector<int>{2, 3, 4};
  if (!o.ps.empty()) {
    try {
      s.ps = parse_int_list(o.ps);
    } catch (const std::invalid_argument& e) {
      usage_failure(fmt::format("-p {}: {}", o.ps, e.what()));
    }
  }
  for (int p : s.ps) check_range("-p", p, 2, 256, "MPI processes, at least 2");
  std::sort(s.ps.begin(), s.ps.end());
  s.ps.erase(std::unique(s.ps.begin(), s.ps.end()), s.ps.end());
  s.sizes = o.quick ? std::vector<std::uint64_t>{8, 4096, 262144}
                    : std::vector<std::uint64_t>{8, 64, 512, 4096, 32768, 262144, 2097152};
  if (!o.sizes.empty()) s.sizes = parse_sizes("--sizes", o.sizes, std::uint64_t{1} << 30, "MPI's int counts");
  std::sort(s.sizes.begin(), s.sizes.end());
  s.sizes.erase(std::unique(s.sizes.begin(), s.sizes.end()), s.sizes.end());
  if (o.seconds != 0) check_real_range("--time", o.seconds, 0, 60, "or 0: 0.05 s, --quick 0.01 s");
  check_real_range("--margin", o.margin, 0, 0.9, "the fraction by which ranklab must beat native", true);
  if (o.batches != 0) check_range("--batches", o.batches, 1, max_tune_batches, "or 0: 5, --quick 3");
  check_range("--passes", o.passes, 1, max_passes, "whole sweeps, pooled by their medians");
  if (o.mpi != "openmpi" && o.mpi != "mpich") usage_failure(fmt::format("--mpi {}: openmpi or mpich", o.mpi));
  // Not the hierarchical algorithms: over MPI there is no hierarchy to compose over, and
  // flat they are one of the others (docs/hierarchy.md).
  for (collective c : s.colls)
    for (const algorithm* a : registry::for_collective(c))
      if (a->one_ported && !a->hierarchical && std::find(s.algos.begin(), s.algos.end(), a->name) == s.algos.end())
        s.algos.emplace_back(a->name);
  s.seconds = o.seconds > 0 ? o.seconds : (o.quick ? 0.01 : 0.05);
  s.batches = o.batches > 0 ? static_cast<int>(o.batches) : (o.quick ? 3 : 5);
  s.max_seconds = o.quick ? 0.5 : 2;
  s.dir = o.mpi_dir.empty() ? bench::default_mpi_bench_dir() : o.mpi_dir;
  s.impls = {o.mpi};
  s.timeout_seconds = o.peer_timeout;
  s.quiet = o.output.quiet;
  if (bench::mpi_bench_program(s.dir, o.mpi).empty())
    usage_failure(fmt::format("--backend mpi: no {}/{}/ranklab_mpi_bench; build ranklab with {} and "
                              "-DRANKLAB_BUILD_BENCH=ON, or point --mpi-dir at <build>/mpi",
                              s.dir.empty() ? "<build>/mpi" : s.dir, o.mpi, o.mpi));
  std::string out_file = o.output.json_to_stdout() ? "" : o.output.json_file;
  if (!o.out.empty()) out_file = o.out;

  const std::string load_before = bench::load_average();
  const machine_info mi = machine();
  progress("ranklab tune --backend mpi: {} over {} ({} cores), load average {}\n", s.algos.size(), o.mpi, mi.cores,
           load_before);
  // Each pass a whole sweep (every p, a launch each), the passes pooled by their medians.
  std::vector<std::vector<bench::result_row>> passes;
  for (std::int64_t pass = 0; pass < o.passes; ++pass) {
    if (o.passes > 1) progress("pass {} of {}\n", pass + 1, o.passes);
    bench::bench_results res;
    if (!bench::run_mpi_sweep(s, res)) {
      fmt::print(stderr, "ranklab tune: a benchmark launch failed (see above); no table written\n");
      return 1;
    }
    passes.push_back(std::move(res.rows));
  }
  tune::mpi_rule_plan plan{s.colls, s.ps, s.sizes, o.margin};
  tune::mpi_ranking ranked = tune::rank_over_mpi(plan, tune::pooled_passes(passes));

  selection_table table;
  table.rules = std::move(ranked.rules);
  ojson m;
  m["description"] = mi.description;
  m["cores"] = mi.cores;
  m["hostname"] = bench::host_name();
  m["date"] = bench::utc_timestamp();
  m["tool"] = "ranklab tune --backend mpi";
  m["mpi"] = o.mpi;
  m["oversubscribed"] = s.ps.back() > mi.cores;
  m["load_average_before"] = load_before;
  m["load_average_after"] = bench::load_average();
  m["p"] = s.ps;
  m["sizes"] = s.sizes;
  m["batches"] = s.batches;
  m["passes"] = o.passes;
  m["seconds_per_variant"] = s.seconds;
  m["margin"] = o.margin;
  table.machine_json = m.dump();
  ojson meas;
  meas["configurations"] = ranked.measured;
  table.measurements_json = meas.dump();
  if (out_file.empty()) {
    table.source = "stdout";
    std::cout << to_json(table);
  } else {
    table.source = out_file;
    write_selection(table, out_file);
    (void)read_selection(out_file);  // what we wrote must load
  }
  std::size_t native_rules = 0;
  for (const selection_rule& r : table.rules) native_rules += r.algorithm == native_algorithm;
  progress("ranklab tune: {} rule(s), {} of them native, in {:.1f} s{}\n", table.rules.size(), native_rules,
           seconds_since(start), out_file.empty() ? "" : "; use it with RANKLAB_MPI_SELECTION=" + out_file);
  return 0;
}

// ---- --levels ---------------------------------------------------------------------------
// alpha, beta, gamma per level of this machine (tune/levels.hpp) into a level-cost file.
int tune_levels_command(const tune_options& o, const CLI::App& cmd) {
  const auto start = clock_type::now();
  for (const char* other : {"-p", "--coll", "--margin", "--batch-ms"})
    if (cmd.get_option(other)->count() > 0)
      usage_failure(fmt::format("{} does not apply to --levels (which times pairs of ranks per level)", other));
  if (o.backend != "threads")
    usage_failure("--backend does not apply to --levels (the process level is measured through --mpi)");
  if (o.mpi != "openmpi" && o.mpi != "mpich" && o.mpi != "none")
    usage_failure(fmt::format("--mpi {}: openmpi, mpich or none", o.mpi));
  tune::level_plan plan;
  plan.sizes = o.quick ? std::vector<std::uint64_t>{0, 64, 1024, 4096, 65536, 1 << 20}
                       : std::vector<std::uint64_t>{0, 8, 64, 256, 1024, 2048, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20};
  if (!o.sizes.empty()) {
    plan.sizes = parse_sizes("--sizes", o.sizes, max_tune_bytes, "per message");
    for (std::uint64_t& b : plan.sizes) b = b / 8 * 8;  // whole float64 elements for the reducing exchange
    std::sort(plan.sizes.begin(), plan.sizes.end());
    plan.sizes.erase(std::unique(plan.sizes.begin(), plan.sizes.end()), plan.sizes.end());
  }
  if (plan.sizes.size() < 2 || std::count_if(plan.sizes.begin(), plan.sizes.end(), [](auto b) { return b >= 1024; }) == 0)
    usage_failure(fmt::format("--sizes {}: a level's fit needs two sizes or more, one of them at least 1Ki "
                              "(where the reduction shows)",
                              o.sizes));
  if (o.batches != 0) check_range("--batches", o.batches, 1, max_tune_batches, "or 0: 5, --quick 3");
  if (o.seconds != 0) check_real_range("--time", o.seconds, 0, 60, "or 0: 0.05 s, --quick 0.01 s");
  const int batches = o.batches > 0 ? static_cast<int>(o.batches) : (o.quick ? 3 : 5);
  plan.batches = 8 * batches;  // many short batches, the fastest kept (as the whole-machine fit)
  plan.mpi = o.mpi;
  plan.mpi_dir = o.mpi_dir;
  plan.mpi_seconds = o.seconds > 0 ? o.seconds : (o.quick ? 0.01 : 0.05);
  plan.mpi_batches = batches;
  // --passes: launches of the process level (the fastest kept), 3 unless given.
  if (cmd.get_option("--passes")->count() > 0) check_range("--passes", o.passes, 1, max_passes, "launches of the process level");
  plan.mpi_launches = cmd.get_option("--passes")->count() > 0 ? static_cast<int>(o.passes) : (o.quick ? 2 : 3);
  plan.mpi_max_seconds = o.quick ? 0.5 : 2;
  plan.peer_timeout = o.peer_timeout;
  plan.quiet = o.output.quiet;
  std::string out_file = o.output.json_to_stdout() ? "" : o.output.json_file;
  if (!o.out.empty() && !out_file.empty() && o.out != out_file)
    usage_failure(fmt::format("--out {} and --json {}: give the file once", o.out, out_file));
  if (!o.out.empty()) out_file = o.out;

  const machine_info mi = machine();
  const std::string load_before = bench::load_average();
  progress("ranklab tune --levels: {} ({} cores), load average {}\n", mi.description, mi.cores, load_before);
  // A synthetic topology has no wires: what is timed is always this machine's cores.
  const char* synthetic = std::getenv("RANKLAB_TOPOLOGY");
  if (synthetic && *synthetic)
    progress("      RANKLAB_TOPOLOGY=\"{}\" ignored: a synthetic topology cannot be timed; measuring this "
             "machine's levels\n",
             synthetic);
  tune::level_measurement m = tune::measure_levels(plan);
  for (const level_cost& v : m.costs.levels)
    // Zero is a fit (the least-squares line clamps a negative intercept or slope to 0 when
    // noise hides the latency or the per-byte time); negative or non-finite is a broken one.
    for (const double x : {v.cost.alpha, v.cost.beta, v.cost.gamma})
      if (!std::isfinite(x) || x < 0) {
        fmt::print(stderr,
                   "ranklab tune --levels: level {}: a fit that is not a time (alpha {}, beta {}, "
                   "gamma {}); no file written\n",
                   v.name, v.cost.alpha, v.cost.beta, v.cost.gamma);
        return 1;
      }
  ojson rec;
  rec["description"] = mi.description;
  rec["cores"] = mi.cores;
  rec["numa_nodes"] = mi.numa_nodes;
  rec["hostname"] = bench::host_name();
  rec["date"] = bench::utc_timestamp();
  rec["tool"] = o.quick ? "ranklab tune --levels --quick" : "ranklab tune --levels";
  rec["load_average_before"] = load_before;
  rec["load_average_after"] = bench::load_average();
  rec["eager_limit"] = team_options::from_environment().eager_limit;
  rec["sizes"] = plan.sizes;
  rec["batches"] = plan.batches;
  rec["method"] = "fastest of the batches: ping-pong one-way time per size, least squares on relative error "
                  "(alpha, beta); the reducing exchange's extra time per byte (gamma)";
  if (!m.process_note.empty()) rec["process"] = m.process_note;
  rec["samples"] = m.samples;
  m.costs.machine_json = rec.dump();
  if (out_file.empty()) {
    m.costs.source = "stdout";
    const std::string text = to_json(m.costs);
    (void)parse_level_costs(text, "stdout");  // what we print must load
    std::cout << text;
  } else {
    m.costs.source = out_file;
    write_level_costs(m.costs, out_file);
    (void)read_level_costs(out_file);  // what we wrote must load
  }
  progress("ranklab tune --levels: {} level(s) in {:.1f} s{}\n", m.costs.levels.size(), seconds_since(start),
           out_file.empty() ? "" : "; use them with RANKLAB_LEVEL_COSTS=" + out_file);
  return 0;
}

int tune_command(const tune_options& o, const CLI::App& cmd) {
  if (o.levels && o.show.empty()) {
    tune::quiet = o.output.quiet;
    return tune_levels_command(o, cmd);
  }
  if (o.backend == "mpi" && o.show.empty()) return tune_mpi_command(o);
  const tune_request req = checked_request(o);
  tune::quiet = o.output.quiet;
  if (!o.show.empty()) {
    show_table(o.show);
    return 0;
  }
  const auto start = clock_type::now();
  const machine_info mi = machine();
  const std::string load_before = bench::load_average();
  progress("ranklab tune: {} ({} cores), load average {}{}\n", mi.description, mi.cores, load_before,
           o.quick ? ", quick" : "");
  const team_options topt = team_options::from_environment();
  const calibration cal = calibrate(o.quick, req.plan.batches, topt);

  selection_table table;
  table.model = cost_model{cal.global.alpha, cal.global.beta, cal.gamma};
  table.bands = cal.bands;
  // Measure with the calibrated model in place (circulant sizes its blocks with it).
  {
    selection_table provisional = builtin_selection();
    provisional.model = table.model;
    provisional.bands = table.bands;
    provisional.source = "tune (calibrated model, built-in rules)";
    use_selection(std::move(provisional));
  }
  tune::ranking ranked = tune::rank_algorithms(req.plan, start);
  reset_selection();
  table.rules = std::move(ranked.rules);
  table.machine_json = machine_record(o, req, mi, load_before, topt);
  table.measurements_json = measurements_record(cal, ranked.measured);

  if (req.out_file.empty()) {
    table.source = "stdout";
    std::cout << to_json(table);
  } else {
    table.source = req.out_file;
    write_selection(table, req.out_file);
    (void)read_selection(req.out_file);  // what we wrote must load
  }
  progress("ranklab tune: alpha {}, beta {}/B, gamma {}/B, {} band(s), {} rule(s) in {:.1f} s{}\n",
           show_seconds(table.model.alpha), show_seconds(table.model.beta), show_seconds(table.model.gamma),
           table.bands.size(), table.rules.size(), seconds_since(start),
           req.out_file.empty() ? "" : "; use it with RANKLAB_SELECTION=" + req.out_file);
  return 0;
}

}  // namespace

void add_tune_command(CLI::App& app) {
  static tune_options o;
  auto* cmd =
      app.add_subcommand("tune", "Calibrate alpha, beta, gamma and measure the algorithms; write a selection table");
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
  cmd->add_option("--passes", o.passes,
                  fmt::format("Sweeps over every configuration, 1..{}; each configuration's batches of all "
                              "passes are pooled (passes lie a whole sweep apart: a machine that changes speed "
                              "for minutes is measured in each of its states)",
                              max_passes))
      ->capture_default_str();
  cmd->add_option("--show", o.show, "Check and print a selection table (or a level-cost file) instead of measuring");
  cmd->add_flag("--levels", o.levels,
                "Fit alpha, beta, gamma per level of this machine (machine, package, numa, l3 between two cores; "
                "process between two MPI processes through --mpi) and write a level-cost file for "
                "RANKLAB_LEVEL_COSTS instead of a selection table");
  cmd->add_option("--backend", o.backend,
                  "threads (default): rank threads; mpi: MPI processes, every one-ported algorithm against the "
                  "MPI's native collective, for the interposer's and the MPI backend's \"auto\"")
      ->check(CLI::IsMember({"threads", "mpi"}));
  cmd->add_option("--mpi", o.mpi,
                  "--backend mpi: the MPI to measure, openmpi (default) or mpich; --levels: the MPI of the process "
                  "level, or none");
  cmd->add_option("--mpi-dir", o.mpi_dir, "--backend mpi: the directory holding <mpi>/ranklab_mpi_bench");
  cmd->add_option("--time", o.seconds, "--backend mpi: seconds per variant and size (0: 0.05, --quick 0.01)");
  cmd->add_option("--margin", o.margin,
                  "--backend mpi: a ranklab algorithm is chosen only when faster than native by this fraction")
      ->capture_default_str();
  cmd->add_option("--peer-timeout", o.peer_timeout, "--backend mpi: seconds per launch (0: estimated)");
  add_output_options(cmd, o.output, "the selection table");
  // The table is tune's only output on stdout, so --json without FILE is the default.
  cmd->get_option("--json")->description(
      "Write the selection table to FILE (the same as --out); without FILE on stdout, the default");
  cmd->callback([cmd] {
    const int rc = tune_command(o, *cmd);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace ranklab::tools
