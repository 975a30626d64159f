// The suites' main. `--execution=threads|fibers|deterministic` runs a suite's teams in that
// mode (through RANKLAB_EXECUTION / RANKLAB_SEED, which teams whose code leaves the choice to
// ranklab follow): tests/CMakeLists.txt registers the runtime suites once per mode.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with("--execution=")) continue;
    const std::string_view mode = arg.substr(arg.find('=') + 1);
    if (mode == "threads" || mode == "fibers") {
      setenv("RANKLAB_EXECUTION", std::string(mode).c_str(), 1);
    } else if (mode == "deterministic") {
      setenv("RANKLAB_EXECUTION", "fibers", 1);
      setenv("RANKLAB_SEED", "20261124", 1);
    } else {
      std::fprintf(stderr, "unknown --execution=%s (threads, fibers, deterministic)\n", argv[i] + 12);
      return 2;
    }
  }
  doctest::Context context(argc, argv);
  return context.run();
}
