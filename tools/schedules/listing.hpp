// The schedules of one registered algorithm for one call, as `ranklab schedule --coll`
// shows them: every rank's rounds (schedule::describe: what each round sends, receives and
// computes) after a line with the call, the rounds and the messages, or as JSON.
#pragma once
#include <span>
#include <string>

#include "ranklab/call.hpp"
#include "ranklab/executor.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::tools {

// `report` is the verifier's report of all ranks' schedules, or null when `ranks` holds one.
void print_schedules(const algorithm& a, const call& c, std::span<const schedule> ranks, const verify_report* report);
std::string schedules_json(const algorithm& a, const call& c, std::span<const schedule> ranks,
                           const verify_report* report);

}  // namespace ranklab::tools
