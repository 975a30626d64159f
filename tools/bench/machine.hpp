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
// This process's arguments as started ({"ranklab", "bench"} when /proc does not say).
std::vector<std::string> own_command_line();

// CPU model, cores, memory, kernel, compiler, Open MPI and MPICH versions, ranklab commit.
nlohmann::ordered_json describe_machine();

}  // namespace ranklab::tools::bench
