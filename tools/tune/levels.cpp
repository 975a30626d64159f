// The level costs of `ranklab tune --levels` (see levels.hpp).
#include "tune/levels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "bench/machine.hpp"
#include "bench/mpi_sweep.hpp"
#include "bench/timing.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/team.hpp"
#include "tune/cost_fit.hpp"
#include "tune/output.hpp"

namespace ranklab::tools::tune {

namespace {

using ojson = nlohmann::ordered_json;

constexpr std::array<const char*, 5> key_names{"machine", "package", "numa", "l3", "core"};

// Core c's domain at key level k (0 machine, 1 package, 2 numa, 3 l3, 4 core).
int key_of(const core_domains& of_core, int c, int k) {
  if (k == 0) return 0;
  if (k == 4) return c;
  return of_core[static_cast<std::size_t>(c)][static_cast<std::size_t>(k - 1)];
}

ojson samples_json(const std::vector<sample>& v) {
  ojson out = ojson::array();
  for (const sample& s : v) out.push_back({{"bytes", static_cast<std::uint64_t>(s.bytes)}, {"seconds", s.seconds}});
  return out;
}

// alpha and beta from the plain exchange, gamma from the reducing one (the sum kernel's
// rate on one core when noise hides the reduction).
level_cost fitted(const std::string& name, const std::vector<sample>& plain, const std::vector<sample>& reducing,
                  const kernel_rates& kernel) {
  const line_fit f = fit_line(plain);
  level_cost c;
  c.name = name;
  c.cost.alpha = f.alpha;
  c.cost.beta = f.beta;
  c.cost.gamma = reduction_gamma(plain, reducing);
  if (c.cost.gamma <= 0) {
    c.cost.gamma = bench::median({kernel.int32, kernel.float32, kernel.float64});
    c.note = "gamma: the sum kernel's rate (the reducing exchange measured no slower than the plain one)";
  }
  c.max_relative_error = f.max_rel_error;
  c.min_bytes = static_cast<std::uint64_t>(plain.front().bytes);
  c.max_bytes = static_cast<std::uint64_t>(plain.back().bytes);
  return c;
}

void report(const level_cost& c) {
  progress("      {:<8} alpha {}, beta {}/B ({:.2f} GB/s), gamma {}/B, max relative error {:.0f}%\n", c.name,
           show_seconds(c.cost.alpha), show_seconds(c.cost.beta), c.cost.beta > 0 ? 1e-9 / c.cost.beta : 0.0,
           show_seconds(c.cost.gamma), 100 * c.max_relative_error);
}

// The process level: 2-rank allgather and allreduce of ranklab's recursive doubling over MPI
// (one exchange each), side by side in one launch of ranklab_mpi_bench.
bool measure_process(const level_plan& plan, const kernel_rates& kernel, level_measurement& out) {
  if (plan.mpi == "none") {
    out.process_note = "not measured (--mpi none)";
    return false;
  }
  bench::mpi_sweep_settings s;
  s.dir = plan.mpi_dir.empty() ? bench::default_mpi_bench_dir() : plan.mpi_dir;
  if (bench::mpi_bench_program(s.dir, plan.mpi).empty()) {
    out.process_note = fmt::format("not measured: no {}/{}/ranklab_mpi_bench", s.dir.empty() ? "<build>/mpi" : s.dir,
                                   plan.mpi);
    return false;
  }
  s.impls = {plan.mpi};
  s.colls = {collective::allgather, collective::allreduce};
  s.algos = {"recursive_doubling"};
  s.ps = {2};
  for (std::uint64_t b : plan.sizes)
    if (b >= 8) s.sizes.push_back(b);
  s.seconds = plan.mpi_seconds;
  s.batches = plan.mpi_batches;
  s.max_seconds = plan.mpi_max_seconds;
  s.timeout_seconds = plan.peer_timeout;
  s.quiet = plan.quiet;
  const std::string load = bench::load_average();
  // Per (collective, size) the fastest of the launches' medians: two processes on loaded
  // cores lose them for milliseconds at a time, and such a stall says nothing of the link.
  std::map<std::pair<std::string, std::uint64_t>, double> best;
  for (int launch = 0; launch < plan.mpi_launches; ++launch) {
    bench::bench_results res;
    if (!bench::run_mpi_sweep(s, res)) {
      out.process_note = fmt::format("not measured: the {} launch failed ({})", plan.mpi,
                                     res.peer_runs.empty() ? "no launch" : res.peer_runs.back().detail);
      return false;
    }
    for (const bench::result_row& r : res.rows) {
      if (r.algo != "recursive_doubling" || r.status != "ok" || !r.usec_median || r.p != 2) continue;
      const auto [it, fresh] = best.emplace(std::pair{r.coll, r.bytes}, *r.usec_median * 1e-6);
      if (!fresh) it->second = std::min(it->second, *r.usec_median * 1e-6);
    }
  }
  std::vector<sample> plain, reducing;
  for (const auto& [key, seconds] : best)
    (key.first == "allgather" ? plain : reducing).push_back({static_cast<double>(key.second), seconds});
  const auto by_size = [](const sample& a, const sample& b) { return a.bytes < b.bytes; };
  std::sort(plain.begin(), plain.end(), by_size);
  std::sort(reducing.begin(), reducing.end(), by_size);
  if (plain.size() < 2) {
    out.process_note = fmt::format("not measured: {} gave {} allgather time(s), a fit needs two", plan.mpi, plain.size());
    return false;
  }
  level_cost c = fitted("process", plain, reducing, kernel);
  c.load_average = load;
  const std::string how = fmt::format("{}: ranklab_mpi_bench, 2 processes, recursive_doubling allgather (alpha, beta) "
                                      "and allreduce (gamma), the fastest of {} launches' medians of {} batches",
                                      plan.mpi, plan.mpi_launches, plan.mpi_batches);
  c.note = c.note.empty() ? how : how + "; " + c.note;
  out.samples["process"] = {{"exchange", samples_json(plain)}, {"reducing_exchange", samples_json(reducing)}};
  report(c);
  out.costs.levels.push_back(std::move(c));
  return true;
}

}  // namespace

std::vector<level_pair> level_pairs(const core_domains& of_core) {
  const int cores = static_cast<int>(of_core.size());
  std::vector<level_pair> out;
  std::size_t kept = 0;  // cores in the domain of the last level kept
  for (int k = 0; k < 4; ++k) {
    // Core 0's domain at this level, inside its domains of every level out.
    std::vector<int> members;
    for (int c = 0; c < cores; ++c) {
      bool same = true;
      for (int j = 1; j <= k; ++j) same = same && key_of(of_core, c, j) == key_of(of_core, 0, j);
      if (same) members.push_back(c);
    }
    if (members.size() < 2) break;
    if (kept != 0 && members.size() == kept) continue;  // coincides with the level out
    kept = members.size();
    for (int next = k + 1; next <= 4; ++next) {
      std::set<int> split;
      for (int c : members) split.insert(key_of(of_core, c, next));
      if (split.size() < 2) continue;
      const auto other = std::find_if(members.begin(), members.end(),
                                      [&](int c) { return key_of(of_core, c, next) != key_of(of_core, 0, next); });
      out.push_back({key_names[static_cast<std::size_t>(k)], 0, *other, key_names[static_cast<std::size_t>(next)]});
      break;
    }
  }
  return out;
}

core_domains machine_domains() {
  const int cores = machine().cores;
  core_domains out(static_cast<std::size_t>(cores));
  team_options o;
  o.binding = binding_policy::compact;
  o.execution = execution_mode::threads;
  run(
      cores,
      [&](comm& cm) {
        out[static_cast<std::size_t>(cm.rank())] = {cm.domain_index(domain::package), cm.domain_index(domain::numa),
                                                     cm.domain_index(domain::l3)};
      },
      o);
  return out;
}

level_measurement measure_levels(const level_plan& plan) {
  level_measurement out;
  const std::vector<level_pair> pairs = level_pairs(machine_domains());
  if (pairs.empty())
    throw usage_error(no_rank, "tune --levels", "this machine has one core: there is no pair of cores to measure");
  std::vector<std::uint64_t> reducing_sizes;
  for (std::uint64_t b : plan.sizes)
    if (b >= 8) reducing_sizes.push_back(b);
  const kernel_rates kernel = reduction_rates(plan.batches, plan.batch_seconds);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const level_pair& lp = pairs[i];
    progress("[{}/{}] {}: cores {} and {} (different {}), {} sizes, fastest of {} batches\n", i + 1,
             pairs.size() + (plan.mpi == "none" ? 0 : 1), lp.name, lp.core_a, lp.core_b, lp.split_by,
             plan.sizes.size(), plan.batches);
    const std::string load = bench::load_average();
    const pair_timing plain = time_pair(plan.sizes, plan.batches, plan.batch_seconds, {lp.core_a, lp.core_b, false});
    const pair_timing reducing = time_pair(reducing_sizes, plan.batches, plan.batch_seconds, {lp.core_a, lp.core_b, true});
    level_cost c = fitted(lp.name, plain.samples, reducing.samples, kernel);
    c.cores = {lp.core_a, lp.core_b};
    c.load_average = load;
    if (!plain.bound || !reducing.bound)
      c.note = (c.note.empty() ? "" : c.note + "; ") + "the threads could not be pinned to their cores";
    out.samples[lp.name] = {{"cores", c.cores},
                            {"exchange", samples_json(plain.samples)},
                            {"reducing_exchange", samples_json(reducing.samples)}};
    report(c);
    out.costs.levels.push_back(std::move(c));
  }
  if (plan.mpi != "none")
    progress("[{}/{}] process: two {} processes of this node\n", pairs.size() + 1, pairs.size() + 1, plan.mpi);
  if (!measure_process(plan, kernel, out)) progress("      process  {}\n", out.process_note);
  // The file's order: outermost first (parse_level_costs keeps it so).
  std::stable_sort(out.costs.levels.begin(), out.costs.levels.end(),
                   [](const level_cost& a, const level_cost& b) { return a.name == "process" && b.name != "process"; });
  return out;
}

}  // namespace ranklab::tools::tune
