// Measured level costs (ranklab/hierarchy.hpp, docs/hierarchy.md): the level-cost file's
// parser on good and bad files, and "auto" between flat and hierarchical on a comm of a
// synthetic topology, from the level costs in use: an expensive top level makes allreduce
// hierarchical (and correct), a cheap one keeps it flat, and either way the reason gives both
// predictions; without level costs (or with one level) nothing changes. And the pairs of
// cores `ranklab tune --levels` times for each level.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "ranklab/comm.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/hierarchy.hpp"
#include "ranklab/team.hpp"
#include "tune/levels.hpp"

using namespace ranklab;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The level costs used while it lives; after, none (RANKLAB_LEVEL_COSTS read again).
struct installed_costs {
  explicit installed_costs(level_costs c) { use_level_costs(std::move(c)); }
  ~installed_costs() { reset_level_costs(); }
  installed_costs(const installed_costs&) = delete;
  installed_costs& operator=(const installed_costs&) = delete;
};

level_costs two_levels(double top_alpha, double package_alpha) {
  return parse_level_costs(
      fmt::format("{{\"format\": \"ranklab-level-costs\", \"version\": 1, \"levels\": ["
                  "{{\"name\": \"package\", \"alpha\": {}, \"beta\": 1e-10, \"gamma\": 5e-11}},"
                  "{{\"name\": \"machine\", \"alpha\": {}, \"beta\": 1e-10, \"gamma\": 5e-11}}]}}",
                  package_alpha, top_alpha),
      "test-levels.json");
}

struct auto_outcome {
  std::string algorithm, reason;
  int wrong = 0;  // elements differing from the sequential reference, over all ranks
};

// allreduce (sum, int64) of n elements with "auto" on p ranks of the synthetic topology;
// rank 0's choice and reason, and the result against a sequential sum of every rank's input.
auto_outcome allreduce_auto(int p, const std::string& topology, int n = 64) {
  team_options o = team_options::from_environment();
  o.topology = topology;
  auto_outcome out;
  std::vector<int> wrong(static_cast<std::size_t>(p), 0);
  const auto input = [](int rank, int i) { return static_cast<std::int64_t>(rank) * 1000 + i * (rank % 3 + 1); };
  std::vector<std::int64_t> expected(static_cast<std::size_t>(n), 0);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < n; ++i) expected[static_cast<std::size_t>(i)] += input(r, i);
  run(
      p,
      [&](comm& c) {
        std::vector<std::int64_t> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = input(c.rank(), i);
        c.allreduce(x, y, ops::sum);
        for (int i = 0; i < n; ++i) wrong[static_cast<std::size_t>(c.rank())] += y[static_cast<std::size_t>(i)] != expected[static_cast<std::size_t>(i)];
        if (c.rank() == 0) {
          out.algorithm = std::string(c.last_algorithm()->name);
          out.reason = std::string(c.last_selection_reason());
        }
      },
      o);
  for (int w : wrong) out.wrong += w;
  return out;
}

std::string written(const std::string& name, const std::string& text) {
  const std::string path = "level_costs_" + name + ".json";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_SUITE("level costs") {
  TEST_CASE("a level-cost file: read, levels outermost first, written back unchanged") {
    const level_costs c = parse_level_costs(R"({"format": "ranklab-level-costs", "version": 1,
      "machine": {"hostname": "node7"},
      "levels": [{"name": "numa", "alpha": 1e-7, "beta": 2e-11, "gamma": 3e-11},
                 {"name": "machine", "alpha": 4e-7, "beta": 1e-10, "gamma": 3e-11, "min_bytes": 0,
                  "max_bytes": 4194304, "load_average": "0.10 0.20 0.30", "cores": [0, 8],
                  "max_relative_error": 0.2, "note": "fastest batch"},
                 {"name": "process", "alpha": 2e-6, "beta": 3e-10, "gamma": 3e-11}]})",
                                            "good.json");
    CHECK(c.source == "good.json");
    REQUIRE(c.levels.size() == 3);
    CHECK(c.levels[0].name == "process");
    CHECK(c.levels[1].name == "machine");
    CHECK(c.levels[2].name == "numa");
    CHECK(c.core_levels() == 2);
    REQUIRE(c.find("machine") != nullptr);
    CHECK(c.find("machine")->cost.alpha == doctest::Approx(4e-7));
    CHECK(c.find("machine")->max_bytes == 4194304);
    CHECK(c.find("machine")->load_average == "0.10 0.20 0.30");
    CHECK(c.find("machine")->cores == std::vector<int>{0, 8});
    CHECK(c.find("l3") == nullptr);
    const std::string text = to_json(c);
    CHECK(to_json(parse_level_costs(text, "again.json")) == text);

    const std::string path = written("good", text);
    CHECK(to_json(read_level_costs(path)) == text);
  }

  TEST_CASE("bad level-cost files are usage errors naming the file and the problem") {
    const auto fails = [](const std::string& text, const std::string& problem) {
      INFO(text);
      const std::string message = "bad.json: " + problem;
      CHECK_THROWS_WITH_AS(parse_level_costs(text, "bad.json"), doctest::Contains(message.c_str()), usage_error);
    };
    const std::string head = R"({"format": "ranklab-level-costs", "version": 1, )";
    const std::string machine = R"({"name": "machine", "alpha": 1e-7, "beta": 1e-10, "gamma": 1e-11})";
    fails("{\"format\": ", "not valid JSON");
    fails("[1, 2]", "expected a JSON object");
    fails(R"({"format": "ranklab-selection", "version": 1, "rules": []})", "not a level-cost file");
    fails(R"({"format": "ranklab-level-costs", "version": 2, "levels": []})", "format version 2 is not supported");
    fails(head + R"("levels": [], "rules": []})", "unknown key \"rules\"");
    fails(head + "\"machine\": {}}", "missing key \"levels\"");
    fails(head + R"("levels": {}})", "\"levels\" must be an array");
    fails(head + R"("levels": []})", "no \"machine\" level");
    fails(head + R"("levels": [{"name": "socket", "alpha": 1, "beta": 1, "gamma": 1}]})",
          "level 1: unknown level \"socket\"");
    fails(head + "\"levels\": [" + machine + ", " + machine + "]}", "level 2: \"machine\" is given twice");
    fails(head + R"("levels": [{"name": "machine", "beta": 1e-10, "gamma": 1e-11}]})",
          "level 1 (\"machine\"): missing key \"alpha\"");
    fails(head + R"("levels": [{"name": "machine", "alpha": 1e-7, "beta": -1e-10, "gamma": 1e-11}]})",
          "level 1 (\"machine\"): \"beta\" must be a non-negative finite number (seconds), not -1e-10");
    fails(head + R"("levels": [{"name": "machine", "alpha": "fast", "beta": 1e-10, "gamma": 1e-11}]})",
          "level 1 (\"machine\"): \"alpha\" must be a non-negative finite number (seconds), not \"fast\"");
    fails(head + R"("levels": [{"name": "machine", "alpha": 1e-7, "beta": 1e-10, "gamma": 1e-11, "speed": 3}]})",
          "level 1: unknown key \"speed\"");
    fails(head + R"("levels": [{"name": "machine", "alpha": 1e-7, "beta": 1e-10, "gamma": 1e-11, "min_bytes": 9,
          "max_bytes": 8}]})",
          "level 1 (\"machine\"): max_bytes 8 is below min_bytes 9");
    CHECK_THROWS_WITH_AS(read_level_costs("no/such/levels.json"),
                         doctest::Contains("no/such/levels.json: cannot open the level-cost file"), usage_error);
  }

  TEST_CASE("RANKLAB_LEVEL_COSTS: read at first use; a bad file is a usage error naming it") {
    const std::string path = written("bad_env", R"({"format": "ranklab-level-costs", "version": 1, "levels": []})");
    setenv("RANKLAB_LEVEL_COSTS", path.c_str(), 1);
    reset_level_costs();
    const std::string message = path + ": no \"machine\" level";
    CHECK_THROWS_WITH_AS(current_level_costs(), doctest::Contains(message.c_str()), usage_error);
    CHECK_THROWS_WITH_AS(current_level_costs(), doctest::Contains("named by RANKLAB_LEVEL_COSTS"), usage_error);
    const std::string good = written("good_env", to_json(two_levels(1e-6, 1e-7)));
    setenv("RANKLAB_LEVEL_COSTS", good.c_str(), 1);
    reset_level_costs();
    CHECK(current_level_costs()->source == good);
    CHECK(current_level_costs()->core_levels() == 2);
    unsetenv("RANKLAB_LEVEL_COSTS");
    reset_level_costs();
    CHECK(current_level_costs()->levels.empty());
  }

  TEST_CASE("auto: an expensive top level makes allreduce hierarchical, with both predictions") {
    const installed_costs guard(two_levels(1e-3, 1e-7));
    const auto_outcome r = allreduce_auto(8, "package:2 core:4");
    CHECK(r.wrong == 0);
    CHECK(r.algorithm == "hierarchical");
    INFO(r.reason);
    CHECK(contains(r.reason, "hierarchical predicted "));
    CHECK(contains(r.reason, "below flat "));
    CHECK(contains(r.reason, "under level costs test-levels.json (package:2)"));
    CHECK(contains(r.reason, "the table's choice"));
    // An uneven team on the same topology: still correct.
    const auto_outcome uneven = allreduce_auto(7, "package:2 core:4");
    CHECK(uneven.wrong == 0);
    CHECK(uneven.algorithm == "hierarchical");
  }

  TEST_CASE("auto: a cheap top level keeps allreduce flat, the reason weighing both") {
    const installed_costs guard(two_levels(1e-6, 1e-6));
    const auto_outcome r = allreduce_auto(8, "package:2 core:4");
    CHECK(r.wrong == 0);
    CHECK(r.algorithm != "hierarchical");
    INFO(r.reason);
    CHECK(contains(r.reason, "; flat " + r.algorithm + " predicted "));
    CHECK(contains(r.reason, "hierarchical "));
    CHECK(contains(r.reason, "under level costs test-levels.json (package:2)"));
  }

  TEST_CASE("auto without level costs, with one level, at p = 2 or named by the environment: as before") {
    const auto unweighed = [](const auto_outcome& r) {
      INFO(r.reason);
      CHECK(r.wrong == 0);
      CHECK(r.algorithm != "hierarchical");
      CHECK_FALSE(contains(r.reason, "hierarchical"));
    };
    reset_level_costs();
    unweighed(allreduce_auto(8, "package:2 core:4"));
    {
      // One level between cores (this machine's file on a 2-core VM): nothing to weigh.
      const installed_costs guard(parse_level_costs(
          R"({"format": "ranklab-level-costs", "version": 1, "levels": [
              {"name": "machine", "alpha": 1e-3, "beta": 1e-10, "gamma": 1e-11},
              {"name": "process", "alpha": 1e-2, "beta": 1e-9, "gamma": 1e-11}]})",
          "one-level.json"));
      unweighed(allreduce_auto(8, "package:2 core:4"));
    }
    const installed_costs guard(two_levels(1e-3, 1e-7));
    unweighed(allreduce_auto(2, "package:2 core:1"));
    setenv("RANKLAB_ALLREDUCE_ALGORITHM", "ring", 1);
    const auto_outcome named = allreduce_auto(8, "package:2 core:4");
    unsetenv("RANKLAB_ALLREDUCE_ALGORITHM");
    CHECK(named.algorithm == "ring");
    CHECK(named.wrong == 0);
  }

  TEST_CASE("tune --levels: a pair of cores per level, levels that coincide with the one out left out") {
    using tools::tune::core_domains;
    using tools::tune::level_pairs;
    const auto described = [](const core_domains& d) {
      std::string out;
      for (const auto& l : level_pairs(d))
        out += fmt::format("{}{}:{}-{}/{}", out.empty() ? "" : " ", l.name, l.core_a, l.core_b, l.split_by);
      return out;
    };
    // A 2-core VM: the machine alone, between its two cores.
    CHECK(described({{0, 0, 0}, {0, 0, 0}}) == "machine:0-1/core");
    // package:2 numa:2 core:2 (no L3: every core's is 0).
    core_domains node;
    for (int c = 0; c < 8; ++c) node.push_back({c / 4, c / 2, 0});
    CHECK(described(node) == "machine:0-4/package package:0-2/numa numa:0-1/core");
    // One NUMA node and one L3 per package: numa and l3 coincide with package.
    core_domains per_package;
    for (int c = 0; c < 4; ++c) per_package.push_back({c / 2, c / 2, c / 2});
    CHECK(described(per_package) == "machine:0-2/package package:0-1/core");
    CHECK(described({{0, 0, 0}}).empty());
  }
}
