// The circulant broadcast schedules as a table or JSON (see circulant_table.hpp).
#include "schedules/circulant_table.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <vector>

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

void print_table(const circ::skips& s, std::int64_t first, std::int64_t last) {
  const int q = s.q;
  const int width = std::max<int>(4, static_cast<int>(fmt::formatted_size("{}", last - 1)) + 1);
  const int label = static_cast<int>(fmt::formatted_size("send[{}]:", std::max(q - 1, 0)));
  const auto per_chunk = std::max<std::int64_t>(1, (100 - label) / width);
  fmt::print("p = {}, q = {}, skips = {}\n", s.p, q, fmt::join(s.skip.begin(), s.skip.begin() + q + 1, " "));
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
      row(fmt::format("recv[{}]:", k),
          [k](const rank_schedule& rs) { return std::int64_t{rs.recv[static_cast<std::size_t>(k)]}; });
    for (int k = 0; k < q; ++k)
      row(fmt::format("send[{}]:", k),
          [k](const rank_schedule& rs) { return std::int64_t{rs.send[static_cast<std::size_t>(k)]}; });
    fmt::print("{}", out);
  }
}

}  // namespace

std::string circulant_table_json(std::int64_t p, std::int64_t first, std::int64_t last) {
  return json_of(circ::skips(p), first, last);
}

void print_circulant_table(std::int64_t p, std::int64_t first, std::int64_t last) {
  print_table(circ::skips(p), first, last);
}

}  // namespace ranklab::tools
