// The plan and the measuring steps of `ranklab bench` (see sweep.hpp).
#include "bench/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "bench/cache_line.hpp"
#include "bench/measure.hpp"
#include "bench/omp_baseline.hpp"
#include "bench/tbb_baseline.hpp"
#include "bench/workload.hpp"
#include "cli/option_parse.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::tools::bench {

namespace {

// One configuration of ranklab to measure.
struct job {
  collective coll;
  int p;
  std::uint64_t bytes;
  std::string algo;
};

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

// Buffers of a configuration: the reference doubles them when checking.
bool over_memory(const sweep_settings& s, const call& cl, std::uint64_t* need = nullptr) {
  const std::uint64_t mem = buffer_bytes(cl) * (s.check ? 2 : 1);
  if (need != nullptr) *need = mem;
  return mem > s.max_memory;
}

// The configurations of ranklab that run; those an algorithm's preconditions or the memory
// bound rule out go to res.skipped.
std::vector<job> plan_jobs(const sweep_settings& s, bench_results& res) {
  std::vector<job> jobs;
  for (collective c : s.colls)
    for (int p : s.ps)
      for (std::uint64_t b : reported_sizes(c, s.sizes))
        for (const std::string& a : algos_for(c, s.algos)) {
          const call cl = make_bench_call(c, p, b, a);
          if (a != "auto") {
            const algorithm* alg = registry::find(c, a);
            if (!meets_preconditions(*alg, cl.args)) {
              res.skipped.push_back({std::string(name(c)), a, p, b, unmet_precondition(*alg, cl.args)});
              continue;
            }
          }
          if (std::uint64_t mem = 0; over_memory(s, cl, &mem)) {
            res.skipped.push_back(
                {std::string(name(c)), a, p, b,
                 fmt::format("needs {} of buffers, more than --max-memory {}", size_label(mem), s.max_memory_text)});
            continue;
          }
          jobs.push_back({c, p, b, a});
        }
  return jobs;
}

// Whether (c) has baselines to measure: memcpy and oneTBB need data to move, OpenMP has a
// barrier too.
bool has_baselines(collective c) { return c != collective::barrier || openmp_available(); }

// The configurations (p, size) of collective c.
int configurations(const sweep_settings& s, collective c) {
  return static_cast<int>(s.ps.size() * reported_sizes(c, s.sizes).size());
}

int baseline_steps(const sweep_settings& s) {
  if (!s.baselines) return 0;
  int n = 0;
  for (collective c : s.colls)
    if (has_baselines(c)) n += configurations(s, c);
  return n;
}

void fill_times(result_row& row, const measurement& m, int batches) {
  row.usec_median = m.usec.median;
  row.usec_min = m.usec.min;
  row.usec_max = m.usec.max;
  row.iterations = m.iterations;
  row.batches = batches;
}

// A measured implementation's row: its times, or "wrong" with the difference (reported on
// stderr as `what`). Returns whether the result was right.
bool record_result(result_row& row, const impl_result& r, const sweep_settings& s, const std::string& what) {
  row.verified = r.verified;
  if (r.timed) fill_times(row, r.m, s.timing.batches);
  if (!s.check || r.verified) return true;
  row.status = "wrong";
  row.note = r.difference;
  fmt::print(stderr, "ranklab bench: {}: {}\n", what, r.difference);
  return false;
}

// ranklab's jobs of one configuration (every algorithm asked for it).
bool run_ranklab(const std::vector<job>& jobs, collective c, int p, std::uint64_t b, const sweep_settings& s,
                 progress& prog, bench_results& res) {
  bool all_verified = true;
  for (const job& j : jobs) {
    if (j.coll != c || j.p != p || j.bytes != b) continue;
    const std::string coll(name(j.coll));
    prog.step(fmt::format("{} p={} {} {}", coll, j.p, size_label(j.bytes), j.algo));
    const call cl = make_bench_call(j.coll, j.p, j.bytes, j.algo);
    result_row row;
    row.impl = "ranklab", row.coll = coll, row.algo = j.algo, row.p = j.p, row.bytes = j.bytes;
    row.checked = s.check;
    try {
      const impl_result r = measure_ranklab(cl, s.timing, s.check, s.rewrite);
      row.selected = j.algo == "auto" ? r.selected : "";
      all_verified &= record_result(
          row, r, s,
          fmt::format("{} {} p={} {}: result differs from the reference", coll, j.algo, j.p, size_label(j.bytes)));
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
  return all_verified;
}

// The row of a baseline measured like an implementation (oneTBB, OpenMP): its times, "n/a"
// when it has no counterpart of c, "skipped" beyond --max-memory.
template <class Measure>
result_row baseline_row(const std::string& impl, collective c, int p, std::uint64_t b, const sweep_settings& s,
                        Measure&& measure, bool& all_verified) {
  const std::string coll(name(c));
  const call cl = make_bench_call(c, p, b, "auto");
  result_row t;
  t.impl = impl, t.coll = coll, t.p = p, t.bytes = b, t.checked = s.check;
  if (over_memory(s, cl)) {
    t.status = "skipped";
    t.note = "more than --max-memory";
    return t;
  }
  try {
    const std::optional<impl_result> r = measure(cl, s.timing, s.check);
    if (!r) {
      t.status = "n/a";
    } else {
      t.note = r->selected;  // the OpenMP idiom; a wrong result's difference replaces it
      all_verified &=
          record_result(t, *r, s, fmt::format("{} baseline {} p={} {} is wrong", impl, coll, p, size_label(b)));
    }
  } catch (const std::exception& e) {
    t.status = "error";
    t.note = e.what();
    fmt::print(stderr, "ranklab bench: {} baseline {} p={} {}: {}\n", impl, coll, p, size_label(b), e.what());
  }
  return t;
}

std::string baseline_names(collective c) {
  std::string names = c == collective::barrier ? "" : "memcpy, tbb";
  if (openmp_available()) names += names.empty() ? "openmp" : ", openmp";
  return names;
}

// The copies of one rank's result, by one and by two threads: the same copy serves several
// configurations, so each is measured once per run.
using memcpy_cache = std::map<std::pair<std::uint64_t, int>, measurement>;  // (bytes copied, threads)

// The baselines of one configuration.
bool run_baselines(collective c, int p, std::uint64_t b, const sweep_settings& s, memcpy_cache& copies, progress& prog,
                   bench_results& res) {
  if (!has_baselines(c)) return true;
  bool all_verified = true;
  const std::string coll(name(c));
  prog.step(fmt::format("{} p={} {} baselines ({})", coll, p, size_label(b), baseline_names(c)));
  // memcpy first: the OpenMP team's threads spin a while after their region ends.
  for (const memcpy_baseline& mb : memcpy_baselines(c, p, b)) {
    const auto key = std::pair{mb.copy_bytes, mb.threads};
    if (!copies.count(key)) copies[key] = measure_memcpy(mb.copy_bytes, mb.threads, s.timing);
    result_row m;
    m.impl = mb.impl;
    m.coll = coll, m.p = p, m.bytes = b;
    m.copy_bytes = mb.copy_bytes, m.threads = mb.threads;
    m.note = fmt::format("copy of {} bytes by {} thread(s)", mb.copy_bytes, mb.threads);
    fill_times(m, copies[key], s.timing.batches);
    res.rows.push_back(std::move(m));
  }
  if (c != collective::barrier) res.rows.push_back(baseline_row("tbb", c, p, b, s, measure_tbb, all_verified));
  if (openmp_available()) res.rows.push_back(baseline_row("openmp", c, p, b, s, measure_openmp, all_verified));
  return all_verified;
}

// The row of one size of a peer's run: its time, or why there is none.
result_row peer_result_row(const peer_run& run, const std::string& impl, const std::string& coll, int p,
                           std::uint64_t b, const sweep_settings& s) {
  result_row row;
  row.impl = impl, row.coll = coll, row.p = p, row.bytes = b;
  row.checked = s.check;
  const peer_row* got = nullptr;
  for (const peer_row& pr : run.rows)
    if (pr.coll == coll && pr.p == p && pr.bytes == b) got = &pr;
  if (got != nullptr) {
    row.usec_median = got->usec;
    row.mode = got->mode;
    row.batches = s.timing.batches;
    row.verified = s.check;  // the peer aborts on a wrong result
  } else {
    row.status = run.status == "ok" ? "missing" : run.status;
    row.note = run.detail;
  }
  return row;
}

// Peer launches that failed in a way the next size would repeat (no binary, a collective
// the peer lacks, a launch killed at the timeout): (impl, coll, p) -> that run.
using failed_peers = std::map<std::tuple<std::string, std::string, int>, peer_run>;

// Open MPI's and MPICH's run of one configuration: a launch each, for this size alone (not
// again after a failure the next size would repeat: a hanging launcher would cost the
// timeout once per size).
void run_peers(collective c, int p, std::uint64_t b, const sweep_settings& s, failed_peers& failed, progress& prog,
               bench_results& res) {
  const std::string coll(name(c));
  // (a barrier moves nothing: the peer takes any size and reports it as 0 bytes)
  const std::vector<std::uint64_t> size{c == collective::barrier ? s.sizes.front() : b};
  for (const char* impl : {"openmpi", "mpich"}) {
    prog.step(fmt::format("{} p={} {} {}", coll, p, size_label(b), impl));
    const auto key = std::tuple{std::string(impl), coll, p};
    if (const auto it = failed.find(key); it != failed.end()) {
      res.rows.push_back(peer_result_row(it->second, impl, coll, p, b, s));
      continue;
    }
    peer_run run = run_peer(s.peers, impl, c, p, size);
    if (run.status != "ok") prog.note(fmt::format("{}: {}", run.status, run.detail));
    res.rows.push_back(peer_result_row(run, impl, coll, p, b, s));
    if (run.status == "missing" || run.status == "n/a" || run.status == "timeout") failed[key] = run;
    res.peer_runs.push_back(std::move(run));
  }
}

// The floors of one configuration's moment (--compare): short batches, about 0.2 s.
configuration_floor floor_now(collective c, int p, std::uint64_t b) {
  timing_options brief;
  brief.target_seconds = 0.03, brief.batches = 3, brief.calib_seconds = 0.002;
  configuration_floor f{std::string(name(c)), p, b, nlohmann::ordered_json::object()};
  add_cache_line(f.figures, measure_cache_line(brief));
  return f;
}

}  // namespace

std::vector<std::uint64_t> reported_sizes(collective c, const std::vector<std::uint64_t>& sizes) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s : c == collective::barrier ? std::vector<std::uint64_t>{0} : sizes) {
    const std::uint64_t b = reported_bytes(c, s);
    if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
  }
  return out;
}

// Configuration by configuration, every implementation of one (collective, p, size) right
// after the other: with --compare the floors, then ranklab's algorithms, the baselines and
// the MPI peers. This machine's speed switches between states 2-4x apart within minutes,
// and rows timed a minute apart, as they were when each implementation ran over all
// configurations in turn, compared one state with another.
bool run_sweep(const sweep_settings& s, bench_results& res) {
  const std::vector<job> jobs = plan_jobs(s, res);
  int peer_steps = 0;
  if (s.compare)
    for (collective c : s.colls) peer_steps += 2 * configurations(s, c);
  progress prog(static_cast<int>(jobs.size()) + baseline_steps(s) + peer_steps, s.quiet);
  if (s.baselines && !openmp_available()) prog.note("no OpenMP baseline: " + openmp_runtime());
  memcpy_cache copies;  // a copy's figure serves every configuration that copies as much
  failed_peers failed;
  bool all_verified = true;
  for (collective c : s.colls)
    for (int p : s.ps)
      for (std::uint64_t b : reported_sizes(c, s.sizes)) {
        if (s.compare) res.floors.push_back(floor_now(c, p, b));
        all_verified &= run_ranklab(jobs, c, p, b, s, prog, res);
        if (s.baselines) all_verified &= run_baselines(c, p, b, s, copies, prog, res);
        if (s.compare) run_peers(c, p, b, s, failed, prog, res);
      }
  return all_verified;
}

}  // namespace ranklab::tools::bench
