// `ranklab predict --coll C --shape S --level NAME=alpha,beta,gamma ...`: the cost model's
// prediction of the hierarchical algorithm against every flat one-ported algorithm on a
// machine of that shape (predict.hpp says how each is costed). Nothing runs: a 2-core VM
// cannot measure a 2-package node or a cluster, but the registry's cost functions can
// say what the per-level models imply there.
#include "commands/predict.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/plot.hpp"
#include "bench/report.hpp"
#include "bench/workload.hpp"
#include "cli/checks.hpp"
#include "cli/option_parse.hpp"
#include "commands/commands.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/selection.hpp"

namespace ranklab::tools {

namespace {

double parse_number(std::string_view level, std::string_view what, std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v))
    throw std::invalid_argument(fmt::format("{} '{}' is not a number (level '{}')", what, text, level));
  if (v < 0) throw std::invalid_argument(fmt::format("{} {} is negative (level '{}')", what, text, level));
  return v;
}

// The number of ranks in one domain of each level of `h`, outermost first (all equal within a
// level in a hierarchy from a shape).
std::vector<int> ranks_per_domain(const rank_hierarchy& h) {
  std::vector<int> out;
  for (const hierarchy_level& v : h.levels) {
    const std::set<int> distinct(v.domain.begin(), v.domain.end());
    out.push_back(h.size() / static_cast<int>(distinct.size()));
  }
  return out;
}

// The links of `h` a message can cross, outermost first: top, then each level whose domains
// hold more than one rank (a shape's innermost level holds one).
struct link {
  std::string id;  // "top", "level0" ...
  const cost_model* cost;
  int domains = 0;  // top: the outermost domains; a level: ranks per domain
};
std::vector<link> links_of(const rank_hierarchy& h) {
  std::vector<link> out;
  const std::vector<int> per = ranks_per_domain(h);
  out.push_back({"top", &h.top_cost, per.empty() ? h.size() : h.size() / per.front()});
  for (std::size_t l = 0; l < h.levels.size(); ++l)
    if (per[l] > 1) out.push_back({h.levels[l].name, &h.levels[l].cost, per[l]});
  return out;
}

nlohmann::ordered_json model_json(const cost_model& m) {
  return {{"alpha", m.alpha}, {"beta", m.beta}, {"gamma", m.gamma}};
}

nlohmann::ordered_json algorithm_json(const algorithm_prediction& a) {
  return {{"algo", a.algo}, {"seconds", a.seconds}};
}

}  // namespace

level_model parse_level_model(std::string_view text, const level_costs* file) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    throw std::invalid_argument("expected NAME=alpha,beta,gamma (seconds, s/B, s/B) or NAME=shipped");
  level_model out;
  out.name = std::string(text.substr(0, eq));
  const std::string_view value = text.substr(eq + 1);
  if (value == "shipped") {
    out.cost = shipped_selection().model;
    out.source = "shipped";
    out.origin = "data/selection/default.json cost_model";
    return out;
  }
  if (value.starts_with("measured:")) {
    const std::string_view level = value.substr(std::string_view("measured:").size());
    if (!file) throw std::invalid_argument(fmt::format("level '{}': measured:{} needs --levels-file", out.name, level));
    const level_cost* c = file->find(level);
    if (!c) {
      std::vector<std::string_view> names;
      for (const level_cost& x : file->levels) names.push_back(x.name);
      throw std::invalid_argument(fmt::format("level '{}': {} has no level '{}' (it has {})", out.name, file->source,
                                              level, fmt::join(names, ", ")));
    }
    out.cost = c->cost;
    out.source = "measured";
    out.origin = fmt::format("{} level {}", file->source, level);
    return out;
  }
  const std::vector<std::string> parts = split_list(value);
  if (parts.size() != 3 || std::count(value.begin(), value.end(), ',') != 2)
    throw std::invalid_argument(fmt::format(
        "level '{}': '{}' is not three numbers alpha,beta,gamma (seconds, s/B, s/B) or 'shipped'", out.name, value));
  out.cost.alpha = parse_number(out.name, "alpha", parts[0]);
  out.cost.beta = parse_number(out.name, "beta", parts[1]);
  out.cost.gamma = parse_number(out.name, "gamma", parts[2]);
  out.source = "given";
  return out;
}

rank_hierarchy predicted_hierarchy(std::string_view shape, const std::vector<level_model>& models) {
  rank_hierarchy h = rank_hierarchy::from_shape(shape);
  const std::size_t k = h.levels.size();  // the shape's factors
  if (models.empty()) return h;
  if (models.size() != k)
    throw std::invalid_argument(
        fmt::format("shape {} has {} link{} (between its outermost domains{}), so {} models, outermost first; got {}",
                    shape, k, k == 1 ? "" : "s", k == 1 ? "" : ", then inside each level's domains", k, models.size()));
  h.top_cost = models[0].cost;
  // Level l's cost is a message inside one of its domains: the model after the top one. The
  // innermost level's domains are single ranks; it keeps the innermost model, unused.
  for (std::size_t l = 0; l < k; ++l) h.levels[l].cost = models[std::min(l + 1, k - 1)].cost;
  return h;
}

cost_model pair_weighted_model(const rank_hierarchy& h) {
  const int p = h.size();
  if (p < 2) return h.top_cost;
  const std::vector<int> per = ranks_per_domain(h);
  // A rank's p - 1 partners: p - per[0] outside its outermost domain (top model); inside its
  // level l-1 domain but outside its level l one, per[l-1] - per[l] (level l-1's model).
  cost_model m{0, 0, 0};
  const auto add = [&](const cost_model& c, int partners) {
    const double w = static_cast<double>(partners) / (p - 1);
    m.alpha += w * c.alpha, m.beta += w * c.beta, m.gamma += w * c.gamma;
  };
  add(h.top_cost, p - per.front());
  for (std::size_t l = 1; l < per.size(); ++l) add(h.levels[l - 1].cost, per[l - 1] - per[l]);
  if (per.back() > 1) add(h.levels.back().cost, per.back() - 1);
  return m;
}

std::vector<collective> predictable_collectives() {
  std::vector<collective> out;
  for (int i = 0; i < collective_count; ++i) {
    const auto c = static_cast<collective>(i);
    if (const algorithm* a = registry::find(c, "hierarchical"); a && a->cost) out.push_back(c);
  }
  return out;
}

std::vector<prediction_row> predict(const rank_hierarchy& h, const std::vector<collective>& colls,
                                    const std::vector<std::uint64_t>& sizes) {
  const cost_model weighted = pair_weighted_model(h);
  std::vector<prediction_row> rows;
  for (collective c : colls) {
    const algorithm* hier = registry::find(c, "hierarchical");
    if (!hier || !hier->cost) throw std::invalid_argument(fmt::format("{} has no hierarchical algorithm", name(c)));
    const std::vector<std::uint64_t> own = c == collective::barrier ? std::vector<std::uint64_t>{0} : sizes;
    for (std::uint64_t bytes : own) {
      call flat = bench::make_bench_call(c, h.size(), bytes, "auto");
      prediction_row row;
      row.coll = c;
      row.bytes = bench::reported_bytes(c, bytes);
      const std::size_t elem = flat.type.size;
      coll_args with = flat.args;
      with.hierarchy = &h;
      check_preconditions(*hier, with);
      row.hierarchical = hier->cost(with, elem, h.top_cost);
      for (const algorithm* x : registry::for_collective(c)) {
        if (!x->one_ported || x->hierarchical || !x->cost || !meets_preconditions(*x, flat.args)) continue;
        row.flat.push_back({std::string(x->name), x->cost(flat.args, elem, h.top_cost)});
        row.flat_pair_weighted.push_back({std::string(x->name), x->cost(flat.args, elem, weighted)});
      }
      const auto best = [](const std::vector<algorithm_prediction>& v) {
        // The first of equal costs (registry order), as phase_algorithm breaks ties.
        const auto it =
            std::min_element(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
        return it == v.end() ? algorithm_prediction{"-", 0} : *it;
      };
      row.best_flat = best(row.flat);
      row.best_flat_pair_weighted = best(row.flat_pair_weighted);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

nlohmann::ordered_json prediction_json(std::string_view shape, const rank_hierarchy& h,
                                       const std::vector<level_model>& models,
                                       const std::vector<prediction_row>& rows) {
  nlohmann::ordered_json j;
  j["shape"] = std::string(shape);
  j["p"] = h.size();
  j["model"] =
      "one-ported rounds; a message of m bytes costs alpha + beta*m, reducing m bytes gamma*m, with the model of the "
      "link it crosses; hierarchical: its registry cost on the shape's hierarchy; flat: under the top model (and "
      "pair-weighted)";
  nlohmann::ordered_json levels = nlohmann::ordered_json::array();
  const std::vector<link> ls = links_of(h);
  for (std::size_t i = 0; i < ls.size(); ++i) {
    nlohmann::ordered_json e;
    e["link"] = ls[i].id;
    e["name"] = i < models.size() ? models[i].name : "default";
    e["source"] = i < models.size() ? models[i].source : "default";
    if (i < models.size() && !models[i].origin.empty()) e["origin"] = models[i].origin;
    e[i == 0 ? "domains" : "ranks_per_domain"] = ls[i].domains;
    e["alpha"] = ls[i].cost->alpha;
    e["beta"] = ls[i].cost->beta;
    e["gamma"] = ls[i].cost->gamma;
    levels.push_back(std::move(e));
  }
  j["levels"] = std::move(levels);
  j["flat_model"] = model_json(h.top_cost);
  j["pair_weighted_model"] = model_json(pair_weighted_model(h));
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const prediction_row& r : rows) {
    nlohmann::ordered_json e;
    e["coll"] = std::string(name(r.coll));
    e["bytes"] = r.bytes;
    e["hierarchical"] = r.hierarchical;
    e["best_flat"] = algorithm_json(r.best_flat);
    e["ratio"] = r.ratio();
    e["best_flat_pair_weighted"] = algorithm_json(r.best_flat_pair_weighted);
    e["ratio_pair_weighted"] = r.ratio_pair_weighted();
    e["flat"] = nlohmann::ordered_json::array();
    for (const auto& a : r.flat) e["flat"].push_back(algorithm_json(a));
    e["flat_pair_weighted"] = nlohmann::ordered_json::array();
    for (const auto& a : r.flat_pair_weighted) e["flat_pair_weighted"].push_back(algorithm_json(a));
    out.push_back(std::move(e));
  }
  j["rows"] = std::move(out);
  return j;
}

namespace {

constexpr std::uint64_t max_predicted_bytes = std::uint64_t{1} << 34;

struct predict_options {
  std::string colls;
  std::string shape;
  std::string sizes = "8,1Ki,64Ki,1Mi,16Mi";
  std::vector<std::string> levels;
  std::string levels_file;
  std::string svg;
  output_options out;
};

void print_text(const predict_options& o, const rank_hierarchy& h, const std::vector<level_model>& models,
                const std::vector<prediction_row>& rows) {
  fmt::print("predicted for shape {} (p = {}): one-ported rounds, a message of m bytes alpha + beta*m, a reduced\n",
             o.shape, h.size());
  fmt::print("byte gamma, under the model of the link it crosses (nothing is run)\n\n");
  fmt::print("  {:<8} {:<16} {:>11} {:>11} {:>11}  {}\n", "link", "name", "alpha s", "beta s/B", "gamma s/B", "source");
  const std::vector<link> ls = links_of(h);
  for (std::size_t i = 0; i < ls.size(); ++i) {
    const std::string where = i == 0 ? fmt::format("between the {} outermost domains", ls[i].domains)
                                     : fmt::format("inside a domain of {} ranks", ls[i].domains);
    const std::string source = i < models.size() ? models[i].source : "library default";
    fmt::print(
        "  {:<8} {:<16} {:>11.4g} {:>11.4g} {:>11.4g}  {}; {}\n", ls[i].id, i < models.size() ? models[i].name : "-",
        ls[i].cost->alpha, ls[i].cost->beta, ls[i].cost->gamma,
        i < models.size() && !models[i].origin.empty() ? fmt::format("{} ({})", source, models[i].origin) : source,
        where);
  }
  const cost_model w = pair_weighted_model(h);
  fmt::print(
      "  {:<8} {:<16} {:>11.4g} {:>11.4g} {:>11.4g}  flat, second figure: each link by its share of rank pairs\n\n",
      "weighted", "pair-weighted", w.alpha, w.beta, w.gamma);
  fmt::print("{:<21} {:>6} {:>15}  {:>12}  {:<19} {:>9} {:>17}  {:<19} {:>9}\n", "coll", "bytes", "hierarchical us",
             "best flat us", "algorithm", "flat/hier", "pair-weighted us", "algorithm", "flat/hier");
  for (const prediction_row& r : rows)
    fmt::print("{:<21} {:>6} {:>15}  {:>12}  {:<19} {:>9.2f} {:>17}  {:<19} {:>9.2f}\n", name(r.coll),
               size_label(r.bytes), bench::format_usec(r.hierarchical * 1e6),
               bench::format_usec(r.best_flat.seconds * 1e6), r.best_flat.algo, r.ratio(),
               bench::format_usec(r.best_flat_pair_weighted.seconds * 1e6), r.best_flat_pair_weighted.algo,
               r.ratio_pair_weighted());
}

// The plot: bench's log-log panels (one per collective), with the predicted series as rows.
std::string render_prediction_svg(const predict_options& o, const rank_hierarchy& h,
                                  const std::vector<prediction_row>& rows) {
  bench::bench_results r;
  for (const prediction_row& row : rows) {
    const auto add = [&](const std::string& series, double seconds) {
      bench::result_row x;
      x.impl = "ranklab";
      x.coll = std::string(name(row.coll));
      x.algo = series;
      x.p = h.size();
      x.bytes = row.bytes;
      x.usec_median = seconds * 1e6;
      r.rows.push_back(std::move(x));
    };
    add("hierarchical", row.hierarchical);
    add("best flat, top model", row.best_flat.seconds);
    add("best flat, pair-weighted", row.best_flat_pair_weighted.seconds);
  }
  std::string s = bench::render_svg(r);
  // The bench title speaks of measured medians: these are predictions.
  const std::string bench_title = "ranklab bench: time per call";
  if (const std::size_t at = s.find(bench_title); at != std::string::npos)
    if (const std::size_t end = s.find("</text>", at); end != std::string::npos)
      s.replace(at, end - at,
                fmt::format("ranklab predict --shape {} (p = {}): predicted time per call against bytes per rank "
                            "(log-log)",
                            o.shape, h.size()));
  return s;
}

void predict_command(const predict_options& o) {
  std::vector<collective> colls;
  if (split_list(o.colls) == std::vector<std::string>{"all"}) {
    colls = predictable_collectives();
  } else {
    colls = parse_collective_list("--coll", o.colls);
    const std::vector<collective> ok = predictable_collectives();
    for (collective c : colls)
      if (std::find(ok.begin(), ok.end(), c) == ok.end()) {
        std::vector<std::string_view> names;
        for (collective x : ok) names.push_back(name(x));
        usage_failure(fmt::format("--coll {}: no hierarchical algorithm to predict; those with one: {} (or all)",
                                  name(c), fmt::join(names, ", ")));
      }
  }
  const std::vector<std::uint64_t> sizes =
      parse_sizes("--sizes", o.sizes, max_predicted_bytes, "per rank; nothing is allocated");
  level_costs file;
  if (!o.levels_file.empty()) try {
      file = read_level_costs(o.levels_file);
    } catch (const usage_error& e) {
      usage_failure(fmt::format("--levels-file {}", e.cause()));
    }
  std::vector<level_model> models;
  for (const std::string& text : o.levels) try {
      models.push_back(parse_level_model(text, o.levels_file.empty() ? nullptr : &file));
    } catch (const std::invalid_argument& e) {
      usage_failure(fmt::format("--level {}: {}", text, e.what()));
    }
  rank_hierarchy h;
  try {
    h = predicted_hierarchy(o.shape, models);
  } catch (const usage_error& e) {
    usage_failure(fmt::format("--shape {}: {}", o.shape, e.cause()));
  } catch (const std::invalid_argument& e) {
    usage_failure(fmt::format("--level: {}", e.what()));
  }
  if (h.size() < 2) usage_failure(fmt::format("--shape {}: one rank, nothing to predict", o.shape));
  std::vector<prediction_row> rows;
  try {
    rows = predict(h, colls, sizes);
  } catch (const usage_error& e) {
    usage_failure(e.cause());
  }
  if (o.out.json) write_json(o.out, prediction_json(o.shape, h, models, rows).dump(2));
  if (o.out.text()) print_text(o, h, models, rows);
  if (!o.svg.empty()) {
    std::ofstream f(o.svg);
    f << render_prediction_svg(o, h, rows);
    if (!f.flush()) throw std::runtime_error("--svg " + o.svg + ": cannot write the file");
    if (!o.out.quiet) fmt::print(stderr, "wrote {}\n", o.svg);
  }
}

}  // namespace

void add_predict_command(CLI::App& app) {
  static predict_options o;
  auto* cmd = app.add_subcommand(
      "predict",
      "Predict with the per-level cost model what the hierarchical algorithm and every flat one-ported "
      "algorithm cost on a machine of a given shape (nothing is run)");
  cmd->add_option("--coll", o.colls, "Collectives with a hierarchical algorithm: C[,C...] or all")->required();
  cmd->add_option("--shape", o.shape,
                  "Domains per level, outermost first, as rank_hierarchy::from_shape: 2x32 (2 packages of 32 "
                  "cores), 16x32 (16 nodes of 32)")
      ->required();
  cmd->add_option("--sizes", o.sizes, "Bytes per rank, as bench: 8,1Ki,64Ki,1Mi or lo:hi[:factor]")
      ->capture_default_str();
  cmd->add_option("--level", o.levels,
                  "A link's cost model NAME=alpha,beta,gamma (s, s/B, s/B), NAME=shipped (the shipped selection "
                  "table's fit) or NAME=measured:LEVEL (--levels-file's level), once per factor of the shape, "
                  "outermost first: the first is a message between "
                  "the outermost domains (top), the next inside one of them, and so on. Without --level: the "
                  "library's defaults")
      ->type_name("NAME=A,B,G");
  cmd->add_option("--levels-file", o.levels_file,
                  "A level-cost file (ranklab tune --levels, e.g. data/levels/default.json) for --level "
                  "NAME=measured:LEVEL");
  cmd->add_option("--svg", o.svg, "Write a plot: predicted time against size, hierarchical and best flat, per coll")
      ->check(writable_path());
  add_output_options(cmd, o.out,
                     "{shape, p, model, levels[{link, name, source, alpha, beta, gamma}], flat_model, "
                     "pair_weighted_model, rows[{coll, bytes, hierarchical, best_flat{algo, seconds}, ratio, "
                     "best_flat_pair_weighted, ratio_pair_weighted, flat[], flat_pair_weighted[]}]}, seconds");
  cmd->callback([] { predict_command(o); });
}

}  // namespace ranklab::tools
