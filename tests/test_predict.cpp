// `ranklab predict` (tools/commands/predict.hpp): its figures are the registry's cost
// functions, called here directly on a call and a hierarchy made independently of the
// command's helpers, for the command's rows and for its JSON; the pair-weighted model's
// weights; the parsing of --level (numbers, shipped, measured) and the number of models a
// shape takes. No timing.
#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands/predict.hpp"
#include "ranklab/call.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/hierarchy.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/selection.hpp"

using namespace ranklab;
using tools::level_model;

namespace {

const cost_model network{1.5e-6, 8.3e-11, 2.1e-11};
const cost_model cross_package{1.7e-7, 1.65e-10, 2.1e-11};
const cost_model package{6.8e-8, 6.6e-11, 2.1e-11};

// The call `ranklab bench` makes of `bytes` per rank (tools/bench/workload.hpp), written out
// again: reductions bytes/4 int32, the rest bytes of uint8, v-collectives equal counts.
call independent_call(collective c, int p, std::uint64_t bytes) {
  const bool reduction = c == collective::allreduce || c == collective::reduce ||
                         c == collective::reduce_scatter_block || c == collective::reduce_scatter;
  const datatype t = reduction ? datatype_of<std::int32_t>() : datatype_of<std::uint8_t>();
  const std::uint64_t n = c == collective::barrier ? 0 : reduction ? std::max<std::uint64_t>(bytes / 4, 1) : bytes;
  if (c == collective::allgatherv || c == collective::reduce_scatter || c == collective::gatherv ||
      c == collective::scatterv) {
    const std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), n);
    return make_vcall(c, p, counts, {}, 0, t, ops::sum);
  }
  return make_call(c, p, n, 0, t, ops::sum);
}

std::vector<level_model> models_of(std::initializer_list<cost_model> ms) {
  std::vector<level_model> out;
  int i = 0;
  for (const cost_model& m : ms) out.push_back({"l" + std::to_string(i++), m, "given"});
  return out;
}

struct machine_case {
  const char* shape;
  std::vector<cost_model> models;  // outermost first
};

}  // namespace

TEST_CASE("predict: the hierarchical and flat figures are the registry's costs, in the rows and the JSON") {
  const std::vector<machine_case> machines{
      {"2x32", {cross_package, package}}, {"16x32", {network, package}}, {"2x2x3", {network, cross_package, package}}};
  const std::vector<collective> colls{collective::allreduce, collective::bcast, collective::allgather,
                                      collective::reduce_scatter_block, collective::barrier};
  const std::vector<std::uint64_t> sizes{8, 1024, 65536, 1u << 20};
  for (const machine_case& mc : machines) {
    CAPTURE(mc.shape);
    std::vector<level_model> models;
    for (std::size_t i = 0; i < mc.models.size(); ++i) models.push_back({"m", mc.models[i], "given"});
    const rank_hierarchy h = tools::predicted_hierarchy(mc.shape, models);
    // The same hierarchy, made by hand: from_shape, then top_cost and each level's cost.
    rank_hierarchy mine = rank_hierarchy::from_shape(std::string_view(mc.shape));
    mine.top_cost = mc.models[0];
    for (std::size_t l = 0; l + 1 < mc.models.size(); ++l) mine.levels[l].cost = mc.models[l + 1];
    const int p = mine.size();

    const std::vector<tools::prediction_row> rows = tools::predict(h, colls, sizes);
    const nlohmann::json j = nlohmann::json::parse(tools::prediction_json(mc.shape, h, models, rows).dump());
    CHECK(j["p"] == p);
    REQUIRE(rows.size() == (colls.size() - 1) * sizes.size() + 1);  // barrier: one row
    REQUIRE(j["rows"].size() == rows.size());
    std::size_t at = 0;
    for (collective c : colls)
      for (std::uint64_t bytes : c == collective::barrier ? std::vector<std::uint64_t>{0} : sizes) {
        CAPTURE(name(c));
        CAPTURE(bytes);
        const tools::prediction_row& r = rows[at];
        const nlohmann::json& jr = j["rows"][at++];
        CHECK(r.coll == c);
        CHECK(jr["coll"] == std::string(name(c)));
        CHECK(jr["bytes"] == bytes);
        call cl = independent_call(c, p, bytes);
        const algorithm* hier = registry::find(c, "hierarchical");
        REQUIRE(hier != nullptr);
        coll_args with = cl.args;
        with.hierarchy = &mine;
        const double expected = hier->cost(with, cl.type.size, mc.models[0]);
        CHECK(expected > 0);
        CHECK(r.hierarchical == doctest::Approx(expected).epsilon(1e-12));
        CHECK(jr["hierarchical"].get<double>() == doctest::Approx(expected).epsilon(1e-12));
        // Every flat one-ported algorithm with a cost, under the top model, and the best of them.
        std::size_t k = 0;
        double best = 0;
        std::string best_name;
        for (const algorithm* x : registry::for_collective(c)) {
          if (!x->one_ported || x->hierarchical || !x->cost || !meets_preconditions(*x, cl.args)) continue;
          REQUIRE(k < r.flat.size());
          CHECK(r.flat[k].algo == x->name);
          const double t = x->cost(cl.args, cl.type.size, mc.models[0]);
          CHECK(r.flat[k].seconds == doctest::Approx(t).epsilon(1e-12));
          CHECK(jr["flat"][k]["seconds"].get<double>() == doctest::Approx(t).epsilon(1e-12));
          if (best_name.empty() || t < best) best = t, best_name = x->name;
          ++k;
        }
        CHECK(k == r.flat.size());
        CHECK(k > 0);
        CHECK(r.best_flat.algo == best_name);
        CHECK(jr["best_flat"]["algo"] == best_name);
        CHECK(jr["ratio"].get<double>() == doctest::Approx(best / expected).epsilon(1e-12));
        for (const auto& f : r.flat_pair_weighted) CHECK(r.best_flat_pair_weighted.seconds <= f.seconds);
      }
  }
}

TEST_CASE("predict: the pair-weighted model weighs each link by its share of a rank's partners") {
  const rank_hierarchy h = tools::predicted_hierarchy("2x32", models_of({cross_package, package}));
  // Of a rank's 63 partners, 32 are in the other package and 31 in its own.
  const cost_model w = tools::pair_weighted_model(h);
  CHECK(w.alpha == doctest::Approx((32 * cross_package.alpha + 31 * package.alpha) / 63));
  CHECK(w.beta == doctest::Approx((32 * cross_package.beta + 31 * package.beta) / 63));
  CHECK(w.gamma == doctest::Approx(2.1e-11));
  // Three levels: 12 ranks in 2 nodes of 2 packages of 3; partners 6 across nodes, 3 across
  // packages of the node, 2 inside the package.
  const rank_hierarchy h3 = tools::predicted_hierarchy("2x2x3", models_of({network, cross_package, package}));
  CHECK(tools::pair_weighted_model(h3).alpha ==
        doctest::Approx((6 * network.alpha + 3 * cross_package.alpha + 2 * package.alpha) / 11));
}

TEST_CASE("predict: models go outermost first, one per factor of the shape") {
  const rank_hierarchy h = tools::predicted_hierarchy("16x32", models_of({network, package}));
  CHECK(h.size() == 512);
  CHECK(h.top_cost.alpha == network.alpha);
  CHECK(h.levels[0].cost.beta == package.beta);
  // Without models: the library's defaults, as from_shape makes them.
  const rank_hierarchy d = tools::predicted_hierarchy("2x3", {});
  CHECK(d.levels[0].cost.alpha == rank_hierarchy::from_shape(std::string_view("2x3")).levels[0].cost.alpha);
  CHECK_THROWS_WITH_AS(tools::predicted_hierarchy("2x32", models_of({network})),
                       "shape 2x32 has 2 links (between its outermost domains, then inside each level's domains), "
                       "so 2 models, outermost first; got 1",
                       std::invalid_argument);
  CHECK_THROWS_AS(tools::predicted_hierarchy("2x", {}), usage_error);
  CHECK_THROWS_AS(tools::predicted_hierarchy("0x4", {}), usage_error);
  CHECK_THROWS_WITH_AS(tools::predict(h, {collective::scan}, {8}), "scan has no hierarchical algorithm",
                       std::invalid_argument);
}

TEST_CASE("predict: --level NAME=alpha,beta,gamma or NAME=shipped") {
  const level_model m = tools::parse_level_model("network=1.5e-6,8.3e-11,2.1e-11");
  CHECK(m.name == "network");
  CHECK(m.cost.alpha == 1.5e-6);
  CHECK(m.cost.beta == 8.3e-11);
  CHECK(m.cost.gamma == 2.1e-11);
  CHECK(m.source == "given");
  const level_model s = tools::parse_level_model("package=shipped");
  CHECK(s.source == "shipped");
  CHECK(s.cost.alpha == shipped_selection().model.alpha);
  CHECK(s.cost.beta == shipped_selection().model.beta);
  CHECK_THROWS_WITH_AS(tools::parse_level_model("1e-6,1e-10,0"),
                       "expected NAME=alpha,beta,gamma (seconds, s/B, s/B) or NAME=shipped", std::invalid_argument);
  CHECK_THROWS_WITH_AS(tools::parse_level_model("net=1e-6,1e-10"),
                       "level 'net': '1e-6,1e-10' is not three numbers alpha,beta,gamma (seconds, s/B, s/B) or "
                       "'shipped'",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(tools::parse_level_model("net=1e-6,,1e-10,0"),
                       "level 'net': '1e-6,,1e-10,0' is not three numbers alpha,beta,gamma (seconds, s/B, s/B) or "
                       "'shipped'",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(tools::parse_level_model("net=1e-6,-1e-10,0"), "beta -1e-10 is negative (level 'net')",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(tools::parse_level_model("net=1us,1e-10,0"), "alpha '1us' is not a number (level 'net')",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(tools::parse_level_model("net=nan,1e-10,0"), "alpha 'nan' is not a number (level 'net')",
                       std::invalid_argument);
}

TEST_CASE("predict: --level NAME=measured:LEVEL takes a level of a level-cost file") {
  level_costs file;
  file.source = "levels.json";
  file.levels.push_back({"machine", cost_model{1.9e-7, 8.7e-11, 7.9e-11}});
  file.levels.push_back({"process", cost_model{1.1e-6, 9.1e-11, 7.1e-10}});
  const level_model m = tools::parse_level_model("package=measured:machine", &file);
  CHECK(m.source == "measured");
  CHECK(m.origin == "levels.json level machine");
  CHECK(m.cost.alpha == 1.9e-7);
  CHECK(m.cost.gamma == 7.9e-11);
  CHECK_THROWS_WITH_AS(tools::parse_level_model("package=measured:numa", &file),
                       "level 'package': levels.json has no level 'numa' (it has machine, process)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(tools::parse_level_model("package=measured:machine"),
                       "level 'package': measured:machine needs --levels-file", std::invalid_argument);
}
