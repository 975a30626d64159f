// `--coll C --algo A [--count N] [--root R]` of `ranklab schedule` and `ranklab verify`:
// which registered algorithm to show or check instead of the circulant broadcast schedules
// (the default, without --coll), and the call its schedules are built for.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "ranklab/call.hpp"
#include "ranklab/hierarchy.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::tools {

struct algorithm_options {
  std::string coll;      // empty: the circulant schedules
  std::string algo;      // as given; `wildcard` when not
  std::string wildcard;  // "auto" (schedule) or "all" (verify)
  std::int64_t count = 8;
  std::int64_t root = 0;
  // --hierarchy SHAPE: the ranks' domains for the hierarchical algorithms (rank_hierarchy::
  // from_shape, "2x3"); empty: none (they run flat).
  std::string hierarchy;
  bool algo_given = false, count_given = false, root_given = false;
};

// Adds the four options; `wildcard` is what --algo means when not given ("auto" for
// schedule, "all" for verify), described by `wildcard_help`.
void add_algorithm_options(CLI::App* cmd, algorithm_options& o, std::string_view wildcard,
                           std::string_view wildcard_help);

// Without --coll, --algo, --count and --root have nothing to apply to: a usage error.
void check_algorithm_options_absent(const algorithm_options& o);

// The collective, with --algo checked against it (a name of it or the wildcard), --count
// bounded and --root a rank of every p from p_min (`root_why` says so in the message).
collective checked_collective(const algorithm_options& o, std::int64_t p_min, std::string_view root_why);

// The call of c with algorithm `algo_name` on p ranks: int32 sum (as `ranklab run` by
// default), --count elements per block ("regular" counts for the v-collectives), --root,
// and --hierarchy's domains (a usage error unless the shape has p ranks).
call algorithm_call(collective c, std::string_view algo_name, const algorithm_options& o, int p);

// --hierarchy's domains, made once and kept for the process; nullptr without the option. A
// shape rank_hierarchy::from_shape refuses is a usage error.
const rank_hierarchy* shape_hierarchy(const algorithm_options& o);

}  // namespace ranklab::tools
