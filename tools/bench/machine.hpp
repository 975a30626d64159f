// Where and when a measurement ran, for the record that `ranklab bench` and `ranklab tune`
// write next to their figures: a figure means little without the machine and its load.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ranklab::tools::bench {

std::string utc_timestamp();  // "2024-05-01T12:00:00Z"
std::string local_date();     // "2024-05-01", for names of result files
std::string host_name();      // "unknown" when the system does not say
std::string load_average();   // "0.52 0.40 0.31" (1, 5, 15 minutes) or "unknown"
// The quiet-machine check of `ranklab bench`: other processes on the cores make every
// figure noisy, so a 1-minute load average above `per_core` per core is reported.
struct load_check {
  double load1 = -1;  // -1: unknown
  int cores = 1;
  bool busy = false;
  std::string message;  // when busy: the load, the cores and the limit
};
// From /proc/loadavg's text ("0.52 0.40 0.31 1/123 4567"); unreadable text is not busy.
load_check check_load(const std::string& loadavg_text, int cores, double per_core = 1.0);
// This machine now (available_cores()).
load_check current_load();

// This process's arguments as started ({"ranklab", "bench"} when /proc does not say).
std::vector<std::string> own_command_line();

// CPU model, cores, memory, kernel, load, compiler, oneTBB, the OpenMP runtime and its
// environment, Open MPI and MPICH versions, ranklab commit.
nlohmann::ordered_json describe_machine();

}  // namespace ranklab::tools::bench
