// Exploring interleavings: a program run in deterministic mode (team_options::seed) under
// many seeds, each a different but exactly repeatable order of the ranks' steps.
//
//   const auto found = ranklab::explore(8, body, {.first_seed = 1, .seeds = 200});
//   if (found.failing_seed)  // replay it: team_options o; o.seed = *found.failing_seed;
//     std::cerr << "seed " << *found.failing_seed << ": " << found.what << "\n";
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>

#include "ranklab/team.hpp"

namespace ranklab {

struct explore_options {
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 100;  // runs with first_seed, first_seed + 1, ...
  // The team's other options (execution and seed are set by explore).
  team_options team = team_options::from_environment();
};

struct exploration {
  std::uint64_t runs = 0;                     // seeds tried, the failing one included
  std::optional<std::uint64_t> failing_seed;  // the first seed whose run threw
  std::exception_ptr failure;                 // what ranklab::run threw then
  std::string what;                           // its message
};

// Runs ranklab::run(p, fn) once per seed until a run throws; reports that seed, or none.
exploration explore(int p, const std::function<void(comm&)>& fn, const explore_options& options = {});

}  // namespace ranklab
