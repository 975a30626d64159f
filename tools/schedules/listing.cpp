// Schedules of any registered algorithm as text or JSON (see listing.hpp).
#include "schedules/listing.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ranklab::tools {

namespace {

using ojson = nlohmann::ordered_json;

ojson rank_or_null(int r) { return r == no_rank ? ojson(nullptr) : ojson(r); }

ojson json_of(const schedule& s) {
  ojson rounds = ojson::array();
  for (std::size_t i = 0; i < s.rounds().size(); ++i) {
    const round& r = s.rounds()[i];
    rounds.push_back({{"round", i},
                      {"send_to", rank_or_null(r.send_to)},
                      {"send", s.send_count(r)},
                      {"recv_from", rank_or_null(r.recv_from)},
                      {"recv", s.recv_count(r)},
                      {"fence", r.fence}});
  }
  return {{"rank", s.rank()}, {"rounds", std::move(rounds)}};
}

}  // namespace

void print_schedules(const algorithm& a, const call& c, std::span<const schedule> ranks, const verify_report* report) {
  fmt::print("{}, algorithm {}", describe(c.args), a.name);
  if (report != nullptr) fmt::print(": {} rounds, {} messages", report->rounds, report->messages);
  fmt::print("\n");
  for (const schedule& s : ranks) fmt::print("\n{}", s.describe());
}

std::string schedules_json(const algorithm& a, const call& c, std::span<const schedule> ranks,
                           const verify_report* report) {
  ojson out{{"coll", std::string(name(c.args.coll))},
            {"algo", std::string(a.name)},
            {"p", c.args.p},
            {"root", c.args.root},
            {"count", c.args.counts.empty() ? c.args.count : c.args.counts.front()}};  // regular counts
  if (report != nullptr) {
    out["rounds"] = report->rounds;
    out["messages"] = report->messages;
  }
  ojson all = ojson::array();
  for (const schedule& s : ranks) all.push_back(json_of(s));
  out["ranks"] = std::move(all);
  return out.dump();
}

}  // namespace ranklab::tools
