// Launching ranklab_mpi_bench and reading its rows (see mpi_sweep.hpp).
#include "bench/mpi_sweep.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "bench/peers.hpp"
#include "bench/workload.hpp"
#include "cli/option_parse.hpp"

namespace ranklab::tools::bench {

namespace {

namespace fs = std::filesystem;

// Variants of one size at most (native and the algorithms of the collective with the most):
// bounds a launch's running time through the per-size budget.
constexpr int max_variants = 13;

double budget_per_variant(const mpi_sweep_settings& s) {
  return s.max_seconds >= 0 ? s.max_seconds : std::max(2.0, 10 * s.seconds);  // peer_budget()
}

std::string joined(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ",")); }

// The collectives asked for, comma-joined (--coll of the program and peer_run::coll).
std::string coll_list(const mpi_sweep_settings& s) {
  std::vector<std::string> colls;
  for (collective c : s.colls) colls.emplace_back(name(c));
  return joined(colls);
}

std::vector<std::string> program_arguments(const mpi_sweep_settings& s, const std::string& program,
                                           const std::string& colls) {
  std::vector<std::string> sizes;
  for (std::uint64_t b : s.sizes) sizes.push_back(std::to_string(b));
  std::vector<std::string> args{program,
                                "--coll",
                                colls,
                                "--algo",
                                joined(s.algos),
                                "--sizes",
                                joined(sizes),
                                "--time",
                                fmt::format("{}", s.seconds),
                                "--batches",
                                std::to_string(s.batches)};
  if (s.max_seconds >= 0) args.insert(args.end(), {"--max-time", fmt::format("{}", s.max_seconds)});
  if (s.max_iters > 0) args.insert(args.end(), {"--max-iters", std::to_string(s.max_iters)});
  if (!s.check) args.push_back("--no-check");
  return args;
}

// Every (coll, size) asked for has its native row: the program ran to the end.
std::string missing_rows(const mpi_sweep_settings& s, const std::vector<result_row>& rows) {
  for (collective c : s.colls)
    for (std::uint64_t b : s.sizes) {
      const std::uint64_t bytes = reported_bytes(c, b);
      const bool found = std::any_of(rows.begin(), rows.end(), [&](const result_row& r) {
        return r.coll == name(c) && r.bytes == bytes && r.algo == "native";
      });
      if (!found) return fmt::format("no row for {} {} B", name(c), bytes);
    }
  return {};
}

std::string last_error_line(const std::string& err) {
  for (const std::string& line : split_list(err, '\n'))
    if (line.find("error") != std::string::npos) return line;  // the program's own message first
  return last_nonblank_line(err);
}

peer_run launch(const mpi_sweep_settings& s, const std::string& impl, int p, bench_results& res) {
  peer_run run;
  run.impl = impl;
  run.p = p;
  run.coll = coll_list(s);
  std::vector<std::string> cmd = launcher_command(impl, p, available_cores(), geteuid() == 0);
  const std::vector<std::string> args = program_arguments(s, mpi_bench_program(s.dir, impl), run.coll);
  cmd.insert(cmd.end(), args.begin(), args.end());
  run.command = fmt::format("{}", fmt::join(cmd, " "));

  const double timeout = s.timeout_seconds > 0 ? s.timeout_seconds
                                               : 60 + budget_per_variant(s) * max_variants *
                                                          static_cast<double>(s.colls.size() * s.sizes.size());
  const process_result r = run_process(cmd, timeout);
  std::vector<result_row> rows = parse_mpi_bench_csv(r.out);
  for (result_row& row : rows) {
    if (row.status == "skipped") {
      res.skipped.push_back({row.coll, row.algo, row.p, row.bytes, "the algorithm's preconditions reject the call"});
      continue;
    }
    row.impl = impl;  // the launcher's MPI, whatever the library calls itself
    res.rows.push_back(row);
  }
  if (!r.started || r.exit_code == 127) {
    run.status = "error";
    run.detail = "could not run " + cmd[0];
  } else if (r.timed_out) {
    run.status = "timeout";
    run.detail = fmt::format("killed after {:.0f} s (--peer-timeout)", timeout);
  } else if (r.exit_code != 0) {
    run.status = "error";
    run.detail = fmt::format("exit {}: {}", r.exit_code, last_error_line(r.err));
  } else if (const std::string missing = missing_rows(s, rows); !missing.empty()) {
    run.status = "error";
    run.detail = "incomplete output: " + missing;
  } else {
    run.status = "ok";
  }
  return run;
}

}  // namespace

// A build tree has <build>/ranklab and <build>/mpi/<impl>/ranklab_mpi_bench; an install has
// <prefix>/bin/ranklab and <prefix>/libexec/ranklab/<impl>/ranklab_mpi_bench.
std::string default_mpi_bench_dir() {
  const std::string exe = exe_dir();
  if (exe.empty()) return {};
  std::error_code ec;
  const fs::path build_tree = fs::path(exe) / "mpi";
  if (fs::is_directory(build_tree, ec)) return build_tree.string();
#ifdef RANKLAB_INSTALLED_MPI_BENCH_DIR
  const fs::path installed = fs::path(exe) / RANKLAB_INSTALLED_MPI_BENCH_DIR;
  if (fs::is_directory(installed, ec)) return installed.lexically_normal().string();
#endif
  return build_tree.string();
}

std::string mpi_bench_program(const std::string& dir, const std::string& impl) {
  if (dir.empty()) return {};
  const fs::path program = fs::path(dir) / impl / "ranklab_mpi_bench";
  std::error_code ec;
  return fs::exists(program, ec) ? program.string() : std::string();
}

std::vector<result_row> parse_mpi_bench_csv(const std::string& text) {
  std::vector<result_row> rows;
  for (const std::string& line : split_list(text, '\n')) {
    const std::vector<std::string> f = split_list(line, ',');
    if (f.size() != 11 || f[0] == "impl") continue;
    try {
      result_row r;
      r.impl = f[0], r.coll = f[1], r.algo = f[4], r.selected = f[5];
      r.p = std::stoi(f[2]);
      r.bytes = std::stoull(f[3]);
      const double seconds = std::stod(f[6]);
      r.batches = std::stoi(f[7]);
      r.iterations = std::stoll(f[8]);
      r.checked = r.verified = f[9] == "true";
      r.status = f[10] == "skipped" ? "skipped" : "ok";
      if (f[10] == "cut") r.note = "the per-size budget (--max-time) cut the batches";
      if (r.status == "ok") r.usec_median = seconds * 1e6;
      rows.push_back(std::move(r));
    } catch (const std::exception&) {
      continue;  // not a row
    }
  }
  return rows;
}

bool run_mpi_sweep(const mpi_sweep_settings& s, bench_results& res) {
  bool ok = true;
  const int total = static_cast<int>(s.impls.size() * s.ps.size());
  int done = 0;
  for (const std::string& impl : s.impls)
    for (int p : s.ps) {
      if (!s.quiet) fmt::print(stderr, "[{}/{}] {} p={} ...\n", ++done, total, impl, p);
      peer_run run = launch(s, impl, p, res);
      if (!s.quiet) fmt::print(stderr, "  {}{}\n", run.status, run.detail.empty() ? "" : ": " + run.detail);
      ok = ok && run.status == "ok";
      res.peer_runs.push_back(std::move(run));
    }
  return ok;
}

}  // namespace ranklab::tools::bench
