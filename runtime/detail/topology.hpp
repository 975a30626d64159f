// The hardware domains of each core (runtime/topology.cpp), for comm::split_type.
#pragma once
#include <array>
#include <string>
#include <vector>

namespace ranklab {
struct rank_hierarchy;  // ranklab/hierarchy.hpp
}  // namespace ranklab

namespace ranklab::detail {

struct domain_table {
  int cores = 1;
  // [core][domain]: the index of the domain of each kind (ranklab::domain) holding the core.
  std::vector<std::array<int, 5>> of_core;
  std::array<int, 5> counts{1, 1, 1, 1, 1};  // domains of each kind
};

// This machine's (empty description) or a synthetic topology's; throws usage_error for a
// description hwloc does not take.
const domain_table& domains_for(const std::string& synthetic);

struct team_state;
// The domains of the ranks of comm `t` (its team's topology: the machine's or the synthetic
// one; team rank r counted on core r mod cores, as compact binding places it), as levels
// package, NUMA node, L3 cache, outermost first, for the hierarchical
// algorithms; a level that splits the ranks no further than the level out (or not at
// all), or that does not nest in it, is left out. nullptr when no level is left (one
// domain holds every rank). Made once per comm (comm_split.cpp).
const rank_hierarchy* hierarchy_of(team_state& t);

}  // namespace ranklab::detail
