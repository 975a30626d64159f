// `ranklab schedule -p P [--rank R] [--json]`: by default the circulant-graph broadcast
// schedules of J. L. Träff for root 0 (schedules/circulant_table.hpp); with --coll C
// [--algo A] the schedules of any registered algorithm, round by round
// (schedules/listing.hpp).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdint>
#include <vector>

#include "cli/checks.hpp"
#include "commands/commands.hpp"
#include "ranklab/circulant.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/executor.hpp"
#include "schedules/algorithm_call.hpp"
#include "schedules/circulant_table.hpp"
#include "schedules/listing.hpp"

namespace ranklab::tools {

namespace {

// Printing every rank is O(p log p) text: beyond this, ask for one rank.
constexpr std::int64_t max_all_ranks_p = 1 << 20;

struct schedule_options {
  std::int64_t p = 0;
  std::int64_t rank = 0;
  bool one_rank = false;  // --rank given; without it every rank is printed
  algorithm_options algorithm;
  output_options out;
};

void show_circulant(const schedule_options& o) {
  check_algorithm_options_absent(o.algorithm);
  check_range("-p", o.p, 1, circulant::max_p);
  if (o.one_rank)
    check_range("--rank", o.rank, 0, o.p - 1, "p - 1");
  else
    check_range("-p", o.p, 1, max_all_ranks_p, "to print every rank; give --rank R for one rank of a larger p");
  const std::int64_t first = o.one_rank ? o.rank : 0;
  const std::int64_t last = o.one_rank ? o.rank + 1 : o.p;
  if (o.out.json) write_json(o.out, circulant_table_json(o.p, first, last));
  if (o.out.text()) print_circulant_table(o.p, first, last);
}

// --algo auto: the algorithm the library would select for the call.
const algorithm& chosen_algorithm(collective c, const schedule_options& o) {
  if (o.algorithm.algo != "auto") return *registry::find(c, o.algorithm.algo);
  const call cl = algorithm_call(c, "auto", o.algorithm, static_cast<int>(o.p));
  return select_algorithm(cl.args, cl.type.size, "auto");
}

void show_algorithm(const schedule_options& o) {
  check_range("-p", o.p, 1, max_ranks, "the schedules of every rank are built");
  const collective c = checked_collective(o.algorithm, o.p, fmt::format("a rank of -p {}", o.p));
  if (o.one_rank) check_range("--rank", o.rank, 0, o.p - 1, "p - 1");
  const algorithm& a = chosen_algorithm(c, o);
  const call cl = algorithm_call(c, a.name, o.algorithm, static_cast<int>(o.p));
  schedule_set ranks;
  verify_report report;
  try {
    if (o.one_rank) {
      check_preconditions(a, cl.args);
      ranks.push_back(a.build(cl.args, static_cast<int>(o.rank)));
    } else {
      ranks = build_all(a, cl.args);
      report = verify(ranks);
    }
  } catch (const usage_error& e) {
    usage_failure("--algo " + std::string(a.name) + ": " + e.cause());
  }
  const verify_report* rep = o.one_rank ? nullptr : &report;
  if (o.out.json) write_json(o.out, schedules_json(a, cl, ranks, rep));
  if (o.out.text()) print_schedules(a, cl, ranks, rep);
}

}  // namespace

void add_schedule_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("schedule",
                         "Circulant broadcast schedules (Träff): baseblock, receive and send blocks per round of a "
                         "phase, for root 0; with --coll, any registered algorithm's schedules round by round");
  static schedule_options o;
  cmd->add_option("-p,--p", o.p,
                  fmt::format("Number of ranks, 1..{} ({} without --rank; with --coll 1..{})", circulant::max_p,
                              max_all_ranks_p, max_ranks))
      ->required();
  cmd->add_option("--rank", o.rank, "Only this rank (relative to the root), 0..p-1; without --rank: every rank")
      ->each([](const std::string&) { o.one_rank = true; });
  add_algorithm_options(cmd, o.algorithm, "auto", "auto (the library's choice for the call)");
  add_output_options(cmd, o.out,
                     "{p, q, skips[q+1], ranks[{rank, baseblock, recv[q], send[q]}]}; with --coll "
                     "{coll, algo, p, root, count, rounds, messages, ranks[{rank, rounds[...]}]}");
  cmd->callback([] {
    if (o.algorithm.coll.empty())
      show_circulant(o);
    else
      show_algorithm(o);
  });
}

}  // namespace ranklab::tools
