// Subcommands of the `ranklab` tool: each add_*_command adds one subcommand and its
// callback to the application (called from tools/ranklab.cpp).
#pragma once

#include <CLI/CLI.hpp>

namespace ranklab::tools {

// `ranklab schedule -p P [--rank R] [--json [FILE]]`: circulant receive/send schedules (cmd_schedule.cpp)
void add_schedule_command(CLI::App& app);
// `ranklab verify --p A..B [--blocks n1,n2,...] [--json [FILE]]`: exhaustive schedule checks (cmd_verify.cpp)
void add_verify_command(CLI::App& app);

}  // namespace ranklab::tools
