// The --coll/--algo options of schedule and verify (see algorithm_call.hpp).
#include "schedules/algorithm_call.hpp"

#include <fmt/format.h>

#include "bench/workload.hpp"
#include "cli/checks.hpp"
#include "cli/option_parse.hpp"

namespace ranklab::tools {

void add_algorithm_options(CLI::App* cmd, algorithm_options& o, std::string_view wildcard,
                           std::string_view wildcard_help) {
  o.algo = o.wildcard = std::string(wildcard);
  cmd->add_option("--coll", o.coll,
                  fmt::format("Any registered algorithm of this collective instead of the circulant broadcast: {}",
                              fmt::join(collective_names(), ", ")));
  cmd->add_option("--algo", o.algo, fmt::format("With --coll: an algorithm name or {}", wildcard_help))
      ->each([&o](const std::string&) { o.algo_given = true; });
  cmd->add_option("--count", o.count, "With --coll: elements per block, MPI's count (v-collectives: every rank's)")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.count_given = true; });
  cmd->add_option("--root", o.root, "With --coll: the root rank")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.root_given = true; });
}

void check_algorithm_options_absent(const algorithm_options& o) {
  const char* option = o.algo_given ? "--algo" : o.count_given ? "--count" : o.root_given ? "--root" : nullptr;
  if (option != nullptr)
    usage_failure(fmt::format("{}: only with --coll (the circulant broadcast schedules have none)", option));
}

collective checked_collective(const algorithm_options& o, std::int64_t p_min, std::string_view root_why) {
  const collective c = parse_collective("--coll", o.coll);
  check_algorithm("--algo", c, o.algo, o.wildcard);
  check_range("--count", o.count, 0, static_cast<std::int64_t>(max_buffer_bytes), "elements");
  check_range("--root", o.root, 0, p_min - 1, root_why);
  return c;
}

call algorithm_call(collective c, std::string_view algo_name, const algorithm_options& o, int p) {
  return bench::make_regular_call(c, p, static_cast<std::uint64_t>(o.count), datatype_of<std::int32_t>(), algo_name,
                                  static_cast<int>(o.root));
}

}  // namespace ranklab::tools
