// `ranklab verify --coll C|all [--algo A|all]`: registered algorithms for every p in a range,
// through the verifier: the structure of every rank's schedules (ranklab/executor.hpp) and
// what they compute (ranklab/semantics.hpp), over verify_algorithm's sweep of roots, counts,
// in place and operator order, with the rounds and messages they take.
#pragma once
#include <span>
#include <vector>

#include "cli/checks.hpp"
#include "ranklab/registry.hpp"
#include "schedules/algorithm_call.hpp"

namespace ranklab::tools {

// Checks `algos` (of the collectives `colls`) for p in `ps`, with every root (roots 0, p/2
// and p-1 when `quick`) or --root, counts 0, 1 and uneven or --count; p at which an
// algorithm's preconditions reject every call are skipped. One line per algorithm goes to
// stdout as it is done (with the failing calls under it), and --json as `out` says.
// Returns whether every call verified.
bool check_algorithms(std::span<const collective> colls, const std::vector<const algorithm*>& algos, p_range ps,
                      const algorithm_options& o, bool quick, const output_options& out);

}  // namespace ranklab::tools
