// Hierarchies of domains (ranklab/hierarchy.hpp).
#include "ranklab/hierarchy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

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

}  // namespace ranklab
