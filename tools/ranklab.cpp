// The ranklab command line.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/checks.hpp"
#include "commands/commands.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

// The project version, from CMake's project(VERSION) via a compile definition on the tool.
#ifndef RANKLAB_VERSION
#define RANKLAB_VERSION "unknown (built without -DRANKLAB_VERSION)"
#endif

namespace {

// `--plugin FILE.so`, repeatable, on the application and on every subcommand, so that it may
// come before or after the subcommand's name. Each library is loaded as soon as its option
// is parsed (trigger_on_parse): before any other option's check or the subcommand's callback
// looks an algorithm name up. RANKLAB_PLUGINS needs nothing here: the registry loads it.
void add_plugin_option(CLI::App* app) {
  app->add_option_function<std::string>(
         "--plugin",
         [](const std::string& path) {
           try {
             ranklab::load_plugin(path);
           } catch (const ranklab::usage_error& e) {
             ranklab::tools::usage_failure(fmt::format("--plugin {}: {}", path, e.cause()));
           }
         },
         "Load the algorithms of this shared library first (repeatable; RANKLAB_PLUGINS=a.so:b.so does "
         "the same for every program)")
      ->type_name("FILE.so")
      ->trigger_on_parse();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ranklab: collective algorithms on ranks that are threads"};
  app.set_version_flag("--version", std::string("ranklab ") + RANKLAB_VERSION);
  app.require_subcommand(1);
  ranklab::tools::add_demo_command(app);
  ranklab::tools::add_list_command(app);
  ranklab::tools::add_run_command(app);
  ranklab::tools::add_tune_command(app);
  ranklab::tools::add_bench_command(app);
  ranklab::tools::add_schedule_command(app);
  ranklab::tools::add_verify_command(app);
  ranklab::tools::add_draw_command(app);
  ranklab::tools::add_predict_command(app);
  ranklab::tools::check_integer_texts(app);
  add_plugin_option(&app);
  for (CLI::App* sub : app.get_subcommands({})) add_plugin_option(sub);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version (exit code 0) and a subcommand's own failure status
    // (CLI::RuntimeError, e.g. 1 for a wrong result) pass through; every misuse of the
    // command line is one message and usage_exit_code, whatever CLI11's code for it.
    if (e.get_exit_code() == 0 || dynamic_cast<const CLI::RuntimeError*>(&e) != nullptr) return app.exit(e);
    std::string help = "ranklab";
    for (const CLI::App* sub : app.get_subcommands()) help += " " + sub->get_name();
    fmt::print(stderr, "ranklab: {}\nRun '{} --help' for the options.\n", e.what(), help);
    return ranklab::tools::usage_exit_code;
  } catch (const ranklab::usage_error& e) {
    fmt::print(stderr, "ranklab: {}\n", e.what());
    return ranklab::tools::usage_exit_code;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ranklab: {}\n", e.what());
    return 1;
  }
  return 0;
}
