// `ranklab tune --levels`: the cost model of each level of this machine's hierarchy, for the
// hierarchical algorithms and for "auto" between them and the flat ones (docs/hierarchy.md).
// A level (machine, package, numa, l3) is measured between two cores in one of its domains
// and in different domains of the next level in that splits it: ping-pong for alpha and
// beta, the reducing exchange for gamma (cost_fit.hpp; the fastest of many short batches).
// The level "process" is two MPI processes of this node, timed by ranklab_mpi_bench
// (tools/bench/mpi_sweep.hpp): a 2-rank allgather (one exchange: alpha + beta m) and a 2-rank
// allreduce (one exchange and a reduction: alpha + (beta + gamma) m).
#pragma once
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ranklab/hierarchy.hpp"

namespace ranklab::tools::tune {

// Which cores hold a level's pair: of_core[c] = {package, numa, l3} domain numbers of core c.
using core_domains = std::vector<std::array<int, 3>>;

struct level_pair {
  std::string name;  // machine, package, numa, l3
  int core_a = 0, core_b = 0;
  std::string split_by;  // the next level in whose domains the two cores are in: package ... core
};

// The levels worth measuring on a machine of these cores: machine, then each of package,
// numa, l3 whose domain holding core 0 has fewer cores than the last level kept (a level
// that coincides with the one out measures the same pair); each with core 0 and the first
// core of its domain in another domain of the next level in that splits it. Empty for one core.
std::vector<level_pair> level_pairs(const core_domains& of_core);

// This machine's domains per core (a compactly bound team of one rank per core asks
// comm::domain_index), from hwloc; never a synthetic topology.
core_domains machine_domains();

struct level_plan {
  std::vector<std::uint64_t> sizes;  // message sizes, ascending
  int batches = 5;                   // short batches per size: the fastest is kept
  double batch_seconds = 0.25e-3;
  // "process": ranklab_mpi_bench of this MPI under mpi_dir ("none": not measured).
  std::string mpi = "openmpi";
  std::string mpi_dir;
  double mpi_seconds = 0.05;  // per variant and size
  int mpi_batches = 5;
  int mpi_launches = 3;  // the fastest median of these launches per size: MPI processes share loaded cores
  double mpi_max_seconds = 2;
  double peer_timeout = 0;
  bool quiet = false;
};

struct level_measurement {
  level_costs costs;                             // machine_json left to the caller
  nlohmann::ordered_json samples = nlohmann::ordered_json::object();  // per level: the raw one-way times
  std::string process_note;                      // why "process" is missing, if it is
};

// Measures every level of level_pairs(machine_domains()) and, when its bench program is
// there, the process level. Throws usage_error on a machine of one core.
level_measurement measure_levels(const level_plan& plan);

}  // namespace ranklab::tools::tune
