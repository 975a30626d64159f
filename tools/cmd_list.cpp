// `ranklab list`: every registered algorithm with its preconditions.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_checks.hpp"
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
  static output_options out;
  static std::string only;
  add_output_options(cmd, out, "an array of {coll, algo, preconditions, ...}");
  cmd->add_option("--coll", only, "Only this collective (default: all)");
  cmd->callback([] {
    // An unknown name is an error, not an empty list.
    if (!only.empty()) (void)parse_collective("--coll", only);
    nlohmann::json all = nlohmann::json::array();
    std::string last;
    for (const algorithm* a : registry::all()) {
      const std::string coll(name(a->coll));
      if (!only.empty() && coll != only) continue;
      if (out.json)
        all.push_back({{"coll", coll}, {"algo", a->name}, {"preconditions", preconditions(*a)},
                       {"needs_commutative", a->needs_commutative}, {"needs_power_of_two", a->needs_power_of_two},
                       {"one_ported", a->one_ported}, {"composition", a->composition}, {"summary", a->summary}});
      if (!out.text()) continue;
      if (coll != last) fmt::print("{}\n", coll);
      last = coll;
      fmt::print("  {:<22} {:<18} {}\n", a->name, preconditions(*a), a->summary);
      if (!a->composition.empty()) fmt::print("  {:<22} {:<18} = {}\n", "", "", a->composition);
    }
    if (out.json) write_json(out, all.dump(2));
  });
}

}  // namespace ranklab::tools
