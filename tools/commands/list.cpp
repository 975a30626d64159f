// `ranklab list`: every registered algorithm with its preconditions, as text, JSON or (with
// --markdown) the Markdown table docs/catalogue.md shows.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cli/checks.hpp"
#include "commands/commands.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::tools {

namespace {

std::string preconditions(const algorithm& a) {
  std::string s;
  if (a.needs_commutative) s += "commutative op";
  if (a.needs_power_of_two) s += std::string(s.empty() ? "" : ", ") + "p power of two";
  if (a.only_p > 0) s += std::string(s.empty() ? "" : ", ") + fmt::format("p = {} only", a.only_p);
  if (!a.one_ported) s += std::string(s.empty() ? "" : ", ") + "shared memory (not one-ported)";
  if (a.payload_bytes)
    s += std::string(s.empty() ? "" : ", ") + fmt::format("<= {} B per rank with the fence ({} B for p > {})",
                                                          wide_fence_payload_bytes, fence_payload_bytes,
                                                          wide_fence_payload_ranks);
  return s.empty() ? "-" : s;
}

// The collectives one builder serves ("allgather, allgatherv"), in enum order.
std::string served(const algorithm& a) {
  std::vector<std::string_view> names;
  for (int i = 0; i < collective_count; ++i)
    if (a.serves.contains(static_cast<collective>(i))) names.push_back(name(static_cast<collective>(i)));
  return names.empty() ? std::string(name(a.coll)) : fmt::format("{}", fmt::join(names, ", "));
}

// A table cell: a '|' would end the cell.
std::string cell(std::string_view text) {
  std::string out;
  for (char ch : text) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

void print_markdown_header() {
  fmt::print(
      "| collective | algorithm | collectives served | preconditions | summary |\n"
      "| --- | --- | --- | --- | --- |\n");
}

void print_markdown_row(const algorithm& a) {
  std::string summary = cell(a.summary);
  if (!a.composition.empty()) summary += "<br>= " + cell(a.composition);
  fmt::print("| {} | {} | {} | {} | {} |\n", name(a.coll), cell(a.name), served(a), preconditions(a), summary);
}

void print_text_row(const algorithm& a, std::string& last_coll) {
  const std::string coll(name(a.coll));
  if (coll != last_coll) fmt::print("{}\n", coll);
  last_coll = coll;
  fmt::print("  {:<22} {:<18} {}\n", a.name, preconditions(a), a.summary);
  if (!a.composition.empty()) fmt::print("  {:<22} {:<18} = {}\n", "", "", a.composition);
}

nlohmann::json json_of(const algorithm& a) {
  return {{"coll", std::string(name(a.coll))},
          {"algo", a.name},
          {"preconditions", preconditions(a)},
          {"needs_commutative", a.needs_commutative},
          {"needs_power_of_two", a.needs_power_of_two},
          {"only_p", a.only_p},
          {"one_ported", a.one_ported},
          {"composition", a.composition},
          {"summary", a.summary}};
}

}  // namespace

void add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List the registered algorithms and their preconditions");
  static output_options out;
  static std::string only;
  static bool markdown = false;
  add_output_options(cmd, out, "an array of {coll, algo, preconditions, ...}");
  cmd->add_option("--coll", only, "Only this collective (default: all)");
  cmd->add_flag("--markdown", markdown,
                "A Markdown table (collective, algorithm, collectives served, preconditions, summary) "
                "instead of the text");
  cmd->callback([] {
    // An unknown name is an error, not an empty list.
    if (!only.empty()) (void)parse_collective("--coll", only);
    nlohmann::json all = nlohmann::json::array();
    std::string last;
    if (markdown && out.text()) print_markdown_header();
    for (const algorithm* a : registry::all()) {
      if (!only.empty() && name(a->coll) != only) continue;
      if (out.json) all.push_back(json_of(*a));
      if (!out.text()) continue;
      if (markdown)
        print_markdown_row(*a);
      else
        print_text_row(*a, last);
    }
    if (out.json) write_json(out, all.dump(2));
  });
}

}  // namespace ranklab::tools
