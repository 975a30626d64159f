// `ranklab draw --coll C [--algo A] -p P [--count N] [--root R] [--blocks n] --out FILE`:
// a picture of a registered algorithm's schedules for one call (space-time diagram and
// data-flow grid; draw/figure.hpp), as a static SVG or an HTML page that steps through the
// rounds. `ranklab draw --circulant -p P --out FILE`: the circulant graph and its schedule
// tables (draw/circulant_view.cpp).
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "cli/checks.hpp"
#include "commands/commands.hpp"
#include "draw/choice.hpp"
#include "draw/output.hpp"
#include "draw/path_option.hpp"
#include "draw/views.hpp"
#include "ranklab/errors.hpp"
#include "schedules/algorithm_call.hpp"

namespace ranklab::tools {

namespace {

// A drawing is read by a person: beyond these it is a summary (draw/views.hpp) or nothing.
constexpr std::int64_t max_draw_p = 1024;
constexpr std::int64_t max_circulant_p = 64;
constexpr std::int64_t max_draw_blocks = 1024;

struct draw_options {
  std::int64_t p = 0;
  std::int64_t blocks = 0;
  bool circulant = false;
  std::string out;
  algorithm_options algorithm;
  output_options report;
};

void report_written(const draw_options& o, const nlohmann::ordered_json& j, const std::string& text) {
  if (o.report.json) write_json(o.report, j.dump());
  if (o.report.text() && !o.report.quiet) fmt::print("{}\n", text);
}

void write_or_fail(const auto& write) {
  try {
    write();
  } catch (const std::runtime_error& e) {
    throw CLI::RuntimeError(fmt::format("ranklab draw: {}", e.what()), 1);
  }
}

void draw_circulant(const draw_options& o) {
  check_algorithm_options_absent(o.algorithm);
  if (o.blocks != 0) usage_failure("--blocks: only with --coll (the circulant graph has no data)");
  check_range("-p", o.p, 1, max_circulant_p, "ranks on a circle");
  write_or_fail([&] { draw::write_circulant(static_cast<int>(o.p), o.out); });
  report_written(o, {{"file", o.out}, {"p", o.p}}, fmt::format("wrote {}: the circulant graph of p = {}", o.out, o.p));
}

void draw_algorithm(const draw_options& o) {
  check_range("-p", o.p, 1, max_draw_p, "a drawing to read");
  const collective c = checked_collective(o.algorithm, o.p, fmt::format("a rank of -p {}", o.p));
  check_range("--blocks", o.blocks, 0, max_draw_blocks, "circulant: number of blocks n; 0: the cost model chooses");
  algorithm_options chosen = o.algorithm;
  // Enough elements that every rank's block and every circulant block is visible.
  if (!o.algorithm.count_given) chosen.count = std::max<std::int64_t>({8, o.p, o.blocks});
  const int p = static_cast<int>(o.p);
  call cl = algorithm_call(c, o.algorithm.algo, chosen, p);
  cl.args.params.blocks = static_cast<int>(o.blocks);
  cl.args.commutative = cl.reduction.commutative;
  cl.args.elem_size = cl.type.size;
  // Left to the library, a drawing shows its pick unless that has no messages to show (a
  // shared-memory algorithm, outside the one-ported model): then a one-ported stand-in, said so.
  draw::drawn_choice choice;
  if (o.algorithm.algo == "auto") {
    std::string reason;
    const algorithm& library = select_algorithm(cl.args, cl.type.size, "auto", &reason);
    choice = draw::drawable_algorithm(library, std::move(reason), cl.args, cl.type.size);
  } else {
    choice.library = choice.drawn = registry::find(c, o.algorithm.algo);
    choice.library_reason = "requested with --algo";
  }
  const algorithm& a = *choice.drawn;
  draw::figure fig;
  try {
    check_preconditions(a, cl.args);
    fig = draw::make_figure(a, cl.args);
    fig.choice = choice.why;
  } catch (const usage_error& e) {
    usage_failure("--algo " + std::string(a.name) + ": " + e.cause());
  }
  write_or_fail([&] { draw::write_figure(fig, o.out); });
  report_written(
      o,
      {{"file", o.out},
       {"coll", std::string(name(c))},
       {"algo", std::string(a.name)},
       {"p", o.p},
       {"rounds", fig.report.rounds},
       {"messages", fig.report.messages},
       {"elements", fig.report.elements},
       {"data_flow", fig.has_flow},
       {"selected", std::string(choice.library->name)},
       {"selection_reason", choice.library_reason},
       {"drawn_instead_because", choice.why}},
      fmt::format("wrote {}: {}, {} rounds, {} messages{}\n  algorithm {}: {}", o.out, fig.title, fig.report.rounds,
                  fig.report.messages, o.p > draw::max_detailed_p ? " (per-round summary)" : "", a.name,
                  choice.why.empty() ? choice.library_reason : choice.why));
}

}  // namespace

void add_draw_command(CLI::App& app) {
  static draw_options o;
  auto* cmd = app.add_subcommand(
      "draw",
      "Draw an algorithm's schedules (space-time diagram and data-flow grid) or the circulant graph, as SVG or as "
      "an HTML page that steps through the rounds");
  cmd->add_option("-p,--p", o.p,
                  fmt::format("Number of ranks, 1..{} (an arrow per message up to {}; --circulant: 1..{})", max_draw_p,
                              draw::max_detailed_p, max_circulant_p))
      ->required();
  add_algorithm_options(cmd, o.algorithm, "auto", "auto (the library's choice for the call)");
  cmd->get_option("--count")->description("With --coll: elements, MPI's count (default: max(8, p, --blocks))");
  cmd->add_option("--blocks", o.blocks, "With --coll: circulant algorithms' number of blocks n (0: the cost model)")
      ->capture_default_str();
  cmd->add_flag("--circulant", o.circulant, "The circulant graph and its receive/send schedule tables (Träff)");
  cmd->add_option("--out", o.out, "The drawing: FILE.svg (static) or FILE.html (steps through the rounds)")
      ->required()
      ->check(writable_path())
      ->check(draw::drawing_path());
  add_output_options(cmd, o.report,
                     "{file, coll, algo, p, rounds, messages, elements, data_flow, selected, selection_reason, "
                     "drawn_instead_because}");
  cmd->callback([] {
    if (o.circulant && !o.algorithm.coll.empty())
      usage_failure("--circulant: draws the circulant graph; leave out --coll");
    if (!o.circulant && o.algorithm.coll.empty()) usage_failure("--coll: required (or --circulant)");
    if (o.circulant)
      draw_circulant(o);
    else
      draw_algorithm(o);
  });
}

}  // namespace ranklab::tools
