// The ranks of a comm as a hierarchy of domains (packages, NUMA nodes, caches, processes), for
// the hierarchical algorithms: registered algorithms whose schedules are compositions of
// other registered algorithms' schedules over the domains (docs/hierarchy.md). A hierarchy is
// data: coll_args::hierarchy points to one, the comm makes it from its topology, a test or
// the tools from a shape such as "2x3".
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ranklab/registry.hpp"

namespace ranklab {

struct hierarchy_level {
  std::string name;         // "package", "numa", "l3", "process", or "level<i>" of a shape
  std::vector<int> domain;  // domain[r]: rank r's domain at this level; equal numbers, same domain
  // What a message costs between two ranks in one domain of this level (and in different
  // domains of the next level in, if any): the level's own alpha, beta, gamma.
  cost_model cost;
};

// A phase's algorithm named instead of chosen by the cost model: at one level (its name, or
// "top" for the group of the outermost leaders) or at every level (empty), for one
// collective.
struct phase_choice {
  std::string level;
  collective coll = collective::barrier;
  std::string algorithm;
  friend bool operator==(const phase_choice&, const phase_choice&) = default;
};

struct rank_hierarchy {
  // Outermost first. Each level refines the one before: ranks in one domain of level l+1
  // are in one domain of level l (checked by validate()).
  std::vector<hierarchy_level> levels;
  // What a message between ranks of different outermost domains costs.
  cost_model top_cost;
  // Phase algorithms named (the first that matches a phase wins); every other phase runs the
  // cheapest one-ported algorithm under its level's cost model. A comm's hierarchy takes
  // them from RANKLAB_HIERARCHY_ALGORITHMS.
  std::vector<phase_choice> choices;
  // The level-cost file (level_costs::source) the levels' costs and top_cost were taken
  // from; empty: the default costs. "auto" weighs hierarchical against flat only then.
  std::string costs_from;

  int size() const { return levels.empty() ? 0 : static_cast<int>(levels.front().domain.size()); }
  // Throws usage_error unless every level has one entry per rank and refines the previous.
  void validate(int p) const;
  // "package:2 numa:3" style, for logs and errors.
  std::string describe() const;

  // A hierarchy of nested equal domains, outermost first: {2, 3} is 2 domains of 3 ranks
  // (p = 6), {3, 1, 2} is 3 of 1 of 2. Ranks are numbered domain by domain (rank r is in
  // outermost domain r / (p / shape[0]) ...). Level costs: the default cost_model, each level
  // in cheaper by half in alpha and beta.
  static rank_hierarchy from_shape(std::span<const int> shape);
  // "2x3", "3x1x2".
  static rank_hierarchy from_shape(std::string_view shape);
  // One level from a domain number per rank (uneven domains, any numbering).
  static rank_hierarchy from_domains(std::span<const int> domain, std::string name = "domain");
  // "numa:reduce=knomial,top:allreduce=ring,bcast=binomial": entries [level:]coll=algorithm,
  // separated by commas. Throws usage_error naming the entry for an unknown collective, an
  // algorithm not registered for it, or one that cannot be a phase (hierarchical, or not
  // one-ported).
  static std::vector<phase_choice> parse_choices(std::string_view text);
};

// ---- measured level costs ------------------------------------------------------------------
// What `ranklab tune --levels` fits on a machine: per level, the alpha, beta, gamma of a
// message between two ranks in one domain of the level and in different domains of the next
// level in that splits it (docs/hierarchy.md). A file:
//
//   {"format": "ranklab-level-costs", "version": 1,
//    "machine": {...},                      // free-form: where and when it was measured
//    "levels": [{"name": "machine", "alpha": 2.1e-7, "beta": 9.8e-11, "gamma": 3.9e-11,
//                "min_bytes": 0, "max_bytes": 4194304, "load_average": "0.21 0.30 0.35",
//                "cores": [0, 1], "max_relative_error": 0.18, "note": "..."}, ...]}
//
// Names: "process" (two MPI processes of one node), "machine" (cores of one machine),
// "package", "numa", "l3"; each at most once, "machine" required. Only name, alpha, beta and
// gamma are required; the times are seconds, non-negative and finite.
inline constexpr int level_costs_format_version = 1;

struct level_cost {
  std::string name;
  cost_model cost;
  std::uint64_t min_bytes = 0, max_bytes = 0;  // the message sizes the fit spans (0, 0: not said)
  std::string load_average;                    // "1 5 15"-minute load when measured ("": not said)
  std::vector<int> cores;                      // the two cores measured ("process": none)
  double max_relative_error = 0;               // of the alpha-beta line over its sizes
  std::string note;
};

struct level_costs {
  std::string source;  // the file read, or "" for none
  std::string machine_json = "{}";
  std::vector<level_cost> levels;  // in the order process, machine, package, numa, l3
  const level_cost* find(std::string_view name) const;  // nullptr when not measured
  // Levels between cores (all but "process"): "auto" weighs a hierarchy only with two or more.
  int core_levels() const;
};

// Errors are usage_error naming `origin` (the file) and the problem: JSON syntax, the format,
// an unknown or repeated level, a missing or mistyped key, a negative or non-finite time.
level_costs parse_level_costs(std::string_view json_text, const std::string& origin);
level_costs read_level_costs(const std::string& path);
std::string to_json(const level_costs& c);  // parse_level_costs reads it back unchanged
void write_level_costs(const level_costs& c, const std::string& path);

// The level costs a comm takes when it makes its hierarchy (its first hierarchical call, or
// the first "auto" call that weighs one): those installed by use_level_costs, else the file
// named by RANKLAB_LEVEL_COSTS (read at first use; a bad file is a usage_error naming it),
// else none (default costs). A comm keeps the costs it made its hierarchy with.
void use_level_costs(level_costs c);
void reset_level_costs();  // forgets them: the next use reads RANKLAB_LEVEL_COSTS again
std::shared_ptr<const level_costs> current_level_costs();

}  // namespace ranklab
