// `ranklab predict` (predict.cpp): what the cost model says a collective costs on a machine
// larger than this one, hierarchical against flat, without running anything. The pure
// parts are here so that tests/test_predict.cpp checks them against the registry's cost
// functions called directly.
//
// The model (docs/performance.md, "Predicted: hierarchical vs flat on bigger machines"):
// one-ported rounds, each message alpha + beta*m, each reduced byte gamma, every term with
// the cost model of the link it crosses. The hierarchical algorithm is costed by its own
// registry cost function on the shape's hierarchy, each phase under its level's model.
// A flat algorithm has messages crossing the slowest link in nearly every round (a ring's
// or a recursive doubling's rounds are as slow as their slowest message), so it is costed
// under the top model, that of the link between the outermost domains; as a second,
// kinder figure, under the pair-weighted model (each level's model weighted by the share
// of rank pairs whose nearest common domain is that level: what a random partner costs).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ranklab/collective.hpp"
#include "ranklab/hierarchy.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::tools {

// One --level: NAME=alpha,beta,gamma, NAME=shipped (the shipped selection table's whole-range
// fit, data/selection/default.json's cost_model) or NAME=measured:LEVEL (level LEVEL of a
// level-cost file, ranklab/hierarchy.hpp's level_costs, as `ranklab tune --levels` writes it).
struct level_model {
  std::string name;  // a label only ("network", "package")
  cost_model cost;
  std::string source;  // "given", "shipped" or "measured"
  std::string origin;  // shipped, measured: where the figures were read from
};

// "package=6.8e-8,6.6e-11,2.1e-11", "package=shipped", "package=measured:machine" (with
// `file`). Throws std::invalid_argument with a message saying what is wrong (no '=', not three
// numbers, a negative or non-finite one, measured: without a file or a level it lacks).
level_model parse_level_model(std::string_view text, const level_costs* file = nullptr);

// The hierarchy of `shape` (rank_hierarchy::from_shape) with the models put in, outermost
// first: models[0] is top_cost (a message between the outermost domains), models[i] the
// cost inside a domain of level i-1. A shape of k factors has k such links (its innermost
// level's domains are single ranks), so k models, or none (the library's defaults, each level
// in halving alpha and beta). Throws std::invalid_argument for another number of models;
// rank_hierarchy::from_shape's usage_error for a bad shape.
rank_hierarchy predicted_hierarchy(std::string_view shape, const std::vector<level_model>& models);

// The pair-weighted model of `h` (see above).
cost_model pair_weighted_model(const rank_hierarchy& h);

struct algorithm_prediction {
  std::string algo;
  double seconds = 0;
};

struct prediction_row {
  collective coll = collective::barrier;
  std::uint64_t bytes = 0;  // per rank, as `ranklab bench` means it (bench/workload.hpp)
  double hierarchical = 0;  // seconds: the registered `hierarchical` algorithm's cost
  // Every one-ported, non-hierarchical algorithm with a cost model that accepts the call,
  // in registry order, under the top model and under the pair-weighted one.
  std::vector<algorithm_prediction> flat, flat_pair_weighted;
  algorithm_prediction best_flat, best_flat_pair_weighted;
  double ratio() const { return hierarchical > 0 ? best_flat.seconds / hierarchical : 0; }
  double ratio_pair_weighted() const { return hierarchical > 0 ? best_flat_pair_weighted.seconds / hierarchical : 0; }
};

// The collectives with a registered `hierarchical` algorithm (what --coll all means).
std::vector<collective> predictable_collectives();

// One row per (collective, size), collectives outermost, in the order given; barrier has
// one row of 0 bytes. Each collective must have a registered `hierarchical` algorithm
// (std::invalid_argument naming it otherwise).
std::vector<prediction_row> predict(const rank_hierarchy& h, const std::vector<collective>& colls,
                                    const std::vector<std::uint64_t>& sizes);

// The JSON of a prediction: {shape, p, model, levels[{link, name, source, alpha, beta,
// gamma}], flat_model, pair_weighted_model, rows[{coll, bytes, hierarchical, best_flat{algo,
// seconds}, ratio, best_flat_pair_weighted{algo, seconds}, ratio_pair_weighted, flat[...],
// flat_pair_weighted[...]}]}; seconds throughout.
nlohmann::ordered_json prediction_json(std::string_view shape, const rank_hierarchy& h,
                                       const std::vector<level_model>& models, const std::vector<prediction_row>& rows);

}  // namespace ranklab::tools
