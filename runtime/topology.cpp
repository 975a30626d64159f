// Hardware domains for comm::split_type: which core, L3 cache, NUMA node and package each
// core of the machine belongs to, from hwloc, for this machine or for a synthetic one
// (team_options::topology). Loaded once per description and shared read-only.
#include "detail/topology.hpp"

#include <hwloc.h>

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>

#include "ranklab/errors.hpp"
#include "ranklab/team.hpp"

namespace ranklab {

std::string_view name(domain d) {
  switch (d) {
    case domain::core:
      return "core";
    case domain::l3:
      return "l3";
    case domain::numa:
      return "numa";
    case domain::package:
      return "package";
    case domain::machine:
      return "machine";
  }
  return "?";
}

domain domain_from_name(std::string_view n) {
  for (auto d : {domain::core, domain::l3, domain::numa, domain::package, domain::machine})
    if (name(d) == n) return d;
  throw usage_error(no_rank, "domain", fmt::format("unknown domain '{}' (core, l3, numa, package, machine)", n));
}

namespace detail {

namespace {

// The index of the object of `type` holding core c: an ancestor (L3, package), or for NUMA
// nodes (which hwloc 2 attaches beside the cores, not above them) the first whose cpuset
// covers the core's. A machine without such objects is one domain of that kind.
int holder_index(hwloc_topology_t t, hwloc_obj_t core, hwloc_obj_type_t type) {
  if (type == HWLOC_OBJ_NUMANODE) {
    const int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < n; ++i)
      if (hwloc_bitmap_isincluded(core->cpuset, hwloc_get_obj_by_type(t, type, static_cast<unsigned>(i))->cpuset))
        return i;
    return 0;
  }
  hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(t, type, core);
  return a ? static_cast<int>(a->logical_index) : 0;
}

domain_table load(const std::string& synthetic) {
  hwloc_topology_t t{};
  hwloc_topology_init(&t);
  struct destroy {
    hwloc_topology_t& t;
    ~destroy() { hwloc_topology_destroy(t); }
  } guard{t};
  if (!synthetic.empty()) {
    // hwloc's synthetic descriptions end at the PU level; one PU per core unless given.
    const std::string text = synthetic.find("pu:") == std::string::npos && synthetic.find("PU:") == std::string::npos
                                 ? synthetic + " pu:1"
                                 : synthetic;
    if (hwloc_topology_set_synthetic(t, text.c_str()) != 0)
      throw usage_error(no_rank, "topology",
                        fmt::format("'{}' is not an hwloc synthetic topology (e.g. \"package:2 numa:2 core:4\": "
                                    "levels package, numa, l3, core, pu, each with a count)",
                                    synthetic));
  }
  hwloc_topology_load(t);
  domain_table d;
  d.cores = std::max(1, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE));
  d.of_core.resize(static_cast<std::size_t>(d.cores));
  for (int c = 0; c < d.cores; ++c) {
    hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, static_cast<unsigned>(c));
    auto& row = d.of_core[static_cast<std::size_t>(c)];
    row[static_cast<int>(domain::core)] = c;
    row[static_cast<int>(domain::l3)] = core ? holder_index(t, core, HWLOC_OBJ_L3CACHE) : 0;
    row[static_cast<int>(domain::numa)] = core ? holder_index(t, core, HWLOC_OBJ_NUMANODE) : 0;
    row[static_cast<int>(domain::package)] = core ? holder_index(t, core, HWLOC_OBJ_PACKAGE) : 0;
    row[static_cast<int>(domain::machine)] = 0;
  }
  for (const auto& row : d.of_core)
    for (std::size_t k = 0; k < row.size(); ++k) d.counts[k] = std::max(d.counts[k], row[k] + 1);
  return d;
}

}  // namespace

const domain_table& domains_for(const std::string& synthetic) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<domain_table>> tables;
  std::lock_guard lock(mutex);
  auto& slot = tables[synthetic];
  if (!slot) slot = std::make_unique<domain_table>(load(synthetic));
  return *slot;
}

}  // namespace detail

int domain_count(domain d) { return detail::domains_for({}).counts[static_cast<std::size_t>(d)]; }

int current_domain(domain d) {
  // A topology of its own for the lookup (the domain table keeps none): loaded once.
  static const hwloc_topology_t topology = [] {
    hwloc_topology_t t{};
    hwloc_topology_init(&t);
    hwloc_topology_load(t);
    return t;
  }();
  const detail::domain_table& table = detail::domains_for({});
  hwloc_bitmap_t where = hwloc_bitmap_alloc();
  int core = 0;
  if (hwloc_get_last_cpu_location(topology, where, HWLOC_CPUBIND_THREAD) == 0)
    if (hwloc_obj_t obj = hwloc_get_next_obj_covering_cpuset_by_type(topology, where, HWLOC_OBJ_CORE, nullptr))
      core = static_cast<int>(obj->logical_index);
  hwloc_bitmap_free(where);
  if (core >= table.cores) core = 0;
  return table.of_core[static_cast<std::size_t>(core)][static_cast<std::size_t>(d)];
}

}  // namespace ranklab
