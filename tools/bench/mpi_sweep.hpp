// `ranklab bench --backend mpi`: ranklab's one-ported algorithms over real MPI against the
// same MPI's native collectives. Launches <build>/mpi/<impl>/ranklab_mpi_bench (mpi/bench/)
// once per (MPI, p) with the MPI peers' launcher flags (peers.hpp: launcher_command) and a
// timeout, and reads its CSV into result rows: impl = the MPI, algo = "native" or the ranklab
// algorithm asked for, selected = the algorithm that ran.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bench/report.hpp"
#include "ranklab/collective.hpp"

namespace ranklab::tools::bench {

struct mpi_sweep_settings {
  std::vector<std::string> impls;  // "openmpi", "mpich"
  std::vector<collective> colls;
  std::vector<std::string> algos;  // as asked: "all", "auto", names
  std::vector<int> ps;
  std::vector<std::uint64_t> sizes;
  double seconds = 0.2;  // --time per variant and size
  int batches = 7;
  double max_seconds = -1;  // budget per variant and size (<0: the program's default)
  long max_iters = 0;       // calls per batch at most (0: no cap)
  bool check = true;
  std::string dir;             // holds <impl>/ranklab_mpi_bench
  double timeout_seconds = 0;  // per launch; 0: estimated from the sweep
  bool quiet = false;
};

// <directory of the running ranklab binary>/mpi, where the build puts ranklab_mpi_bench.
std::string default_mpi_bench_dir();
// The program for impl under dir ("" when it is not there).
std::string mpi_bench_program(const std::string& dir, const std::string& impl);

// One launch per (impl, p) into res.rows (and res.peer_runs: status, command); false when a
// launch failed, timed out or its verification failed.
bool run_mpi_sweep(const mpi_sweep_settings& s, bench_results& res);

// Parses ranklab_mpi_bench's CSV (impl,coll,p,bytes,algo,selected,seconds,batches,iterations,
// checked,status); lines that are not rows are skipped.
std::vector<result_row> parse_mpi_bench_csv(const std::string& text);

}  // namespace ranklab::tools::bench
