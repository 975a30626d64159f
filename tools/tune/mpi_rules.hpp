// The rules of `ranklab tune --backend mpi`: from one MPI's benchmark rows (ranklab's one-ported
// algorithms and the native collective, timed side by side by ranklab_mpi_bench), per
// (collective, p range, size band) the algorithms that measured faster than the native
// collective by more than a margin, fastest first, then "native". A band where none did is
// one "native" rule: the interposer then leaves such calls to the MPI library, so that
// preloading it does not make a program slower.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "bench/report.hpp"
#include "ranklab/selection.hpp"

namespace ranklab::tools::tune {

struct mpi_rule_plan {
  std::vector<collective> colls;
  std::vector<int> ps;                // ascending: rule i covers p up to ps[i] (the last: any p)
  std::vector<std::uint64_t> sizes;   // ascending: bands up to the geometric middle between sizes
  // A ranklab algorithm is preferred only when its time is below native * (1 - margin): on
  // equal footing the native collective wins (the interposer's promise is "never slower").
  double margin = 0.1;
};

struct mpi_ranking {
  std::vector<selection_rule> rules;
  nlohmann::ordered_json measured = nlohmann::ordered_json::array();  // the times per configuration
};

// Rows of one MPI (impl), as run_mpi_sweep makes them: algo "native" or a ranklab algorithm
// ("auto" rows are ignored), usec_median per call, status "ok" or "cut". A configuration
// without a native time keeps the native collective (nothing to compare with).
mpi_ranking rank_over_mpi(const mpi_rule_plan& plan, const std::vector<bench::result_row>& rows);

// The rows of several whole sweeps (--passes), a sweep apart in time, as one: per (impl,
// coll, algo, p, bytes) the median over the passes of each pass's per-call median (of an even
// number, the mean of the middle two), from the passes where it ran ("ok"). A machine whose
// speed changes for minutes at a time (a VM's host) then moves one pass, not the table.
// A key no pass ran keeps the first pass's row (its status says why).
std::vector<bench::result_row> pooled_passes(const std::vector<std::vector<bench::result_row>>& passes);

}  // namespace ranklab::tools::tune
