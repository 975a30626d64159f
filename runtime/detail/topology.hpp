// The hardware domains of each core (runtime/topology.cpp), for comm::split_type.
#pragma once
#include <array>
#include <string>
#include <vector>

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

}  // namespace ranklab::detail
