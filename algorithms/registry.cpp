#include "ranklab/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include <dlfcn.h>
#include <link.h>

#include "ranklab/errors.hpp"
#include "selection_table.hpp"

namespace ranklab {

namespace {

// ---- the entries ------------------------------------------------------------------------
// Readers (every collective call resolves its algorithm by name) never lock: they read an
// immutable sorted snapshot through an atomic pointer. A writer (a registration, a plugin
// load) builds the next snapshot under writer_mutex and publishes it; old snapshots are kept,
// since a reader may still be walking one. Registrations are few (about a hundred entries in
// all), so what is kept is small. Nothing here is ever freed: a reader called from another
// library's exit-time destructor still finds the registry.
using entry_list = std::vector<const algorithm*>;

struct registry_state {
  std::mutex writer_mutex;
  std::deque<algorithm> entries;  // a deque: the pointers handed out stay valid
  std::deque<entry_list> snapshots{entry_list{}};
  std::atomic<const entry_list*> current{&snapshots.front()};

  // Plugins. load_mutex serialises load_plugin; recursive, since a plugin's initialiser may
  // itself read the registry (which loads RANKLAB_PLUGINS) or load a plugin. It is never
  // taken by registry::add, so a library that another thread dlopens directly, and which
  // registers while it holds the loader's lock, cannot deadlock with a load_plugin.
  std::recursive_mutex load_mutex;
  std::map<void*, entry_list> loaded;         // by dlopen handle: the same file twice is one
  std::map<std::string, std::string> failed;  // by path as given: the reason, for a repeat
  std::atomic<bool> environment_done{false};
  bool environment_started = false;  // under load_mutex
  std::string environment_error;     // written before environment_done is set
};

registry_state& state() {
  static registry_state* s = new registry_state;  // never destroyed, see above
  return *s;
}

const entry_list& committed() { return *state().current.load(std::memory_order_acquire); }

bool ordered(const algorithm* x, const algorithm* y) {
  return x->coll != y->coll ? x->coll < y->coll : x->name < y->name;
}

// Appends copies of `declared` (one per collective, `coll` set) and publishes the next
// snapshot. The caller holds writer_mutex and has checked the declarations.
entry_list publish(registry_state& st, const std::vector<algorithm>& declared) {
  entry_list next = *st.current.load(std::memory_order_relaxed);
  entry_list added;
  for (const algorithm& a : declared) added.push_back(&st.entries.emplace_back(a));
  next.insert(next.end(), added.begin(), added.end());
  std::sort(next.begin(), next.end(), ordered);
  st.current.store(&st.snapshots.emplace_back(std::move(next)), std::memory_order_release);
  return added;
}

// ---- checking a declaration ---------------------------------------------------------------
bool name_character(char ch) {
  const auto u = static_cast<unsigned char>(ch);
  return std::isalnum(u) || ch == '_' || ch == '.' || ch == ':' || ch == '-';
}

// The file that holds an entry's builder, for "registered twice" (which library did first).
std::string defined_in(const algorithm& a) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(a.build), &info) == 0 || info.dli_fname == nullptr ||
      *info.dli_fname == '\0')
    return "the program";
  return info.dli_fname;
}

// Why `a` cannot be registered, or "" when it can. Only the declaration itself.
std::string declaration_problem(const algorithm& a) {
  if (a.name.empty()) return "an algorithm needs a name (.name is empty)";
  if (!std::all_of(a.name.begin(), a.name.end(), name_character) ||
      !std::isalnum(static_cast<unsigned char>(a.name.front())))
    return fmt::format(
        "algorithm name '{}': only letters, digits and _ . : - are allowed, starting with a letter or a digit "
        "(the name is given as --algo NAME and RANKLAB_<COLL>_ALGORITHM=NAME)",
        a.name);
  if (a.name == "auto" || a.name == "all" || a.name == native_algorithm)
    return fmt::format(
        "algorithm name '{}' is reserved ('auto' asks for the library's choice, 'all' for every "
        "algorithm, 'native' for the MPI library's own collective in a selection table)",
        a.name);
  if (static_cast<int>(a.coll) >= collective_count)
    return fmt::format("algorithm '{}': .coll = {} is not a collective", a.name, static_cast<int>(a.coll));
  // `coll` keeps its default (barrier) when only `serves` is given; any other value must be one
  // of the collectives served, or the declaration says two different things.
  if (!a.serves.empty() && a.coll != collective::barrier && !a.serves.contains(a.coll))
    return fmt::format("algorithm '{}': .coll = {} is not among the collectives in .serves (give one of them)", a.name,
                       name(a.coll));
  if (a.build == nullptr) return fmt::format("algorithm '{}' has no builder (.build is nullptr)", a.name);
  return {};
}

// The entries `declared` makes, one per collective served, `coll` and `serves` set.
std::vector<algorithm> expand(const algorithm& declared) {
  const collective_set serves = declared.serves.empty() ? collective_set{declared.coll} : declared.serves;
  std::vector<algorithm> out;
  for (int i = 0; i < collective_count; ++i) {
    const auto c = static_cast<collective>(i);
    if (!serves.contains(c)) continue;
    algorithm& a = out.emplace_back(declared);
    a.coll = c;
    a.serves = serves;
  }
  return out;
}

// "" or why one of `entries` collides with a registered entry or an earlier one of `entries`.
std::string duplicate_problem(const std::vector<algorithm>& entries, const entry_list& registered) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const algorithm& a = entries[i];
    for (const algorithm* b : registered)
      if (b->coll == a.coll && b->name == a.name)
        return fmt::format("algorithm '{}' for {} registered twice (first by {})", a.name, name(a.coll),
                           defined_in(*b));
    for (std::size_t j = 0; j < i; ++j)
      if (entries[j].coll == a.coll && entries[j].name == a.name)
        return fmt::format("algorithm '{}' for {} registered twice (by the same library)", a.name, name(a.coll));
  }
  return {};
}

// ---- registrations made while load_plugin loads a library --------------------------------
// dlopen runs the library's static initialisers on the calling thread; an exception must not
// leave them (it would unwind through the dynamic loader). So while this thread loads a
// plugin, registry::add collects the entries and the first refusal here, and load_plugin
// commits the entries or reports the refusal after dlopen returns.
struct plugin_load {
  std::vector<algorithm> staged;
  std::string first_problem;
  int problems = 0;
};
thread_local plugin_load* loading = nullptr;

[[noreturn]] void refuse(const std::string& problem) { throw usage_error(no_rank, "registry::add", problem); }

}  // namespace

bool registry::add(const algorithm& declared) {
  std::string problem = declaration_problem(declared);
  std::vector<algorithm> entries;
  if (problem.empty()) {
    entries = expand(declared);
    if (loading != nullptr) {
      // Against the registry and what the library registered before this one.
      std::vector<algorithm> so_far = loading->staged;
      so_far.insert(so_far.end(), entries.begin(), entries.end());
      problem = duplicate_problem(so_far, committed());
    }
  }
  if (loading != nullptr) {
    if (!problem.empty()) {
      if (loading->problems++ == 0) loading->first_problem = problem;
      return false;
    }
    loading->staged.insert(loading->staged.end(), entries.begin(), entries.end());
    return true;
  }
  if (!problem.empty()) refuse(problem);
  registry_state& st = state();
  std::lock_guard lock(st.writer_mutex);
  if (std::string dup = duplicate_problem(entries, committed()); !dup.empty()) refuse(dup);
  publish(st, entries);
  return true;
}

namespace {

// Loads RANKLAB_PLUGINS on the first read of the registry, for every program; a failure
// stays the answer to every later read (a bad environment variable is not fixed by asking
// again). Cheap after the first time: one atomic load.
void load_environment_once() {
  registry_state& st = state();
  if (!st.environment_done.load(std::memory_order_acquire)) {
    std::lock_guard lock(st.load_mutex);
    if (!st.environment_done.load(std::memory_order_relaxed)) {
      // Started but not done, under the lock: this very thread is loading them and a
      // plugin's initialiser reads the registry. It sees what is registered so far.
      if (st.environment_started) return;
      st.environment_started = true;
      try {
        load_plugins_from_environment();
      } catch (const usage_error& e) {
        st.environment_error = e.cause();
      }
      st.environment_done.store(true, std::memory_order_release);
    }
  }
  if (!st.environment_error.empty()) throw usage_error(no_rank, "RANKLAB_PLUGINS", st.environment_error);
}

}  // namespace

std::vector<const algorithm*> registry::all() {
  load_environment_once();
  return committed();
}

std::vector<const algorithm*> registry::for_collective(collective c) {
  load_environment_once();
  std::vector<const algorithm*> out;
  for (const algorithm* a : committed())
    if (a->coll == c) out.push_back(a);
  return out;
}

const algorithm* registry::find(collective c, std::string_view n) {
  load_environment_once();
  for (const algorithm* a : committed())
    if (a->coll == c && a->name == n) return a;
  return nullptr;
}

// ---- plugins --------------------------------------------------------------------------------
namespace {

// The entries whose builder lives in the library `handle`: what a library that was already
// loaded (linked into the program, or dlopened by someone else) registered at its start.
entry_list registered_by(void* handle) {
  link_map* library = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &library) != 0) return {};
  entry_list out;
  for (const algorithm* a : committed()) {
    Dl_info info{};
    link_map* owner = nullptr;
    if (dladdr1(reinterpret_cast<const void*>(a->build), &info, reinterpret_cast<void**>(&owner), RTLD_DL_LINKMAP) !=
            0 &&
        owner == library)
      out.push_back(a);
  }
  return out;
}

// A library that loaded but cannot be a plugin. The reason is kept for the path: a library
// that cannot be unloaded would not run its initialisers again, and a second attempt would
// report "registers no algorithm" instead. (A library that did not load at all is tried
// again: the file may be there by then.)
[[noreturn]] void plugin_failure(registry_state& st, const std::string& path, const std::string& why) {
  st.failed.emplace(path, why);
  throw usage_error(no_rank, "plugin " + path, why);
}

// Commits what the library registered while it loaded; "" or why it cannot.
std::string commit(registry_state& st, const plugin_load& load, entry_list& added) {
  if (load.problems > 0)
    return load.problems == 1
               ? load.first_problem
               : fmt::format("{} (and {} more refused registrations)", load.first_problem, load.problems - 1);
  std::lock_guard lock(st.writer_mutex);
  // Checked again: another library may have registered the same name since.
  if (std::string dup = duplicate_problem(load.staged, committed()); !dup.empty()) return dup;
  added = publish(st, load.staged);
  return {};
}

// Restores the enclosing load (a plugin loading another from its initialiser) on every exit.
class loading_scope {
 public:
  explicit loading_scope(plugin_load& load) : previous_(loading) { loading = &load; }
  ~loading_scope() { loading = previous_; }
  loading_scope(const loading_scope&) = delete;
  loading_scope& operator=(const loading_scope&) = delete;

 private:
  plugin_load* previous_;
};

}  // namespace

std::vector<const algorithm*> load_plugin(std::string_view path_text) {
  registry_state& st = state();
  const std::string path(path_text);
  if (path.empty()) throw usage_error(no_rank, "plugin", "the path is empty");
  std::lock_guard lock(st.load_mutex);
  if (auto f = st.failed.find(path); f != st.failed.end()) throw usage_error(no_rank, "plugin " + path, f->second);
  plugin_load load;
  void* handle = nullptr;
  {
    const loading_scope scope(load);
    // RTLD_NOW: a symbol the library lacks is an error here, naming it, not a crash in the
    // middle of a collective. RTLD_LOCAL: its symbols stay its own, so two plugins that both
    // define a helper `build` do not bind to each other's; a plugin needs only ranklab's
    // symbols, which it reaches through its own dependency on libranklab (or the program).
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (handle == nullptr) {
    const char* why = dlerror();
    throw usage_error(no_rank, "plugin " + path,
                      fmt::format("cannot load: {}", why != nullptr ? why : "unknown reason"));
  }
  if (auto known = st.loaded.find(handle); known != st.loaded.end()) {
    dlclose(handle);  // drops the reference this dlopen added
    return known->second;
  }
  entry_list added;
  if (load.staged.empty() && load.problems == 0) {
    added = registered_by(handle);  // loaded before: its initialisers ran at its first load
  } else if (std::string problem = commit(st, load, added); !problem.empty()) {
    dlclose(handle);  // nothing of it is registered, so nothing points into it
    plugin_failure(st, path, problem);
  }
  if (added.empty()) {
    dlclose(handle);
    plugin_failure(st, path,
                   "registers no algorithm (a plugin's sources register theirs with RANKLAB_REGISTER_ALGORITHM)");
  }
  st.loaded.emplace(handle, added);
  return added;
}

std::vector<const algorithm*> load_plugins_from_environment() {
  const char* list = std::getenv("RANKLAB_PLUGINS");
  if (list == nullptr) return {};
  std::vector<const algorithm*> added;
  std::string_view rest(list);
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view path = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    if (path.empty()) continue;
    try {
      const auto more = load_plugin(path);
      added.insert(added.end(), more.begin(), more.end());
    } catch (const usage_error& e) {
      throw usage_error(no_rank, "RANKLAB_PLUGINS", e.what());
    }
  }
  return added;
}

bool meets_preconditions(const algorithm& a, const coll_args& args) {
  if (a.needs_commutative && !args.commutative) return false;
  if (a.needs_power_of_two && !std::has_single_bit(static_cast<unsigned>(args.p))) return false;
  if (a.only_p > 0 && args.p != a.only_p) return false;
  if (a.payload_bytes && a.payload_bytes(args) > fence_payload_capacity(args.p)) return false;
  if (args.params.fixed_order && is_reduction(args.coll) && !a.fixed_order) return false;
  return true;
}

std::string unmet_precondition(const algorithm& a, const coll_args& args) {
  if (a.needs_commutative && !args.commutative) return "needs a commutative operator";
  if (args.params.fixed_order && is_reduction(args.coll) && !a.fixed_order)
    return "does not guarantee the left fold in rank order that a fixed-order call (algo_params::fixed_order, "
           "RANKLAB_REPRODUCIBLE=1) asks for";
  if (a.needs_power_of_two && !std::has_single_bit(static_cast<unsigned>(args.p)))
    return fmt::format("needs p to be a power of two (p = {})", args.p);
  if (a.only_p > 0 && args.p != a.only_p) return fmt::format("takes exactly {} ranks (p = {})", a.only_p, args.p);
  if (a.payload_bytes && a.payload_bytes(args) > fence_payload_capacity(args.p))
    return fmt::format("carries at most {} bytes per rank with its fence at p = {}, this call {}",
                       fence_payload_capacity(args.p), args.p, a.payload_bytes(args));
  return {};
}

void check_preconditions(const algorithm& a, const coll_args& args) {
  if (meets_preconditions(a, args)) return;
  std::string alternatives;
  for (const algorithm* b : registry::for_collective(a.coll))
    if (meets_preconditions(*b, args)) alternatives += (alternatives.empty() ? "" : ", ") + std::string(b->name);
  const std::string why = unmet_precondition(a, args);
  throw usage_error(no_rank, std::string(name(a.coll)),
                    fmt::format("algorithm '{}' {}; algorithms that accept this call: {}", a.name, why,
                                alternatives.empty() ? "none" : alternatives));
}

namespace {
std::string env_name(collective c) {
  std::string s = "RANKLAB_";
  for (char ch : name(c)) s += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s + "_ALGORITHM";
}

// A fixed-order call's "auto": the selection table knows nothing of the guarantee, so the
// choice is the cheapest, under the machine's cost model, of the algorithms that give it.
const algorithm* cheapest_fixed_order(const coll_args& args, std::size_t elem_size, std::string& why) {
  const cost_model& m = detail::calibrated_cost_model();
  const algorithm* best = nullptr;
  double best_cost = 0;
  for (const algorithm* a : registry::for_collective(args.coll)) {
    if (!a->fixed_order || !meets_preconditions(*a, args)) continue;
    const double t = a->cost ? a->cost(args, elem_size, m) : 1e300;
    if (!best || t < best_cost) best = a, best_cost = t;
  }
  if (!best)
    throw usage_error(no_rank, std::string(name(args.coll)),
                      "a fixed-order call, and no registered algorithm guarantees the left fold in rank order for it");
  why = "fixed order: the cheapest algorithm that guarantees the left fold in rank order";
  return best;
}

const algorithm& require(collective c, std::string_view n, const char* origin) {
  if (const algorithm* a = registry::find(c, n)) return *a;
  std::string known;
  for (const algorithm* b : registry::for_collective(c)) known += (known.empty() ? "" : ", ") + std::string(b->name);
  throw usage_error(no_rank, std::string(name(c)),
                    fmt::format("unknown algorithm '{}' ({}); known: {}", n, origin, known));
}
}  // namespace

const algorithm& select_algorithm(const coll_args& args, std::size_t elem_size, std::string_view requested,
                                  std::string* reason) {
  const algorithm* chosen = nullptr;
  std::string why;
  if (requested != "auto" && !requested.empty()) {
    chosen = &require(args.coll, requested, "requested by the caller");
    why = "requested by the caller";
  } else if (const char* env = std::getenv(env_name(args.coll).c_str()); env && *env) {
    chosen = &require(args.coll, env, env_name(args.coll).c_str());
    why = "set by " + env_name(args.coll);
  } else if (args.params.fixed_order && is_reduction(args.coll)) {
    chosen = cheapest_fixed_order(args, elem_size, why);
  } else {
    chosen = detail::select_from_table(args, elem_size, why);
  }
  if (chosen == nullptr) throw usage_error(no_rank, std::string(name(args.coll)), "no algorithm registered");
  check_preconditions(*chosen, args);
  if (std::getenv("RANKLAB_LOG_SELECTION"))
    std::fprintf(stderr, "ranklab: %s -> %s (%s)\n", describe(args).c_str(), std::string(chosen->name).c_str(),
                 why.c_str());
  if (reason) *reason = std::move(why);
  return *chosen;
}

schedule_set build_all(const algorithm& a, const coll_args& args) {
  validate(args);
  check_preconditions(a, args);
  schedule_set set;
  set.reserve(static_cast<std::size_t>(args.p));
  for (int r = 0; r < args.p; ++r) set.push_back(a.build(args, r));
  return set;
}

}  // namespace ranklab
