// `ranklab list`: every registered algorithm with its preconditions.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>

#include "ranklab/registry.hpp"

namespace ranklab::tools {

namespace {
std::string preconditions(const algorithm& a) {
  std::string s;
  if (a.needs_commutative) s += "commutative op";
  if (a.needs_power_of_two) s += std::string(s.empty() ? "" : ", ") + "p power of two";
  if (!a.one_ported) s += std::string(s.empty() ? "" : ", ") + "shared memory (not one-ported)";
  return s.empty() ? "-" : s;
}
}  // namespace

void add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List the registered algorithms and their preconditions");
  static bool json = false;
  static std::string only;
  cmd->add_flag("--json", json, "One JSON array");
  cmd->add_option("--coll", only, "Only this collective");
  cmd->callback([] {
    nlohmann::json all = nlohmann::json::array();
    std::string last;
    for (const algorithm* a : registry::all()) {
      const std::string coll(name(a->coll));
      if (!only.empty() && coll != only) continue;
      if (json) {
        all.push_back({{"coll", coll}, {"algo", a->name}, {"preconditions", preconditions(*a)},
                       {"needs_commutative", a->needs_commutative}, {"needs_power_of_two", a->needs_power_of_two},
                       {"one_ported", a->one_ported}, {"composition", a->composition}, {"summary", a->summary}});
        continue;
      }
      if (coll != last) fmt::print("{}\n", coll);
      last = coll;
      fmt::print("  {:<22} {:<18} {}\n", a->name, preconditions(*a), a->summary);
      if (!a->composition.empty()) fmt::print("  {:<22} {:<18} = {}\n", "", "", a->composition);
    }
    if (json) std::cout << all.dump(2) << "\n";
  });
}

}  // namespace ranklab::tools
