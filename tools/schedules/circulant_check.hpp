// The exhaustive check of the circulant broadcast schedules (J. L. Träff, "Optimal
// Broadcast Schedules in Logarithmic Time with Applications to Broadcast, All-Broadcast,
// Reduction and All-Reduction"; docs/algorithms.md, "Circulant schedules") for every p in
// a range and every rank: the paper's four correctness conditions, Algorithm 1 simulated
// for each number of blocks n (every non-root receives every block exactly once, in
// n - 1 + q rounds, only blocks it already holds are sent), at most 4 send-schedule
// violations, and the recursion/search bounds of the receive schedule (circulant.hpp).
// Cost O(p log p + p (n + q)) per p; parallel over p with oneTBB, largest p first.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cli/checks.hpp"

namespace ranklab::tools {

// Verify holds the schedules of one p in memory, p * (2q + 1) bytes per thread.
inline constexpr std::int64_t max_circulant_check_p = std::int64_t{1} << 26;

struct circulant_check_options {
  p_range ps;
  // Numbers of blocks n for Algorithm 1, "a q + b" written as 7, q, q+1, 2q, 3q-2.
  std::vector<std::string> block_tokens;
  int threads = 0;  // 0: all cores
  int show = 10;    // failures to print
};

// Runs the check; the summary goes to stdout and --json as `out` says, progress to stderr
// while it is a terminal (unless quiet). Returns whether every p passed.
bool check_circulant(const circulant_check_options& o, const output_options& out);

}  // namespace ranklab::tools
