// The ranklab command line.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ranklab/errors.hpp"
#if __has_include("commands.hpp")
#include "commands.hpp"
#define RANKLAB_HAVE_SCHEDULE_COMMANDS 1
#endif

namespace ranklab::tools {
void add_demo_command(CLI::App& app);
void add_list_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_bench_command(CLI::App& app);
}  // namespace ranklab::tools

int main(int argc, char** argv) {
  CLI::App app{"ranklab: collective algorithms on ranks that are threads"};
  app.require_subcommand(1);
  ranklab::tools::add_demo_command(app);
  ranklab::tools::add_list_command(app);
  ranklab::tools::add_run_command(app);
  ranklab::tools::add_tune_command(app);
  ranklab::tools::add_bench_command(app);
#ifdef RANKLAB_HAVE_SCHEDULE_COMMANDS
  ranklab::tools::add_schedule_command(app);
  ranklab::tools::add_verify_command(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ranklab::error& e) {
    fmt::print(stderr, "ranklab: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ranklab: {}\n", e.what());
    return 2;
  }
  return 0;
}
