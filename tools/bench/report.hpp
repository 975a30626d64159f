// The results of `ranklab bench` and their forms: OSU-style tables on the terminal (one
// per collective and p: a row per size, a column per algorithm or implementation), the
// --compare table, CSV, JSON (every raw row) and a Markdown report.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/peers.hpp"

namespace ranklab::tools::bench {

struct result_row {
  std::string impl;  // "ranklab", "tbb", "openmp", "memcpy", "memcpy2", "openmpi", "mpich"
  std::string coll;
  std::string algo;      // ranklab: the algorithm or "auto"; others: ""
  std::string selected;  // ranklab "auto": the algorithm the library picked
  std::string mode = "regular";
  int p = 0;
  std::uint64_t bytes = 0;                                // per rank, as bench/peers/mpi_collectives.c means it
  std::optional<double> usec_median, usec_min, usec_max;  // per call
  std::int64_t iterations = 0;                            // calls per batch (0: unknown)
  int batches = 0;
  bool checked = false;
  bool verified = false;
  std::string status = "ok";  // ok | wrong (check failed) | timeout | n/a | missing | error
  std::string note;
  std::uint64_t copy_bytes = 0;  // memcpy rows: the bytes copied (one rank's result)
  int threads = 0;               // memcpy rows: the threads copying
};

// A configuration not run: an algorithm whose preconditions reject the call, too much memory.
struct skipped_config {
  std::string coll, algo;
  int p = 0;
  std::uint64_t bytes = 0;
  std::string reason;
};

struct bench_request {
  std::vector<std::string> colls, algos;
  std::vector<int> ps;
  std::vector<std::uint64_t> sizes;
  double seconds = 0.2;
  int batches = 7;
  bool quick = false, check = true, compare = false, baselines = true, rewrite = false;
  std::string command_line;
};

// The machine's floors (cache_line.hpp) measured right before one configuration's rows (with
// --compare): a row is compared with the floor of its own moment, not of the run's start.
struct configuration_floor {
  std::string coll;
  int p = 0;
  std::uint64_t bytes = 0;
  nlohmann::ordered_json figures;  // as add_cache_line writes them into the machine table
};

struct bench_results {
  bench_request request;
  nlohmann::ordered_json machine;
  std::vector<result_row> rows;
  std::vector<configuration_floor> floors;
  std::vector<skipped_config> skipped;
  std::vector<peer_run> peer_runs;
};

// "12.3", "1234", "0.85": microseconds with 3-4 significant digits.
std::string format_usec(double usec);

// One table per (coll, p), rows = sizes, columns = ranklab algorithms, then tbb, openmp, the
// MPI peers and the memcpy baselines; the last column names the algorithm "auto" picked.
void print_tables(std::FILE* out, const bench_results& r);
// Per coll, p, size: ranklab's best algorithm, auto, Open MPI, MPICH, oneTBB, OpenMP,
// auto / best MPI, auto / OpenMP, and auto's effective bandwidth against the two-thread
// memcpy bound.
void print_comparison(std::FILE* out, const bench_results& r);

std::string to_csv(const bench_results& r);
nlohmann::ordered_json to_json(const bench_results& r);
std::string to_markdown(const bench_results& r, const std::string& svg_name);
// Parts of every Markdown report: "# title — date", the command line and the machine table;
// the "## Skipped" section ("" when nothing was).
std::string markdown_heading(const bench_results& r, const std::string& title);
std::string markdown_skipped(const bench_results& r);

}  // namespace ranklab::tools::bench
