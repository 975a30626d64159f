// The library's side of selection (the public API is ranklab/selection.hpp).
#pragma once
#include <string>

#include "ranklab/registry.hpp"

namespace ranklab::detail {
// The choice for "auto": the table in use (ranklab/selection.hpp), then the built-in table
// for calls the table does not cover, then the first registered algorithm that accepts the
// call. Sets `why` ("table FILE, rule N (...): note" or "built-in table, rule N (...)").
// Returns nullptr only when no algorithm of the collective is registered; when none
// accepts the call it returns one that does not, so check_preconditions explains.
const algorithm* select_from_table(const coll_args& args, std::size_t elem_size, std::string& why);

// The cost model of the table in use, for machine_cost_model() (a per-thread copy, so a
// table installed later does not invalidate the reference).
const cost_model& calibrated_cost_model();
}  // namespace ranklab::detail
