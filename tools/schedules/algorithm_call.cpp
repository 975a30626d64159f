// The --coll/--algo options of schedule and verify (see algorithm_call.hpp).
#include "schedules/algorithm_call.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>

#include "bench/workload.hpp"
#include "cli/checks.hpp"
#include "cli/option_parse.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/hierarchy.hpp"

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
  cmd->add_option("--hierarchy", o.hierarchy,
                  "With --coll: the ranks' domains for the hierarchical algorithms, domains per level outermost "
                  "first: 2x3 is 2 domains of 3 ranks (p must be their product)");
}

void check_algorithm_options_absent(const algorithm_options& o) {
  const char* option = o.algo_given ? "--algo" : o.count_given ? "--count" : o.root_given ? "--root" : nullptr;
  if (option == nullptr && !o.hierarchy.empty()) option = "--hierarchy";
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

namespace {
// The hierarchy of a shape, made once and kept for the process (calls point to it).
const rank_hierarchy& hierarchy_of_shape(const std::string& shape) {
  static std::map<std::string, std::unique_ptr<const rank_hierarchy>> made;
  auto& h = made[shape];
  if (!h) {
    try {
      h = std::make_unique<const rank_hierarchy>(rank_hierarchy::from_shape(shape));
    } catch (const usage_error& e) {
      made.erase(shape);
      usage_failure(fmt::format("--hierarchy {}: {}", shape, e.cause()));
    }
  }
  return *h;
}
}  // namespace

const rank_hierarchy* shape_hierarchy(const algorithm_options& o) {
  return o.hierarchy.empty() ? nullptr : &hierarchy_of_shape(o.hierarchy);
}

call algorithm_call(collective c, std::string_view algo_name, const algorithm_options& o, int p) {
  call cl = bench::make_regular_call(c, p, static_cast<std::uint64_t>(o.count), datatype_of<std::int32_t>(), algo_name,
                                     static_cast<int>(o.root));
  if (!o.hierarchy.empty()) {
    const rank_hierarchy& h = hierarchy_of_shape(o.hierarchy);
    if (h.size() != p)
      usage_failure(fmt::format("--hierarchy {}: {} ranks, but the call has p = {} (give -p {})", o.hierarchy,
                                h.size(), p, h.size()));
    cl.args.hierarchy = &h;
  }
  return cl;
}

}  // namespace ranklab::tools
