// Thread placement with hwloc. The topology is loaded once per process (it takes
// milliseconds) and shared read-only by all teams.
#include <hwloc.h>

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "detail/team_state.hpp"

namespace ranklab {

namespace {

class topology {
 public:
  static topology& get() {
    static topology t;
    return t;
  }
  hwloc_topology_t handle() const { return topo_; }
  int cores() const { return std::max(1, hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_CORE)); }
  int pus() const { return std::max(1, hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_PU)); }
  int numa_nodes() const { return std::max(1, hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE)); }
  int packages() const { return std::max(1, hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_PACKAGE)); }
  std::mutex& mutex() { return mutex_; }

 private:
  topology() {
    hwloc_topology_init(&topo_);
    hwloc_topology_load(topo_);
  }
  ~topology() { hwloc_topology_destroy(topo_); }
  hwloc_topology_t topo_{};
  std::mutex mutex_;
};

std::string cpuset_text(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  hwloc_bitmap_list_asprintf(&text, set);
  std::string s = text ? text : "";
  std::free(text);
  return s;
}

}  // namespace

machine_info machine() {
  topology& t = topology::get();
  machine_info m;
  m.cores = t.cores();
  m.hardware_threads = t.pus();
  m.numa_nodes = t.numa_nodes();
  m.description = fmt::format("{} package(s), {} NUMA node(s), {} cores, {} hardware threads", t.packages(),
                              m.numa_nodes, m.cores, m.hardware_threads);
  return m;
}

namespace detail {

binding_info bind_this_thread(int rank, int p, binding_policy policy) {
  topology& t = topology::get();
  binding_info info{rank, binding_policy::none, -1, "", ""};
  const int cores = t.cores();
  if (policy == binding_policy::automatic) {
    if (p > cores) {
      info.note = fmt::format("oversubscribed ({} ranks, {} cores): left to the OS scheduler", p, cores);
      return info;
    }
    policy = binding_policy::compact;
  }
  if (policy == binding_policy::none) {
    info.note = "binding disabled";
    return info;
  }
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  int core = -1;
  if (policy == binding_policy::compact) {
    core = rank % cores;
    hwloc_obj_t obj = hwloc_get_obj_by_type(t.handle(), HWLOC_OBJ_CORE, static_cast<unsigned>(core));
    if (obj) hwloc_bitmap_copy(set, obj->cpuset);
  } else {  // spread: hwloc_distrib places p items as far apart as the tree allows
    // hwloc_distrib allocates the p sets itself (hwloc_bitmap_dup); we free them.
    std::vector<hwloc_bitmap_t> sets(static_cast<std::size_t>(p), nullptr);
    hwloc_obj_t root = hwloc_get_root_obj(t.handle());
    hwloc_distrib(t.handle(), &root, 1, sets.data(), static_cast<unsigned>(p), INT_MAX, 0);
    hwloc_bitmap_copy(set, sets[static_cast<std::size_t>(rank)]);
    for (auto& s : sets) hwloc_bitmap_free(s);
    hwloc_obj_t obj = hwloc_get_next_obj_covering_cpuset_by_type(t.handle(), set, HWLOC_OBJ_CORE, nullptr);
    if (obj) core = static_cast<int>(obj->logical_index);
  }
  hwloc_bitmap_singlify(set);  // one hardware thread: no migration between siblings
  if (hwloc_set_cpubind(t.handle(), set, HWLOC_CPUBIND_THREAD) == 0) {
    info.policy = policy;
    info.core = core;
    info.cpuset = cpuset_text(set);
  } else {
    info.note = fmt::format("hwloc_set_cpubind failed: {}", std::strerror(errno));
  }
  hwloc_bitmap_free(set);
  return info;
}

std::vector<worker_placement> worker_placements(int workers, binding_policy policy) {
  topology& t = topology::get();
  const int cores = t.cores();
  std::vector<worker_placement> out;
  for (int w = 0; w < workers; ++w) {
    worker_placement place;
    place.binding.policy = binding_policy::none;
    if (policy == binding_policy::none) {
      place.binding.note = fmt::format("fiber on worker {}, binding disabled", w);
    } else if (hwloc_obj_t core = hwloc_get_obj_by_type(t.handle(), HWLOC_OBJ_CORE, static_cast<unsigned>(w % cores));
               core && core->cpuset) {
      // The core's first hardware thread, as compact binding pins a rank thread.
      hwloc_bitmap_t set = hwloc_bitmap_dup(core->cpuset);
      hwloc_bitmap_singlify(set);
      place.os_cpu = hwloc_bitmap_first(set);
      place.binding.policy = binding_policy::compact;
      place.binding.core = w % cores;
      place.binding.cpuset = cpuset_text(set);
      place.binding.note = fmt::format("fiber on worker {}", w);
      hwloc_bitmap_free(set);
    }
    out.push_back(place);
  }
  return out;
}

}  // namespace detail
}  // namespace ranklab
