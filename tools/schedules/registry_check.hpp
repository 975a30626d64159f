// `ranklab verify --coll C [--algo A]`: every rank's schedules of registered algorithms, for
// every p in a range, through the verifier (ranklab/executor.hpp: sends paired with receives,
// one-ported rounds, buffer bounds and message sizes), with the rounds and messages they take.
#pragma once
#include <vector>

#include "cli/checks.hpp"
#include "ranklab/registry.hpp"
#include "schedules/algorithm_call.hpp"

namespace ranklab::tools {

// Checks `algos` (all of collective c) for p in `ps` on the call `o` describes; p for which
// an algorithm's preconditions reject the call are skipped. The summary goes to stdout and
// --json as `out` says. Returns whether every schedule set verified.
bool check_algorithms(collective c, const std::vector<const algorithm*>& algos, p_range ps, const algorithm_options& o,
                      const output_options& out);

}  // namespace ranklab::tools
