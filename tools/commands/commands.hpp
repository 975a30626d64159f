// The subcommands of the `ranklab` tool, one file each in tools/commands/: each
// add_*_command adds its subcommand, options and callback to the application
// (tools/ranklab.cpp calls them all).
#pragma once

#include <CLI/CLI.hpp>

namespace ranklab::tools {

// `ranklab demo`: a first look at a team of rank threads (demo.cpp)
void add_demo_command(CLI::App& app);
// `ranklab list [--coll C] [--markdown]`: the algorithm catalogue (list.cpp)
void add_list_command(CLI::App& app);
// `ranklab run --coll C [--algo A]`: one collective checked against the reference (run.cpp)
void add_run_command(CLI::App& app);
// `ranklab tune`: calibrate the cost model and write a selection table (tune.cpp)
void add_tune_command(CLI::App& app);
// `ranklab bench --coll C,...`: time algorithms against baselines and MPI (bench.cpp)
void add_bench_command(CLI::App& app);
// `ranklab schedule -p P [--coll C --algo A]`: the schedules of an algorithm (schedule.cpp)
void add_schedule_command(CLI::App& app);
// `ranklab verify --p A..B [--coll C --algo A]`: exhaustive schedule checks (verify.cpp)
void add_verify_command(CLI::App& app);
// `ranklab draw --coll C --algo A -p P --out FILE.svg|.html`: pictures of schedules (draw.cpp)
void add_draw_command(CLI::App& app);
// `ranklab predict --coll C --shape S --level NAME=a,b,g ...`: the cost model's hierarchical
// against flat on a larger machine, nothing run (predict.cpp)
void add_predict_command(CLI::App& app);

}  // namespace ranklab::tools
