// The ranks of a comm as a hierarchy of domains (packages, NUMA nodes, caches, processes), for
// the hierarchical algorithms: registered algorithms whose schedules are compositions of
// other registered algorithms' schedules over the domains (docs/hierarchy.md). A hierarchy is
// data: coll_args::hierarchy points to one, the comm makes it from its topology, a test or
// the tools from a shape such as "2x3".
#pragma once
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

}  // namespace ranklab
