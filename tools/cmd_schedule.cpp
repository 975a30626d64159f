// `ranklab schedule -p P [--rank R] [--json]`: the circulant-graph broadcast schedules of
// J. L. Träff (seed 000, docs/algorithms.md 1.1-1.4) for root 0, in the layout of the
// paper's Table 1 (rows: rank, baseblock, recv[0..q-1], send[0..q-1]; one column per rank)
// or as JSON. O(p log p) for all ranks, O(log p) for one.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "ranklab/circulant.hpp"

namespace ranklab::tools {

namespace {

namespace circ = ranklab::circulant;

struct rank_schedule {
  std::int64_t rank;
  int baseblock;
  std::array<int, circ::max_q> recv, send;
};

rank_schedule schedule_of(const circ::skips& s, std::int64_t r) {
  rank_schedule rs{r, circ::baseblock(s, r), {}, {}};
  circ::recv_schedule(s, r, rs.recv);
  circ::send_schedule(s, r, rs.send);
  return rs;
}

std::string json_of(const circ::skips& s, std::int64_t first, std::int64_t last) {
  nlohmann::ordered_json out;
  out["p"] = s.p;
  out["q"] = s.q;
  out["skips"] = std::vector<std::int64_t>(s.skip.begin(), s.skip.begin() + s.q + 1);
  auto& ranks = out["ranks"] = nlohmann::ordered_json::array();
  for (std::int64_t r = first; r < last; ++r) {
    const auto rs = schedule_of(s, r);
    ranks.push_back({{"rank", r},
                     {"baseblock", rs.baseblock},
                     {"recv", std::vector<int>(rs.recv.begin(), rs.recv.begin() + s.q)},
                     {"send", std::vector<int>(rs.send.begin(), rs.send.begin() + s.q)}});
  }
  return out.dump();
}

// The paper's table layout, split into chunks of columns that fit in ~100 characters.
void print_table(const circ::skips& s, std::int64_t first, std::int64_t last) {
  const int q = s.q;
  const int width = std::max<int>(4, static_cast<int>(fmt::formatted_size("{}", last - 1)) + 1);
  const int label = static_cast<int>(fmt::formatted_size("send[{}]:", std::max(q - 1, 0)));
  const auto per_chunk = std::max<std::int64_t>(1, (100 - label) / width);
  fmt::print("p = {}, q = {}, skips = {}\n", s.p, q,
             fmt::join(s.skip.begin(), s.skip.begin() + q + 1, " "));
  std::vector<rank_schedule> chunk;
  for (std::int64_t begin = first; begin < last; begin += per_chunk) {
    const std::int64_t end = std::min(last, begin + per_chunk);
    chunk.clear();
    for (std::int64_t r = begin; r < end; ++r) chunk.push_back(schedule_of(s, r));
    std::string out = "\n";
    auto row = [&](const std::string& name, auto value) {
      out += fmt::format("{:<{}}", name, label);
      for (const auto& rs : chunk) out += fmt::format("{:>{}}", value(rs), width);
      out += '\n';
    };
    row("r:", [](const rank_schedule& rs) { return rs.rank; });
    row("b:", [](const rank_schedule& rs) { return std::int64_t{rs.baseblock}; });
    for (int k = 0; k < q; ++k)
      row(fmt::format("recv[{}]:", k), [k](const rank_schedule& rs) { return std::int64_t{rs.recv[static_cast<std::size_t>(k)]}; });
    for (int k = 0; k < q; ++k)
      row(fmt::format("send[{}]:", k), [k](const rank_schedule& rs) { return std::int64_t{rs.send[static_cast<std::size_t>(k)]}; });
    fmt::print("{}", out);
  }
}

}  // namespace

void add_schedule_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "schedule",
      "Circulant broadcast schedules (Träff): baseblock, receive and send blocks per round of a "
      "phase, for root 0");
  // Printing every rank is O(p log p) text: beyond this, ask for one rank.
  constexpr std::int64_t max_all_ranks_p = 1 << 20;
  static std::int64_t p = 0;
  static std::int64_t rank = 0;
  static bool one_rank = false;  // --rank given; without it every rank is printed
  static output_options out;
  cmd->add_option("-p,--p", p, fmt::format("Number of ranks, 1..{} ({} without --rank)", circ::max_p, max_all_ranks_p))
      ->required();
  cmd->add_option("--rank", rank, "Only this rank (relative to the root), 0..p-1; without --rank: every rank")
      ->each([](const std::string&) { one_rank = true; });
  add_output_options(cmd, out, "{p, q, skips[q+1], ranks[{rank, baseblock, recv[q], send[q]}]}");
  cmd->callback([] {
    check_range("-p", p, 1, circ::max_p);
    if (one_rank) check_range("--rank", rank, 0, p - 1, "p - 1");
    else check_range("-p", p, 1, max_all_ranks_p, "to print every rank; give --rank R for one rank of a larger p");
    const circ::skips s(p);
    const std::int64_t first = one_rank ? rank : 0;
    const std::int64_t last = one_rank ? rank + 1 : p;
    if (out.json) write_json(out, json_of(s, first, last));
    if (out.text()) print_table(s, first, last);
  });
}

}  // namespace ranklab::tools
