// The runs of `ranklab bench`: which configurations run and which are skipped (the plan),
// then their measurement configuration by configuration (collective, p, size): with
// --compare the machine's floors, then ranklab's algorithms, the baselines (memcpy of one
// rank's result, oneTBB, OpenMP) and the MPI peers, each adding rows to the results.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bench/peers.hpp"
#include "bench/report.hpp"
#include "bench/timing.hpp"
#include "ranklab/collective.hpp"

namespace ranklab::tools::bench {

struct sweep_settings {
  std::vector<collective> colls;
  std::vector<std::string> algos;  // as asked: "all", "auto" and registered names
  std::vector<int> ps;
  std::vector<std::uint64_t> sizes;  // bytes per rank, as requested
  timing_options timing;
  bool check = true;      // each configuration against the sequential reference first
  bool baselines = true;  // memcpy, oneTBB and OpenMP
  bool rewrite = false;   // each rank rewrites its send data before every timed call
  bool compare = false;   // the MPI peers, with `peers`
  peer_settings peers;
  std::uint64_t max_memory = 0;  // bytes of buffers a configuration may take
  std::string max_memory_text;   // as given, for the notes
  bool quiet = false;            // no progress on stderr
};

// The sizes of c as reported (reported_bytes), each once; barrier: {0}.
std::vector<std::uint64_t> reported_sizes(collective c, const std::vector<std::uint64_t>& sizes);

// Measures everything `s` asks for into res.rows (configurations not run into res.skipped,
// the peers' launches into res.peer_runs); false when a result was wrong or a measurement
// failed.
bool run_sweep(const sweep_settings& s, bench_results& res);

}  // namespace ranklab::tools::bench
