// `ranklab bench --compare`: the same collectives, p and sizes through Open MPI and MPICH, by
// launching the peer programs bench/peers/mpi_collectives.{openmpi,mpich} (built by
// bench/peers/CMakeLists.txt) the way bench/peers/run_peers.sh does, with a per-run timeout,
// and parsing their CSV output (impl,coll,mode,p,bytes,usec).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ranklab/collective.hpp"

namespace ranklab::tools::bench {

// A child process run to completion or killed (with its process group) at the timeout.
struct process_result {
  int exit_code = -1;  // -1: killed or not started
  bool timed_out = false;
  bool started = false;
  std::string out, err;
};
process_result run_process(const std::vector<std::string>& argv, double timeout_seconds);
// The first line of a command's output (stdout, else stderr); empty if it cannot run.
std::string first_line_of(const std::vector<std::string>& argv);

struct peer_row {
  std::string impl, coll, mode;
  int p = 0;
  std::uint64_t bytes = 0;
  double usec = 0;
};
// Parses the peers' CSV; skips the header and anything that is not a row.
std::vector<peer_row> parse_peer_csv(std::string_view text);

struct peer_settings {
  std::string dir;              // where mpi_collectives.<impl> lives
  double timeout_seconds = 60;  // per launch
  double time_per_size = 0.2;   // passed as --time
  int batches = 7;
  bool check = true;  // false: --no-check
};

struct peer_run {
  std::string impl;  // "openmpi" or "mpich"
  std::string coll;
  int p = 0;
  // "ok"; "timeout" (rows measured before it are kept); "n/a" (the peer does not know the
  // collective); "missing" (no binary); "error" (detail says why)
  std::string status;
  std::string detail;
  std::string command;
  std::vector<peer_row> rows;
};

// The directory of the running binary (from /proc/self/exe), or "" if it cannot be read.
std::string exe_dir();
// The last line of text with more than blanks and tabs, or "".
std::string last_nonblank_line(const std::string& text);
// <directory of the running ranklab binary>/bench/peers, or "" if it has no peer binaries.
std::string default_peers_dir();
// Runs mpi_collectives.<impl> for one collective and p over `sizes` (bytes per rank; the
// sweep passes one size per launch, so that the peer runs right after ranklab's rows).
peer_run run_peer(const peer_settings& s, std::string_view impl, collective c, int p,
                  const std::vector<std::uint64_t>& sizes);
// The launcher's command line for `program` with p ranks (Open MPI: --allow-run-as-root as
// root, --oversubscribe --bind-to none when p exceeds the cores, else --bind-to core; MPICH:
// -bind-to core when p fits the cores).
std::vector<std::string> launcher_command(std::string_view impl, int p, int cores, bool root_user);
int available_cores();

}  // namespace ranklab::tools::bench
