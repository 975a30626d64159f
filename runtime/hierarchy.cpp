// Hierarchies of domains (ranklab/hierarchy.hpp).
#include "ranklab/hierarchy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "ranklab/errors.hpp"
#include "ranklab/team.hpp"

namespace ranklab {

void rank_hierarchy::validate(int p) const {
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const hierarchy_level& v = levels[l];
    if (static_cast<int>(v.domain.size()) != p)
      throw usage_error(no_rank, "hierarchy",
                        fmt::format("level {} ({}) has {} domain entries for {} ranks", l, v.name, v.domain.size(), p));
    if (l == 0) continue;
    // Refinement: each domain here lies inside one domain of the level before.
    std::map<int, int> outer_of;
    for (int r = 0; r < p; ++r) {
      const int outer = levels[l - 1].domain[static_cast<std::size_t>(r)];
      const auto [it, fresh] = outer_of.emplace(v.domain[static_cast<std::size_t>(r)], outer);
      if (!fresh && it->second != outer)
        throw usage_error(no_rank, "hierarchy",
                          fmt::format("level {} ({}): domain {} spans domains {} and {} of level {} ({})", l, v.name,
                                      it->first, it->second, outer, l - 1, levels[l - 1].name));
    }
  }
}

std::string rank_hierarchy::describe() const {
  std::string s;
  for (const hierarchy_level& v : levels) {
    const std::set<int> distinct(v.domain.begin(), v.domain.end());
    s += fmt::format("{}{}:{}", s.empty() ? "" : " ", v.name, distinct.size());
  }
  return s.empty() ? "flat" : s;
}

rank_hierarchy rank_hierarchy::from_shape(std::span<const int> shape) {
  rank_hierarchy h;
  int p = 1;
  for (int n : shape) {
    if (n < 1 || n > max_team_size)
      throw usage_error(no_rank, "hierarchy",
                        fmt::format("a level of {} domains (each level 1..{})", n, max_team_size));
    p *= n;
    if (p > max_team_size)
      throw usage_error(no_rank, "hierarchy", fmt::format("the shape has more than {} ranks", max_team_size));
  }
  int per_domain = p;
  cost_model m;
  for (std::size_t l = 0; l < shape.size(); ++l) {
    per_domain /= shape[l];
    hierarchy_level v;
    v.name = fmt::format("level{}", l);
    v.domain.resize(static_cast<std::size_t>(p));
    // Rank r's domain at level l: which block of (ranks below level l) it is in.
    for (int r = 0; r < p; ++r) v.domain[static_cast<std::size_t>(r)] = r / per_domain;
    m.alpha /= 2;
    m.beta /= 2;
    v.cost = m;
    h.levels.push_back(std::move(v));
  }
  return h;
}

rank_hierarchy rank_hierarchy::from_shape(std::string_view shape) {
  std::vector<int> n;
  std::size_t at = 0;
  while (at <= shape.size()) {
    const std::size_t x = std::min(shape.find('x', at), shape.size());
    int v = 0;
    const auto [end, ec] = std::from_chars(shape.data() + at, shape.data() + x, v);
    if (ec != std::errc{} || end != shape.data() + x)
      throw usage_error(no_rank, "hierarchy",
                        fmt::format("shape '{}': numbers of domains per level separated by 'x', as 2x3", shape));
    n.push_back(v);
    at = x + 1;
  }
  return from_shape(std::span<const int>(n));
}

rank_hierarchy rank_hierarchy::from_domains(std::span<const int> domain, std::string name) {
  rank_hierarchy h;
  hierarchy_level v;
  v.name = std::move(name);
  v.domain.assign(domain.begin(), domain.end());
  v.cost.alpha /= 2;
  v.cost.beta /= 2;
  h.levels.push_back(std::move(v));
  return h;
}

std::vector<phase_choice> rank_hierarchy::parse_choices(std::string_view text) {
  std::vector<phase_choice> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string_view entry = text.substr(at, end - at);
    at = end + 1;
    if (entry.empty()) continue;
    const auto bad = [&](const std::string& why) {
      return usage_error(no_rank, "hierarchy",
                         fmt::format("phase algorithm '{}': {} (entries [level:]collective=algorithm, e.g. "
                                     "numa:reduce=knomial,top:allreduce=ring)",
                                     entry, why));
    };
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) throw bad("no '='");
    std::string_view left = entry.substr(0, eq);
    phase_choice c;
    c.algorithm = std::string(entry.substr(eq + 1));
    if (const std::size_t colon = left.find(':'); colon != std::string_view::npos) {
      c.level = std::string(left.substr(0, colon));
      left = left.substr(colon + 1);
    }
    const std::optional<collective> coll = collective_from_name(left);
    if (!coll) throw bad(fmt::format("no collective '{}'", left));
    c.coll = *coll;
    const algorithm* a = registry::find(c.coll, c.algorithm);
    if (!a) throw bad(fmt::format("no {} algorithm '{}'", left, c.algorithm));
    if (a->hierarchical || !a->one_ported)
      throw bad(fmt::format("{} {} cannot be a phase: {}", left, c.algorithm,
                            a->hierarchical ? "it is hierarchical itself" : "it is not one-ported"));
    out.push_back(std::move(c));
  }
  return out;
}

// ---- measured level costs ------------------------------------------------------------------
namespace {

using ojson = nlohmann::ordered_json;
constexpr std::string_view level_costs_format = "ranklab-level-costs";
// Outermost first: the order of a file's levels, and the nesting the comm's lookup walks.
constexpr std::array<std::string_view, 5> level_names{"process", "machine", "package", "numa", "l3"};

std::size_t level_rank(std::string_view name) {
  return static_cast<std::size_t>(std::find(level_names.begin(), level_names.end(), name) - level_names.begin());
}

[[noreturn]] void bad_costs(const std::string& origin, const std::string& problem) {
  throw usage_error(no_rank, "level costs", fmt::format("{}: {}", origin, problem));
}

struct cost_reader {
  const std::string& origin;
  std::string where;

  [[noreturn]] void fail(const std::string& problem) const { bad_costs(origin, where + ": " + problem); }
  const ojson* optional(const ojson& obj, const char* key) const {
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  double seconds(const ojson& obj, const char* key) const {
    const ojson* v = optional(obj, key);
    if (v == nullptr) fail(fmt::format("missing key \"{}\"", key));
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0)
      fail(fmt::format("\"{}\" must be a non-negative finite number (seconds), not {}", key, v->dump()));
    return v->get<double>();
  }
  std::uint64_t bytes(const ojson& obj, const char* key) const {
    const ojson* v = optional(obj, key);
    if (v == nullptr) return 0;
    if (!v->is_number_unsigned())
      fail(fmt::format("\"{}\" must be a non-negative integer (bytes), not {}", key, v->dump()));
    return v->get<std::uint64_t>();
  }
  std::string text(const ojson& obj, const char* key) const {
    const ojson* v = optional(obj, key);
    if (v == nullptr) return {};
    if (!v->is_string()) fail(fmt::format("\"{}\" must be a string, not {}", key, v->dump()));
    return v->get<std::string>();
  }
};

level_cost parse_level(const ojson& v, std::size_t index, const std::string& origin) {
  cost_reader rd{origin, fmt::format("level {}", index + 1)};
  if (!v.is_object()) rd.fail("must be an object");
  for (auto it = v.begin(); it != v.end(); ++it) {
    static constexpr std::array<std::string_view, 10> keys{"name",      "alpha", "beta",  "gamma", "min_bytes",
                                                          "max_bytes", "load_average", "cores", "max_relative_error",
                                                          "note"};
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
      rd.fail(fmt::format("unknown key \"{}\" (expected {})", it.key(), fmt::join(keys, ", ")));
  }
  level_cost c;
  const ojson* n = rd.optional(v, "name");
  if (n == nullptr) rd.fail("missing key \"name\"");
  if (!n->is_string()) rd.fail(fmt::format("\"name\" must be a string, not {}", n->dump()));
  c.name = n->get<std::string>();
  if (level_rank(c.name) == level_names.size())
    rd.fail(fmt::format("unknown level \"{}\" (levels: {})", c.name, fmt::join(level_names, ", ")));
  rd.where += fmt::format(" (\"{}\")", c.name);
  c.cost.alpha = rd.seconds(v, "alpha");
  c.cost.beta = rd.seconds(v, "beta");
  c.cost.gamma = rd.seconds(v, "gamma");
  c.min_bytes = rd.bytes(v, "min_bytes");
  c.max_bytes = rd.bytes(v, "max_bytes");
  if (c.max_bytes < c.min_bytes) rd.fail(fmt::format("max_bytes {} is below min_bytes {}", c.max_bytes, c.min_bytes));
  c.load_average = rd.text(v, "load_average");
  c.note = rd.text(v, "note");
  if (const ojson* cores = rd.optional(v, "cores")) {
    if (!cores->is_array()) rd.fail(fmt::format("\"cores\" must be an array of core numbers, not {}", cores->dump()));
    for (const ojson& k : *cores) {
      if (!k.is_number_unsigned() || k.get<std::uint64_t>() > static_cast<std::uint64_t>(max_team_size))
        rd.fail(fmt::format("\"cores\" must hold core numbers, not {}", k.dump()));
      c.cores.push_back(k.get<int>());
    }
  }
  if (const ojson* e = rd.optional(v, "max_relative_error")) {
    if (!e->is_number() || !std::isfinite(e->get<double>()) || e->get<double>() < 0)
      rd.fail(fmt::format("\"max_relative_error\" must be a non-negative number, not {}", e->dump()));
    c.max_relative_error = e->get<double>();
  }
  return c;
}

struct level_cost_state {
  std::mutex lock;
  std::shared_ptr<const level_costs> costs;  // null: not decided yet
};
level_cost_state& cost_state() {
  static level_cost_state s;
  return s;
}

}  // namespace

const level_cost* level_costs::find(std::string_view name) const {
  for (const level_cost& c : levels)
    if (c.name == name) return &c;
  return nullptr;
}

int level_costs::core_levels() const {
  return static_cast<int>(std::count_if(levels.begin(), levels.end(), [](const level_cost& c) { return c.name != "process"; }));
}

level_costs parse_level_costs(std::string_view json_text, const std::string& origin) {
  ojson doc;
  try {
    doc = ojson::parse(json_text.begin(), json_text.end());
  } catch (const ojson::parse_error& e) {
    std::string m = e.what();
    if (const auto close = m.find("] "); !m.empty() && m.front() == '[' && close != std::string::npos) m.erase(0, close + 2);
    bad_costs(origin, "not valid JSON: " + m);
  }
  if (!doc.is_object()) bad_costs(origin, fmt::format("expected a JSON object with \"format\": \"{}\"", level_costs_format));
  const auto format = doc.find("format");
  if (format == doc.end() || !format->is_string() || format->get<std::string>() != level_costs_format)
    bad_costs(origin, fmt::format("not a level-cost file (\"format\" must be \"{}\", found {})", level_costs_format,
                                  format == doc.end() ? "no \"format\" key" : format->dump()));
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_unsigned())
    bad_costs(origin, "\"version\" must be a positive integer");
  if (version->get<std::uint64_t>() != static_cast<std::uint64_t>(level_costs_format_version))
    bad_costs(origin, fmt::format("format version {} is not supported (this build reads version {})",
                                  version->get<std::uint64_t>(), level_costs_format_version));
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "format" && it.key() != "version" && it.key() != "machine" && it.key() != "levels")
      bad_costs(origin, fmt::format("unknown key \"{}\" (expected format, version, machine, levels)", it.key()));
  level_costs out;
  out.source = origin;
  if (const auto m = doc.find("machine"); m != doc.end()) {
    if (!m->is_object()) bad_costs(origin, "\"machine\" must be an object");
    out.machine_json = m->dump();
  }
  const auto levels = doc.find("levels");
  if (levels == doc.end()) bad_costs(origin, "missing key \"levels\"");
  if (!levels->is_array()) bad_costs(origin, "\"levels\" must be an array");
  for (std::size_t i = 0; i < levels->size(); ++i) {
    level_cost c = parse_level((*levels)[i], i, origin);
    if (out.find(c.name)) bad_costs(origin, fmt::format("level {}: \"{}\" is given twice", i + 1, c.name));
    out.levels.push_back(std::move(c));
  }
  // The cost between cores of the machine is what every level without its own falls back to.
  if (!out.find("machine"))
    bad_costs(origin, "no \"machine\" level (the cost between two cores of the machine, which every level "
                      "without its own entry takes)");
  std::stable_sort(out.levels.begin(), out.levels.end(),
                   [](const level_cost& a, const level_cost& b) { return level_rank(a.name) < level_rank(b.name); });
  return out;
}

level_costs read_level_costs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad_costs(path, fmt::format("cannot open the level-cost file: {}", std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) bad_costs(path, "cannot read the level-cost file");
  return parse_level_costs(text.str(), path);
}

std::string to_json(const level_costs& c) {
  ojson machine;
  try {
    machine = ojson::parse(c.machine_json.empty() ? "{}" : c.machine_json);
  } catch (const ojson::parse_error&) {
    bad_costs(c.source, "the machine description is not valid JSON");
  }
  std::string out = fmt::format("{{\n  \"format\": \"{}\",\n  \"version\": {},\n  \"machine\": {{", level_costs_format,
                                level_costs_format_version);
  bool first = true;
  for (auto it = machine.begin(); it != machine.end(); ++it) {
    out += fmt::format("{}\n    {}: {}", first ? "" : ",", ojson(it.key()).dump(), it.value().dump());
    first = false;
  }
  out += first ? "},\n  \"levels\": [" : "\n  },\n  \"levels\": [";
  for (std::size_t i = 0; i < c.levels.size(); ++i) {
    const level_cost& v = c.levels[i];
    ojson j;
    j["name"] = v.name;
    j["alpha"] = v.cost.alpha;
    j["beta"] = v.cost.beta;
    j["gamma"] = v.cost.gamma;
    j["min_bytes"] = v.min_bytes;
    j["max_bytes"] = v.max_bytes;
    if (!v.load_average.empty()) j["load_average"] = v.load_average;
    if (!v.cores.empty()) j["cores"] = v.cores;
    j["max_relative_error"] = v.max_relative_error;
    if (!v.note.empty()) j["note"] = v.note;
    out += (i == 0 ? "\n    " : ",\n    ") + j.dump();
  }
  out += c.levels.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

void write_level_costs(const level_costs& c, const std::string& path) {
  // Next to the target, then renamed: a comm never reads half a file.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) bad_costs(path, fmt::format("cannot write the level-cost file: {}", std::strerror(errno)));
    out << to_json(c);
    out.close();
    if (!out) bad_costs(path, "cannot write the level-cost file");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    bad_costs(path, fmt::format("cannot write the level-cost file: {}", std::strerror(err)));
  }
}

void use_level_costs(level_costs c) {
  auto shared = std::make_shared<const level_costs>(std::move(c));
  std::lock_guard lock(cost_state().lock);
  cost_state().costs = std::move(shared);
}

void reset_level_costs() {
  std::lock_guard lock(cost_state().lock);
  cost_state().costs.reset();
}

std::shared_ptr<const level_costs> current_level_costs() {
  level_cost_state& s = cost_state();
  std::lock_guard lock(s.lock);
  if (!s.costs) {
    const char* path = std::getenv("RANKLAB_LEVEL_COSTS");
    if (path == nullptr || *path == '\0') {
      s.costs = std::make_shared<const level_costs>();
    } else {
      try {
        s.costs = std::make_shared<const level_costs>(read_level_costs(path));
      } catch (const usage_error& e) {
        throw usage_error(no_rank, "level costs", e.cause() + " (named by RANKLAB_LEVEL_COSTS)");
      }
    }
  }
  return s.costs;
}

}  // namespace ranklab
