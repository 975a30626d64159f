// The library's side of selection (the public API is ranklab/selection.hpp).
#pragma once
#include <string>
#include <string_view>

#include "ranklab/registry.hpp"

namespace ranklab {
struct rank_hierarchy;  // ranklab/hierarchy.hpp
}  // namespace ranklab

namespace ranklab::detail {
// The choice for "auto": the table in use (ranklab/selection.hpp), then the built-in table
// for calls the table does not cover, then the first registered algorithm that accepts the
// call. Sets `why` ("table FILE, rule N (...): note" or "built-in table, rule N (...)").
// Returns nullptr only when no algorithm of the collective is registered; when none
// accepts the call it returns one that does not, so check_preconditions explains.
const algorithm* select_from_table(const coll_args& args, std::size_t elem_size, std::string& why);

// The hierarchical algorithm of the call's collective that "auto"'s choice `chosen` is to be
// weighed against, or nullptr: only for "auto" (no name asked, no RANKLAB_<COLL>_ALGORITHM),
// p > 2, a flat choice, a hierarchical algorithm that accepts the call, and level costs in use
// (current_level_costs) for two or more levels between cores. Reads no topology: the comm
// makes its hierarchy only when this returns one.
const algorithm* hierarchical_candidate(const coll_args& args, std::string_view requested, const algorithm& chosen);

// "auto" between the table's flat choice and hierarchical algorithm `hier` on `h`: `hier`'s
// predicted time (its cost function: each phase under its level's model) against `flat`'s
// under h.top_cost, the slowest link (docs/hierarchy.md says why). `flat` unless `h` has
// measured costs (costs_from), an outermost level of several domains, both predictions, and
// `hier` cheaper; `why` then, or when weighed and kept flat, gives both figures.
const algorithm& flat_or_hierarchical(const coll_args& args, std::size_t elem_size, const algorithm& flat,
                                      const algorithm& hier, const rank_hierarchy& h, std::string& why);

// The cost model of the table in use, for machine_cost_model() (a per-thread copy, so a
// table installed later does not invalidate the reference).
const cost_model& calibrated_cost_model();
}  // namespace ranklab::detail
