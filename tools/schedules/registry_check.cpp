// Registered algorithms through the verifier (see registry_check.hpp).
#include "schedules/registry_check.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "ranklab/executor.hpp"

namespace ranklab::tools {

namespace {

using ojson = nlohmann::ordered_json;

// One p of one algorithm: the verifier's report, or why it was not checked.
struct p_result {
  int p = 0;
  verify_report report;
  std::string skipped;  // the precondition that rejects the call
  bool ok() const { return !skipped.empty() || report.ok; }
};

struct algorithm_result {
  const algorithm* algo = nullptr;
  std::vector<p_result> results;
  bool ok() const {
    return std::all_of(results.begin(), results.end(), [](const p_result& r) { return r.ok(); });
  }
};

p_result check_one(const algorithm& a, const algorithm_options& o, int p) {
  p_result r{p, {}, {}};
  const call cl = algorithm_call(a.coll, a.name, o, p);
  if (!meets_preconditions(a, cl.args)) {
    r.skipped = unmet_precondition(a, cl.args);
    return r;
  }
  try {
    r.report = verify(build_all(a, cl.args));
  } catch (const std::exception& e) {  // a builder that rejects the call is a failure too
    r.report.ok = false;
    r.report.problems = {e.what()};
  }
  return r;
}

// "3" or "0..3": the range of a figure over the checked p.
template <class Figure>
std::string span_of(const algorithm_result& ar, Figure figure) {
  bool any = false;
  std::uint64_t lo = 0, hi = 0;
  for (const p_result& r : ar.results) {
    if (!r.skipped.empty()) continue;
    const auto v = static_cast<std::uint64_t>(figure(r.report));
    lo = any ? std::min(lo, v) : v;
    hi = any ? std::max(hi, v) : v;
    any = true;
  }
  if (!any) return "-";
  return lo == hi ? fmt::format("{}", lo) : fmt::format("{}..{}", lo, hi);
}

void print_line(const algorithm_result& ar) {
  std::string line = fmt::format("  {:<22} {:<7} rounds {}, messages {}", ar.algo->name, ar.ok() ? "OK" : "FAILED",
                                 span_of(ar, [](const verify_report& v) { return v.rounds; }),
                                 span_of(ar, [](const verify_report& v) { return v.messages; }));
  std::vector<int> skipped;
  std::string reason;
  for (const p_result& r : ar.results)
    if (!r.skipped.empty()) skipped.push_back(r.p), reason = r.skipped;
  if (!skipped.empty()) line += fmt::format("; p = {} skipped: {}", fmt::join(skipped, ", "), reason);
  fmt::print("{}\n", line);
  for (const p_result& r : ar.results)
    if (!r.ok()) fmt::print("    p = {}: {}\n", r.p, r.report.problems.empty() ? "failed" : r.report.problems.front());
}

void print_summary(collective c, p_range ps, const algorithm_options& o, const std::vector<algorithm_result>& all) {
  const std::string range =
      ps.first == ps.last ? fmt::format("{}", ps.first) : fmt::format("{}..{}", ps.first, ps.last);
  fmt::print(
      "verify {} p = {}, count {}, root {}: every rank's schedules through the verifier\n"
      "  (sends paired with receives, one-ported rounds, buffer bounds and message sizes)\n",
      name(c), range, o.count, o.root);
  for (const algorithm_result& ar : all) print_line(ar);
  const auto failed = std::count_if(all.begin(), all.end(), [](const algorithm_result& ar) { return !ar.ok(); });
  if (failed == 0)
    fmt::print("  OK\n");
  else
    fmt::print("  FAILED for {} of {} algorithms\n", failed, all.size());
}

std::string json_of(collective c, p_range ps, const algorithm_options& o, const std::vector<algorithm_result>& all) {
  ojson algos = ojson::array();
  bool ok = true;
  for (const algorithm_result& ar : all) {
    ojson results = ojson::array(), skipped = ojson::array();
    for (const p_result& r : ar.results) {
      if (!r.skipped.empty()) {
        skipped.push_back({{"p", r.p}, {"reason", r.skipped}});
        continue;
      }
      const verify_report& v = r.report;
      results.push_back({{"p", r.p},
                         {"ok", v.ok},
                         {"rounds", v.rounds},
                         {"messages", v.messages},
                         {"elements", v.elements},
                         {"max_message", v.max_message},
                         {"problems", v.problems}});
    }
    algos.push_back({{"algo", std::string(ar.algo->name)},
                     {"ok", ar.ok()},
                     {"results", std::move(results)},
                     {"skipped", std::move(skipped)}});
    ok = ok && ar.ok();
  }
  ojson j{{"coll", std::string(name(c))},
          {"p_min", ps.first},
          {"p_max", ps.last},
          {"count", o.count},
          {"root", o.root},
          {"ok", ok},
          {"algorithms", std::move(algos)}};
  return j.dump();
}

}  // namespace

bool check_algorithms(collective c, const std::vector<const algorithm*>& algos, p_range ps, const algorithm_options& o,
                      const output_options& out) {
  std::vector<algorithm_result> all;
  for (const algorithm* a : algos) {
    algorithm_result ar{a, {}};
    for (std::int64_t p = ps.first; p <= ps.last; ++p) ar.results.push_back(check_one(*a, o, static_cast<int>(p)));
    all.push_back(std::move(ar));
  }
  if (out.json) write_json(out, json_of(c, ps, o, all));
  if (out.text()) print_summary(c, ps, o, all);
  return std::all_of(all.begin(), all.end(), [](const algorithm_result& ar) { return ar.ok(); });
}

}  // namespace ranklab::tools
