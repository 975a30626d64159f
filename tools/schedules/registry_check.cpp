// Registered algorithms through the verifier (see registry_check.hpp).
#include "schedules/registry_check.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include <cstdio>

#include "ranklab/semantics.hpp"

namespace ranklab::tools {

namespace {

using ojson = nlohmann::ordered_json;

// One p of one algorithm: the sweep's summary, or why it was not checked.
struct p_result {
  int p = 0;
  verify_summary summary;
  bool ok() const { return summary.ok(); }
  bool skipped() const { return summary.calls == 0; }
};

struct algorithm_result {
  const algorithm* algo = nullptr;
  std::vector<p_result> results;
  bool ok() const {
    return std::all_of(results.begin(), results.end(), [](const p_result& r) { return r.ok(); });
  }
  std::size_t calls() const {
    std::size_t n = 0;
    for (const p_result& r : results) n += r.summary.calls;
    return n;
  }
};

verify_sweep sweep_of(const algorithm_options& o, bool quick) {
  verify_sweep sw;
  sw.every_root = !quick;
  if (o.count_given) sw.count = static_cast<std::uint64_t>(o.count);
  if (o.root_given) sw.root = static_cast<int>(o.root);
  sw.hierarchy = shape_hierarchy(o);
  return sw;
}

// "3" or "0..3": the range of a figure over the checked p.
template <class Figure>
std::string span_of(const algorithm_result& ar, Figure figure) {
  bool any = false;
  std::uint64_t lo = 0, hi = 0;
  for (const p_result& r : ar.results) {
    if (r.skipped()) continue;
    const auto v = static_cast<std::uint64_t>(figure(r.summary));
    lo = any ? std::min(lo, v) : v;
    hi = any ? std::max(hi, v) : v;
    any = true;
  }
  if (!any) return "-";
  return lo == hi ? fmt::format("{}", lo) : fmt::format("{}..{}", lo, hi);
}

constexpr std::size_t failures_shown = 4;

void print_line(collective c, const algorithm_result& ar) {
  std::string line =
      fmt::format("  {:<22} {:<7} rounds {}, messages {}, {} calls", ar.algo->name, ar.ok() ? "OK" : "FAILED",
                  span_of(ar, [](const verify_summary& v) { return v.rounds; }),
                  span_of(ar, [](const verify_summary& v) { return v.messages; }), ar.calls());
  std::vector<int> skipped;
  std::string reason;
  for (const p_result& r : ar.results)
    if (r.skipped() && !r.summary.skipped.empty()) skipped.push_back(r.p), reason = r.summary.skipped;
  if (!skipped.empty()) line += fmt::format("; p = {} skipped: {}", fmt::join(skipped, ", "), reason);
  fmt::print("{}\n", line);
  // The first failing call of each p, for the first few p; then how many more there are.
  std::size_t failing = 0, shown = 0;
  for (const p_result& r : ar.results) {
    failing += r.summary.failures.size();
    if (r.summary.failures.empty() || shown == failures_shown) continue;
    const verify_failure& f = r.summary.failures.front();
    ++shown;
    fmt::print("    FAILED {}/{} {}\n", name(c), ar.algo->name, describe_verified_call(f.args));
    for (std::size_t i = 0; i < f.problems.size() && i < 3; ++i) fmt::print("      {}\n", f.problems[i]);
  }
  if (failing > shown) fmt::print("    ... {} failing calls in all, {} shown (the first of each p)\n", failing, shown);
  std::fflush(stdout);  // one line per algorithm as it is done: the progress of a long check
}

void print_header(collective c, p_range ps, const verify_sweep& sw) {
  const std::string range =
      ps.first == ps.last ? fmt::format("{}", ps.first) : fmt::format("{}..{}", ps.first, ps.last);
  std::vector<std::string> sweep = {sw.count ? fmt::format("count {}", *sw.count)
                                             : std::string("counts 0, 1 and uneven")};
  if (is_rooted(c))
    sweep.push_back(sw.root         ? fmt::format("root {}", *sw.root)
                    : sw.every_root ? std::string("every root")
                                    : std::string("roots 0, p/2, p-1"));
  if (has_in_place_form(c)) sweep.push_back("in place and not");
  if (is_reduction(c)) sweep.push_back("commutative and not");
  fmt::print(
      "verify {} p = {}: structure (sends paired with receives, one-ported rounds, buffer bounds and sizes)\n"
      "  and results (every element of every rank's out against the collective's definition);\n"
      "  {}\n",
      name(c), range, fmt::join(sweep, ", "));
}

void print_footer(const std::vector<algorithm_result>& all) {
  const auto failed = std::count_if(all.begin(), all.end(), [](const algorithm_result& ar) { return !ar.ok(); });
  if (failed == 0)
    fmt::print("  OK\n");
  else
    fmt::print("  FAILED for {} of {} algorithms\n", failed, all.size());
}

ojson json_of(collective c, p_range ps, const verify_sweep& sw, const std::vector<algorithm_result>& all) {
  ojson algos = ojson::array();
  bool ok = true;
  for (const algorithm_result& ar : all) {
    ojson results = ojson::array(), skipped = ojson::array();
    for (const p_result& r : ar.results) {
      if (r.skipped()) {
        skipped.push_back({{"p", r.p}, {"reason", r.summary.skipped}});
        continue;
      }
      ojson failures = ojson::array();
      for (const verify_failure& f : r.summary.failures)
        failures.push_back({{"call", describe_verified_call(f.args)},
                            {"root", f.args.root},
                            {"in_place", f.args.in_place},
                            {"commutative", f.args.commutative},
                            {"count", f.args.count},
                            {"problems", f.problems}});
      results.push_back({{"p", r.p},
                         {"ok", r.ok()},
                         {"calls", r.summary.calls},
                         {"rounds", r.summary.rounds},
                         {"messages", r.summary.messages},
                         {"failures", std::move(failures)}});
    }
    algos.push_back({{"algo", std::string(ar.algo->name)},
                     {"ok", ar.ok()},
                     {"results", std::move(results)},
                     {"skipped", std::move(skipped)}});
    ok = ok && ar.ok();
  }
  return {{"coll", std::string(name(c))},
          {"p_min", ps.first},
          {"p_max", ps.last},
          {"count", sw.count ? ojson(*sw.count) : ojson("0, 1, uneven")},
          {"root", sw.root ? ojson(*sw.root) : ojson(sw.every_root ? "every" : "0, p/2, p-1")},
          {"ok", ok},
          {"algorithms", std::move(algos)}};
}

}  // namespace

bool check_algorithms(std::span<const collective> colls, const std::vector<const algorithm*>& algos, p_range ps,
                      const algorithm_options& o, bool quick, const output_options& out) {
  const verify_sweep sw = sweep_of(o, quick);
  ojson per_collective = ojson::array();
  bool ok = true;
  for (collective c : colls) {
    if (out.text()) print_header(c, ps, sw);
    std::vector<algorithm_result> all;
    for (const algorithm* a : algos) {
      if (a->coll != c) continue;
      algorithm_result ar{a, {}};
      for (std::int64_t p = ps.first; p <= ps.last; ++p)
        ar.results.push_back({static_cast<int>(p), verify_algorithm(*a, static_cast<int>(p), sw)});
      if (out.text()) print_line(c, ar);
      all.push_back(std::move(ar));
    }
    if (out.text()) print_footer(all);
    ok = ok && std::all_of(all.begin(), all.end(), [](const algorithm_result& ar) { return ar.ok(); });
    per_collective.push_back(json_of(c, ps, sw, all));
  }
  if (out.json) write_json(out, per_collective.size() == 1 ? per_collective[0].dump() : per_collective.dump());
  return ok;
}

}  // namespace ranklab::tools
