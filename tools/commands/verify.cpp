// `ranklab verify --p A..B`: by default the exhaustive check of the circulant broadcast
// schedules (schedules/circulant_check.hpp: the paper's four conditions, Algorithm 1 with
// --blocks, the violation and recursion bounds); with --coll C|all [--algo A|all] any
// registered algorithm through the verifier, structure and results, over every root, in
// place and not, counts 0, 1 and uneven (schedules/registry_check.hpp).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "cli/checks.hpp"
#include "commands/commands.hpp"
#include "schedules/algorithm_call.hpp"
#include "schedules/circulant_check.hpp"
#include "schedules/registry_check.hpp"

namespace ranklab::tools {

namespace {

constexpr int max_threads = 1024;

struct verify_options {
  std::string range;
  std::vector<std::string> block_tokens = {"1", "2", "q+1"};
  std::int64_t threads = 0;
  std::int64_t show = 10;
  const char* circulant_option = nullptr;  // the first of --blocks, --threads, --show given
  bool quick = false;                      // roots 0, p/2 and p-1 instead of every root
  algorithm_options algorithm;
  output_options out;
};

bool verify_circulant(const verify_options& o) {
  check_algorithm_options_absent(o.algorithm);
  check_range("--threads", o.threads, 0, max_threads, "0: all cores");
  check_range("--show", o.show, 1, 1000);
  const p_range ps = parse_p_range("--p", o.range, max_circulant_check_p);
  return check_circulant({ps, o.block_tokens, static_cast<int>(o.threads), static_cast<int>(o.show)}, o.out);
}

bool verify_algorithms(const verify_options& o) {
  if (o.circulant_option != nullptr)
    usage_failure(fmt::format("{}: only for the circulant check (without --coll)", o.circulant_option));
  const p_range ps = parse_p_range("--p", o.range, max_ranks);
  std::vector<collective> colls;
  if (o.algorithm.coll == "all") {
    if (o.algorithm.algo != "all")
      usage_failure(fmt::format("--algo {}: with --coll all, only --algo all (names belong to one collective)",
                                o.algorithm.algo));
    colls = parse_collective_list("--coll", "all");
    check_range("--root", o.algorithm.root, 0, ps.first - 1, fmt::format("a rank of every p from {}", ps.first));
  } else {
    colls.push_back(checked_collective(o.algorithm, ps.first, fmt::format("a rank of every p from {}", ps.first)));
  }
  std::vector<const algorithm*> algos;
  for (collective c : colls)
    if (o.algorithm.algo == "all")
      for (const algorithm* a : registry::for_collective(c)) algos.push_back(a);
    else
      algos.push_back(registry::find(c, o.algorithm.algo));
  return check_algorithms(colls, algos, ps, o.algorithm, o.quick, o.out);
}

}  // namespace

void add_verify_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "verify",
      "Check the circulant broadcast schedules exhaustively for a range of p: the paper's four "
      "correctness conditions, Algorithm 1 with n blocks, violation and recursion bounds; with --coll, "
      "registered algorithms through the verifier: structure and results, every root, in place and not, "
      "counts 0, 1 and uneven");
  static verify_options o;
  const auto given = [](const char* option) {
    return [option](const std::string&) {
      if (o.circulant_option == nullptr) o.circulant_option = option;
    };
  };
  cmd->add_option("--p", o.range,
                  fmt::format("Range of p: A..B (or one P), 1 <= A <= B <= 2^26 (with --coll: <= {})", max_ranks))
      ->required();
  cmd->add_option("--blocks", o.block_tokens,
                  "Numbers of blocks n for the Algorithm 1 simulation, comma separated; may use q: "
                  "e.g. 1,2,q,q+1,2q-1 (n < 1 is skipped)")
      ->delimiter(',')
      ->capture_default_str()
      ->each(given("--blocks"));
  cmd->add_option("--threads", o.threads, fmt::format("Worker threads, 1..{} (0: all cores)", max_threads))
      ->capture_default_str()
      ->each(given("--threads"));
  cmd->add_option("--show", o.show, "Failures to print, 1..1000")->capture_default_str()->each(given("--show"));
  add_algorithm_options(cmd, o.algorithm, "all", "all (every registered algorithm of the collective)");
  cmd->add_flag("--quick", o.quick, "With --coll: roots 0, p/2 and p-1 instead of every root (for large p)");
  add_output_options(cmd, o.out,
                     "{p_min, p_max, blocks, pairs, ok, failed_graphs, failures, maxima, seconds}; with --coll "
                     "{coll, p_min, p_max, count, root, ok, algorithms[{algo, ok, results[{p, ok, calls, rounds, "
                     "messages, failures[{call, root, in_place, commutative, count, problems}]}], skipped}]} "
                     "(an array of them for --coll all)");
  cmd->callback([] {
    const bool ok = o.algorithm.coll.empty() ? verify_circulant(o) : verify_algorithms(o);
    if (!ok) throw CLI::RuntimeError(1);
  });
}

}  // namespace ranklab::tools
