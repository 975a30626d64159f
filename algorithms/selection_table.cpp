// Selection tables: the built-in rows (data, not code), the JSON file format of
// ranklab/selection.hpp, and the table "auto" consults. `ranklab tune` writes such files
// from measurements on the machine.
#include "selection_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ranklab/errors.hpp"
#include "ranklab/hierarchy.hpp"
#include "ranklab/selection.hpp"

namespace ranklab {

namespace {

using ojson = nlohmann::ordered_json;
constexpr std::string_view format_name = "ranklab-selection";
constexpr std::string_view builtin_source = "built-in";
constexpr std::string_view shipped_source = "shipped data/selection/default.json";

// ---- the built-in table ------------------------------------------------------------------
// Rows are tried in order; the first whose collective and size band match, and whose
// algorithm is registered and accepts the call, wins. Any p.
struct builtin_row {
  collective coll;
  std::uint64_t max_bytes;  // selection_bytes(), inclusive
  std::string_view algorithm;
};

constexpr std::array builtin_rows = {
    builtin_row{collective::barrier, unbounded_bytes, "dissemination"},
    builtin_row{collective::bcast, unbounded_bytes, "circulant"},
    builtin_row{collective::bcast, unbounded_bytes, "binomial"},
    builtin_row{collective::reduce, unbounded_bytes, "circulant"},
    builtin_row{collective::reduce, unbounded_bytes, "binomial"},
    builtin_row{collective::allreduce, 4096, "recursive_doubling"},
    builtin_row{collective::allreduce, unbounded_bytes, "circulant"},
    builtin_row{collective::allreduce, unbounded_bytes, "recursive_doubling"},
    builtin_row{collective::allgather, unbounded_bytes, "circulant"},
    builtin_row{collective::allgatherv, unbounded_bytes, "circulant"},
    builtin_row{collective::reduce_scatter, unbounded_bytes, "circulant"},
    builtin_row{collective::reduce_scatter_block, unbounded_bytes, "circulant"},
    // Collectives without a circulant schedule: the logarithmic algorithms first, the
    // linear ones (which accept everything) behind them. Alltoall: Bruck's log p rounds
    // for short blocks, pairwise exchange (no forwarding) otherwise, as MPICH does.
    builtin_row{collective::scan, unbounded_bytes, "recursive_doubling"},
    builtin_row{collective::scan, unbounded_bytes, "linear"},
    builtin_row{collective::exscan, unbounded_bytes, "recursive_doubling"},
    builtin_row{collective::exscan, unbounded_bytes, "linear"},
    builtin_row{collective::scatter, unbounded_bytes, "binomial"},
    builtin_row{collective::scatterv, unbounded_bytes, "binomial"},
    builtin_row{collective::gather, unbounded_bytes, "binomial"},
    builtin_row{collective::gatherv, unbounded_bytes, "binomial"},
    builtin_row{collective::alltoall, 256, "bruck"},
    builtin_row{collective::alltoall, unbounded_bytes, "pairwise"},
    builtin_row{collective::alltoallv, unbounded_bytes, "pairwise"},
};

selection_table make_builtin() {
  selection_table t;
  t.source = std::string(builtin_source);
  for (const builtin_row& r : builtin_rows) {
    selection_rule rule;
    rule.coll = r.coll;
    rule.max_bytes = r.max_bytes;
    rule.algorithm = std::string(r.algorithm);
    t.rules.push_back(std::move(rule));
  }
  return t;
}

// ---- parsing -------------------------------------------------------------------------------
[[noreturn]] void fail(const std::string& origin, const std::string& problem) {
  throw usage_error(no_rank, "selection", fmt::format("{}: {}", origin, problem));
}

struct reader {
  const std::string& origin;

  [[noreturn]] void fail_at(const std::string& where, const std::string& problem) const {
    fail(origin, where.empty() ? problem : where + ": " + problem);
  }

  void only_keys(const ojson& obj, std::initializer_list<std::string_view> allowed, const std::string& where) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool known = false;
      for (std::string_view k : allowed) known = known || it.key() == k;
      if (known) continue;
      std::string list;
      for (std::string_view k : allowed) list += (list.empty() ? "" : ", ") + std::string(k);
      fail_at(where, fmt::format("unknown key \"{}\" (expected {})", it.key(), list));
    }
  }

  const ojson* optional(const ojson& obj, const char* key) const {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  const ojson& required(const ojson& obj, const char* key, const std::string& where) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail_at(where, fmt::format("missing key \"{}\"", key));
    return *it;
  }

  double seconds(const ojson& v, const char* key, const std::string& where) const {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
      fail_at(where, fmt::format("\"{}\" must be a non-negative number (seconds), not {}", key, v.dump()));
    return v.get<double>();
  }
  // A non-negative integer, or null / absent for "unbounded".
  std::uint64_t bytes_bound(const ojson* v, const char* key, const std::string& where) const {
    if (v == nullptr || v->is_null()) return unbounded_bytes;
    if (!v->is_number_unsigned())
      fail_at(where, fmt::format("\"{}\" must be a non-negative integer (bytes) or null, not {}", key, v->dump()));
    return v->get<std::uint64_t>();
  }
  int rank_count(const ojson* v, const char* key, int absent, const std::string& where) const {
    if (v == nullptr || (v->is_null() && absent == unbounded_p)) return absent;
    if (!v->is_number_unsigned() || v->get<std::uint64_t>() < 1 ||
        v->get<std::uint64_t>() > static_cast<std::uint64_t>(unbounded_p))
      fail_at(where, fmt::format("\"{}\" must be a positive integer{}, not {}", key,
                                 absent == unbounded_p ? " or null" : "", v->dump()));
    return static_cast<int>(v->get<std::uint64_t>());
  }
  std::string text(const ojson& v, const char* key, const std::string& where) const {
    if (!v.is_string()) fail_at(where, fmt::format("\"{}\" must be a string, not {}", key, v.dump()));
    return v.get<std::string>();
  }

  void cost_model_section(const ojson& c, selection_table& t) const {
    const std::string where = "cost_model";
    if (!c.is_object()) fail_at(where, "must be an object");
    only_keys(c, {"alpha", "beta", "gamma", "bands"}, where);
    t.model.alpha = seconds(required(c, "alpha", where), "alpha", where);
    t.model.beta = seconds(required(c, "beta", where), "beta", where);
    t.model.gamma = seconds(required(c, "gamma", where), "gamma", where);
    const ojson* bands = optional(c, "bands");
    if (bands == nullptr) return;
    if (!bands->is_array()) fail_at(where, "\"bands\" must be an array");
    for (std::size_t i = 0; i < bands->size(); ++i) {
      const ojson& b = (*bands)[i];
      const std::string at = fmt::format("cost_model band {}", i + 1);
      if (!b.is_object()) fail_at(at, "must be an object");
      only_keys(b, {"max_bytes", "alpha", "beta"}, at);
      cost_band band;
      band.max_bytes = bytes_bound(optional(b, "max_bytes"), "max_bytes", at);
      band.alpha = seconds(required(b, "alpha", at), "alpha", at);
      band.beta = seconds(required(b, "beta", at), "beta", at);
      if (!t.bands.empty() && band.max_bytes <= t.bands.back().max_bytes)
        fail_at(at, "bands must have increasing max_bytes");
      t.bands.push_back(band);
    }
  }

  selection_rule rule(const ojson& r, std::size_t index) const {
    const std::string where = fmt::format("rule {}", index + 1);
    if (!r.is_object()) fail_at(where, "must be an object");
    only_keys(r, {"coll", "p_min", "p_max", "max_bytes", "algorithm", "note"}, where);
    selection_rule out;
    const std::string coll = text(required(r, "coll", where), "coll", where);
    const auto c = collective_from_name(coll);
    if (!c) fail_at(where, fmt::format("unknown collective \"{}\"", coll));
    out.coll = *c;
    out.p_min = rank_count(optional(r, "p_min"), "p_min", 1, where);
    out.p_max = rank_count(optional(r, "p_max"), "p_max", unbounded_p, where);
    if (out.p_max < out.p_min) fail_at(where, fmt::format("p_max {} is less than p_min {}", out.p_max, out.p_min));
    out.max_bytes = bytes_bound(optional(r, "max_bytes"), "max_bytes", where);
    out.algorithm = text(required(r, "algorithm", where), "algorithm", where);
    if (out.algorithm != native_algorithm && registry::find(out.coll, out.algorithm) == nullptr) {
      std::string known;
      for (const algorithm* a : registry::for_collective(out.coll))
        known += (known.empty() ? "" : ", ") + std::string(a->name);
      fail_at(where, fmt::format("unknown {} algorithm \"{}\" (known: {})", coll, out.algorithm,
                                 known.empty() ? "none" : known));
    }
    if (const ojson* n = optional(r, "note")) out.note = text(*n, "note", where);
    return out;
  }
};

// "[json.exception.parse_error.101] parse error at line 3, column 5: ..." -> the part
// after the bracketed id.
std::string json_message(const std::exception& e) {
  std::string m = e.what();
  if (!m.empty() && m.front() == '[') {
    const auto close = m.find("] ");
    if (close != std::string::npos) m.erase(0, close + 2);
  }
  return m;
}

// ---- writing ----------------------------------------------------------------------------------
ojson bound_json(std::uint64_t v) { return v == unbounded_bytes ? ojson(nullptr) : ojson(v); }

ojson rule_json(const selection_rule& r) {
  ojson j;
  j["coll"] = std::string(name(r.coll));
  j["p_min"] = r.p_min;
  j["p_max"] = r.p_max == unbounded_p ? ojson(nullptr) : ojson(r.p_max);
  j["max_bytes"] = bound_json(r.max_bytes);
  j["algorithm"] = r.algorithm;
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

// Objects and arrays down to `expand` levels get one member per line, deeper ones are
// written compactly: readable files of moderate length.
void dump_layout(const ojson& j, int expand, const std::string& pad, std::string& out) {
  if (expand <= 0 || !(j.is_object() || j.is_array()) || j.empty()) {
    out += j.dump();
    return;
  }
  const bool object = j.is_object();
  const std::string inner = pad + "  ";
  out += object ? "{" : "[";
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    out += first ? "\n" : ",\n";
    first = false;
    out += inner;
    if (object) out += ojson(it.key()).dump() + ": ";
    dump_layout(*it, expand - 1, inner, out);
  }
  out += "\n" + pad + (object ? "}" : "]");
}

ojson parse_kept(const std::string& text, const std::string& source, const char* what) {
  try {
    return ojson::parse(text);
  } catch (const ojson::parse_error& e) {
    throw usage_error(no_rank, "selection", fmt::format("{}: {} is not valid JSON: {}", source, what, json_message(e)));
  }
}

// ---- the table in use ---------------------------------------------------------------------------
struct selection_state {
  std::mutex lock;
  std::shared_ptr<const selection_table> table;  // null: not decided yet
};
selection_state& state() {
  static selection_state s;
  return s;
}

}  // namespace

// ---- public API -----------------------------------------------------------------------------------
cost_model selection_table::model_for(std::uint64_t bytes) const {
  for (const cost_band& b : bands)
    if (bytes <= b.max_bytes) return cost_model{b.alpha, b.beta, model.gamma};
  return model;
}

std::uint64_t selection_bytes(const coll_args& args, std::size_t elem_size) {
  std::uint64_t elements = args.count;
  if (has_vector_counts(args.coll)) {
    if (args.counts.empty()) return 0;
    long double sum = 0;
    for (std::uint64_t c : args.counts) sum += static_cast<long double>(c);
    elements = static_cast<std::uint64_t>(sum / static_cast<long double>(args.counts.size()));
  }
  if (elem_size != 0 && elements > unbounded_bytes / elem_size) return unbounded_bytes;
  return elements * elem_size;
}

const selection_table& builtin_selection() {
  static const selection_table t = make_builtin();
  return t;
}

namespace detail {
extern const char* const shipped_selection_json;  // generated from data/selection/default.json
}

const selection_table& shipped_selection() {
  static const selection_table t = [] {
    const std::string_view text = detail::shipped_selection_json;
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return make_builtin();
    return parse_selection(text, std::string(shipped_source));
  }();
  return t;
}

selection_table parse_selection(std::string_view json_text, const std::string& origin) {
  ojson doc;
  try {
    doc = ojson::parse(json_text.begin(), json_text.end());
  } catch (const ojson::parse_error& e) {
    fail(origin, "not valid JSON: " + json_message(e));
  }
  const reader rd{origin};
  if (!doc.is_object()) fail(origin, "expected a JSON object with \"format\": \"ranklab-selection\"");
  const ojson* format = rd.optional(doc, "format");
  if (format == nullptr || !format->is_string() || format->get<std::string>() != format_name)
    fail(origin, fmt::format("not a selection table (\"format\" must be \"{}\", found {})", format_name,
                             format ? format->dump() : "no \"format\" key"));
  const ojson& version = rd.required(doc, "version", "");
  if (!version.is_number_unsigned())
    fail(origin, fmt::format("\"version\" must be a positive integer, not {}", version.dump()));
  if (version.get<std::uint64_t>() != static_cast<std::uint64_t>(selection_format_version))
    fail(origin, fmt::format("format version {} is not supported (this build reads version {})",
                             version.get<std::uint64_t>(), selection_format_version));
  rd.only_keys(doc, {"format", "version", "machine", "measurements", "cost_model", "rules"}, "");

  selection_table t;
  t.source = origin;
  if (const ojson* m = rd.optional(doc, "machine")) {
    if (!m->is_object()) fail(origin, "\"machine\" must be an object");
    t.machine_json = m->dump();
  }
  if (const ojson* m = rd.optional(doc, "measurements")) {
    if (!m->is_object()) fail(origin, "\"measurements\" must be an object");
    t.measurements_json = m->dump();
  }
  if (const ojson* c = rd.optional(doc, "cost_model")) rd.cost_model_section(*c, t);
  const ojson& rules = rd.required(doc, "rules", "");
  if (!rules.is_array()) fail(origin, "\"rules\" must be an array");
  for (std::size_t i = 0; i < rules.size(); ++i) t.rules.push_back(rd.rule(rules[i], i));
  return t;
}

selection_table read_selection(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, fmt::format("cannot open the selection table: {}", std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail(path, "cannot read the selection table");
  return parse_selection(text.str(), path);
}

std::string to_json(const selection_table& t) {
  ojson model;
  model["alpha"] = t.model.alpha;
  model["beta"] = t.model.beta;
  model["gamma"] = t.model.gamma;
  std::string out = fmt::format("{{\n  \"format\": \"{}\",\n  \"version\": {},\n  \"machine\": ", format_name,
                                selection_format_version);
  dump_layout(parse_kept(t.machine_json.empty() ? "{}" : t.machine_json, t.source, "the machine description"), 1, "  ",
              out);
  out += ",\n";
  if (!t.measurements_json.empty()) {
    out += "  \"measurements\": ";
    dump_layout(parse_kept(t.measurements_json, t.source, "the measurements"), 2, "  ", out);
    out += ",\n";
  }
  std::string model_text = model.dump();
  model_text.pop_back();  // reopen the object to append the bands one per line
  out += "  \"cost_model\": " + model_text + ", \"bands\": [";
  for (std::size_t i = 0; i < t.bands.size(); ++i) {
    const cost_band& b = t.bands[i];
    ojson band;
    band["max_bytes"] = bound_json(b.max_bytes);
    band["alpha"] = b.alpha;
    band["beta"] = b.beta;
    out += (i == 0 ? "\n    " : ",\n    ") + band.dump();
  }
  out += t.bands.empty() ? "]},\n" : "\n  ]},\n";
  out += "  \"rules\": [";
  for (std::size_t i = 0; i < t.rules.size(); ++i)
    out += (i == 0 ? "\n    " : ",\n    ") + rule_json(t.rules[i]).dump();
  out += t.rules.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

void write_selection(const selection_table& t, const std::string& path) {
  const std::string text = to_json(t);
  // Write next to the target and rename, so a reader never sees half a table.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(path, fmt::format("cannot write the selection table: {}", std::strerror(errno)));
    out << text;
    out.close();
    if (!out) fail(path, "cannot write the selection table");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(path, fmt::format("cannot write the selection table: {}", std::strerror(err)));
  }
}

void load_selection(const std::string& path) {
  auto t = std::make_shared<const selection_table>(read_selection(path));
  std::lock_guard lock(state().lock);
  state().table = std::move(t);
}

void use_selection(selection_table t) {
  auto shared = std::make_shared<const selection_table>(std::move(t));
  std::lock_guard lock(state().lock);
  state().table = std::move(shared);
}

void reset_selection() {
  std::lock_guard lock(state().lock);
  state().table.reset();
}

std::shared_ptr<const selection_table> current_selection() {
  selection_state& s = state();
  std::lock_guard lock(s.lock);
  if (!s.table) {
    const char* path = std::getenv("RANKLAB_SELECTION");
    const std::string_view which = path ? path : "";
    if (which == "builtin" || which == "built-in") {
      s.table = std::shared_ptr<const selection_table>(std::shared_ptr<void>(), &builtin_selection());
    } else if (which == "shipped" || which.empty()) {
      s.table = std::shared_ptr<const selection_table>(std::shared_ptr<void>(), &shipped_selection());
    } else {
      try {
        s.table = std::make_shared<const selection_table>(read_selection(path));
      } catch (const usage_error& e) {
        throw usage_error(no_rank, "selection", e.cause() + " (named by RANKLAB_SELECTION)");
      }
    }
  }
  return s.table;
}

std::string describe_rule(const selection_table& t, std::size_t index) {
  const selection_rule& r = t.rules.at(index);
  std::string p;
  if (r.p_min <= 1 && r.p_max == unbounded_p)
    p = "any p";
  else if (r.p_max == unbounded_p)
    p = fmt::format("p >= {}", r.p_min);
  else if (r.p_min == r.p_max)
    p = fmt::format("p {}", r.p_min);
  else
    p = fmt::format("p {}..{}", r.p_min, r.p_max);
  const std::string size = r.max_bytes == unbounded_bytes ? "any size" : fmt::format("<= {} B", r.max_bytes);
  return fmt::format("rule {} ({}, {})", index + 1, p, size);
}

table_choice choose_from(const selection_table& t, const coll_args& args, std::size_t elem_size, bool native_allowed) {
  const std::uint64_t bytes = selection_bytes(args, elem_size);
  std::string passed;  // matching rules whose algorithm could not run the call
  for (std::size_t i = 0; i < t.rules.size(); ++i) {
    const selection_rule& r = t.rules[i];
    if (!r.matches(args.coll, args.p, bytes)) continue;
    if (r.algorithm == native_algorithm) {
      if (!native_allowed) continue;  // no native library here: the next rule decides
      table_choice c;
      c.native = true;
      c.rule = static_cast<int>(i);
      c.why = fmt::format("table {}, {}: the MPI library's own collective{}", t.source, describe_rule(t, i),
                          r.note.empty() ? "" : " (" + r.note + ")");
      return c;
    }
    const algorithm* a = registry::find(r.coll, r.algorithm);
    const std::string skip = a == nullptr                    ? "is not registered"
                             : meets_preconditions(*a, args) ? ""
                                                             : unmet_precondition(*a, args);
    if (!skip.empty()) {
      passed += fmt::format("{}rule {}: {} {}", passed.empty() ? "" : "; ", i + 1, r.algorithm, skip);
      continue;
    }
    table_choice c;
    c.algo = a;
    c.rule = static_cast<int>(i);
    c.why = fmt::format("{}, {}", t.source == builtin_source ? std::string("built-in table") : "table " + t.source,
                        describe_rule(t, i));
    if (!r.note.empty()) c.why += ": " + r.note;
    if (!passed.empty()) c.why += " (passed over " + passed + ")";
    return c;
  }
  table_choice none;
  none.why = passed;
  return none;
}

namespace detail {

const algorithm* select_from_table(const coll_args& args, std::size_t elem_size, std::string& why) {
  const auto table = current_selection();
  const table_choice c = choose_from(*table, args, elem_size);
  if (c.algo != nullptr) {
    why = c.why;
    return c.algo;
  }
  std::string prefix;
  if (table->source != builtin_source)
    prefix = fmt::format("table {} has no rule for this call{}; ", table->source,
                         c.why.empty() ? "" : " that accepts it (" + c.why + ")");
  if (table.get() != &builtin_selection()) {
    const table_choice b = choose_from(builtin_selection(), args, elem_size);
    if (b.algo != nullptr) {
      why = prefix + b.why;
      return b.algo;
    }
  }
  const auto candidates = registry::for_collective(args.coll);
  for (const algorithm* a : candidates)
    if (meets_preconditions(*a, args)) {
      why = prefix + "first registered algorithm that accepts the call";
      return a;
    }
  if (candidates.empty()) return nullptr;
  why = "no registered algorithm accepts the call";
  return candidates.front();  // check_preconditions then says why, naming the alternatives
}

const algorithm* hierarchical_candidate(const coll_args& args, std::string_view requested, const algorithm& chosen) {
  if ((requested != "auto" && !requested.empty()) || chosen.hierarchical || args.p <= 2 || args.hierarchy) return nullptr;
  // RANKLAB_<COLL>_ALGORITHM decided the call (select_algorithm): not ours to override.
  std::string variable = "RANKLAB_";
  for (char ch : name(args.coll)) variable += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (const char* env = std::getenv((variable + "_ALGORITHM").c_str()); env && *env) return nullptr;
  const algorithm* hier = nullptr;
  for (const algorithm* a : registry::for_collective(args.coll))
    if (a->hierarchical && a->cost && meets_preconditions(*a, args)) {
      hier = a;
      break;
    }
  if (hier == nullptr) return nullptr;
  // Last: it may read RANKLAB_LEVEL_COSTS, which only calls that could go hierarchical need.
  return current_level_costs()->core_levels() >= 2 ? hier : nullptr;
}

namespace {
std::string shown_seconds(double s) {
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.3g} us", s * 1e6);
  return fmt::format("{:.3g} ns", s * 1e9);
}
}  // namespace

const algorithm& flat_or_hierarchical(const coll_args& args, std::size_t elem_size, const algorithm& flat,
                                      const algorithm& hier, const rank_hierarchy& h, std::string& why) {
  if (h.costs_from.empty() || h.levels.empty() || !flat.cost || !hier.cost) return flat;
  const std::vector<int>& outermost = h.levels.front().domain;
  if (std::all_of(outermost.begin(), outermost.end(), [&](int d) { return d == outermost.front(); })) return flat;
  coll_args on = args;
  on.hierarchy = &h;
  double predicted_hier = 0;
  try {
    predicted_hier = hier.cost(on, elem_size, h.top_cost);
  } catch (const usage_error& e) {
    // A phase RANKLAB_HIERARCHY_ALGORITHMS fixes cannot run this call: the flat choice stands.
    why += fmt::format("; hierarchical not weighed: {}", e.cause());
    return flat;
  }
  // Flat, under the top model: a one-ported round lasts as long as its slowest message, and a
  // flat schedule, laid out without regard to the domains, has messages across them in its rounds.
  const double predicted_flat = flat.cost(args, elem_size, h.top_cost);
  const std::string levels = fmt::format("level costs {} ({})", h.costs_from, h.describe());
  const bool cheaper = predicted_hier < predicted_flat;
  if (cheaper)
    why = fmt::format("hierarchical predicted {} under {}, below flat {} predicted {} under the top level's model "
                      "(the table's choice: {})",
                      shown_seconds(predicted_hier), levels, flat.name, shown_seconds(predicted_flat), why);
  else
    why += fmt::format("; flat {} predicted {} under the top level's model, hierarchical {} under {}", flat.name,
                       shown_seconds(predicted_flat), shown_seconds(predicted_hier), levels);
  if (std::getenv("RANKLAB_LOG_SELECTION"))
    std::fprintf(stderr, "ranklab: %s -> %s (%s)\n", describe(args).c_str(),
                 std::string(cheaper ? hier.name : flat.name).c_str(), why.c_str());
  return cheaper ? hier : flat;
}

const cost_model& calibrated_cost_model() {
  thread_local cost_model m;
  m = current_selection()->model;
  return m;
}

}  // namespace detail

}  // namespace ranklab
