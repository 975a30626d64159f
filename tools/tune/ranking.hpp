// The rules of `ranklab tune`: every registered algorithm accepting a call is timed on the
// thread executor through comm::run_collective, batches interleaved across algorithms, the
// median of the batches; per (collective, p range, size band) the fastest, then the next
// fastest until one without preconditions, so that "auto" falls through to a measured choice.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "bench/timing.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/selection.hpp"

namespace ranklab::tools::tune {

// What to measure: team sizes and sizes in bytes per rank (whole float64 elements), both
// ascending; `batches` batches of about batch_seconds per algorithm and configuration.
struct ranking_plan {
  std::vector<collective> colls;
  std::vector<int> ps;
  std::vector<std::uint64_t> sizes;
  int batches = 5;
  double batch_seconds = 4e-3;
  // Sweeps over all configurations; each configuration's batches of every pass are pooled.
  int passes = 1;
};

struct ranking {
  std::vector<selection_rule> rules;
  nlohmann::ordered_json measured = nlohmann::ordered_json::array();  // every configuration's times
};

// Measures every (collective, p, size) of the plan; progress names the elapsed time since
// `start`. Rule i covers p up to ps[i] (the last one any p) and sizes up to the geometric
// middle between measured sizes.
ranking rank_algorithms(const ranking_plan& plan, bench::clock_type::time_point start);

}  // namespace ranklab::tools::tune
