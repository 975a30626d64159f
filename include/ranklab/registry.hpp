// The registry of algorithms: every schedule builder registers its name, collective,
// preconditions and cost, so tests, benchmarks and tools can loop over all of them and the
// choice of algorithm is data that can be printed and overridden.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ranklab/collective.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab {

// Linear cost model: a message of m bytes costs alpha + beta*m, reducing m bytes gamma*m.
struct cost_model {
  double alpha = 0.5e-6;   // seconds per message
  double beta = 1.0e-10;   // seconds per byte moved
  double gamma = 0.5e-10;  // seconds per byte reduced
};

// A set of collectives, for algorithms that serve several (one file, both layouts: a
// builder that reads its block layout from coll_args serves allgather and allgatherv alike).
class collective_set {
 public:
  constexpr collective_set() = default;
  constexpr collective_set(std::initializer_list<collective> cs) {
    for (collective c : cs) bits_ |= bit(c);
  }
  constexpr bool contains(collective c) const { return (bits_ & bit(c)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }

 private:
  static constexpr std::uint32_t bit(collective c) { return std::uint32_t{1} << static_cast<unsigned>(c); }
  std::uint32_t bits_ = 0;
};

// Not an algorithm: the name a selection table gives the MPI library's own collective
// (selection.hpp); reserved, like "auto" and "all".
inline constexpr std::string_view native_algorithm = "native";

struct algorithm {
  std::string_view name;
  // The collectives this algorithm implements, as its file declares them.
  collective_set serves;
  // The collective of one registry entry: registry::add makes one entry per collective in
  // `serves` and sets this. An algorithm declared with `coll` alone serves just that one.
  collective coll = collective::barrier;
  std::string_view summary;         // source, rounds, cost in one line
  bool needs_commutative = false;   // the operator must be commutative
  bool needs_power_of_two = false;  // p must be a power of two
  // > 0: the algorithm takes exactly this many ranks (the two-process specialisations that
  // Open MPI ships, only_p = 2); other p are refused as a precondition, not by the builder.
  int only_p = 0;
  bool one_ported = true;           // false: shared-memory direct, outside the model
  // Composes other registered algorithms' schedules over coll_args::hierarchy's domains
  // (ranklab/hierarchy.hpp); never itself a phase of such a composition.
  bool hierarchical = false;
  // Its reductions are, bit for bit, the left fold in rank order for any p and any count
  // (algo_params::fixed_order); checked by tests/test_fixed_order.cpp against a sequential fold.
  bool fixed_order = false;
  // Algorithms whose data travels in fence lines (schedule::fence_payload): the largest
  // payload a rank of the call carries, in bytes (args.elem_size each); calls above
  // fence_payload_capacity(p) are refused. nullptr: no such limit.
  std::uint64_t (*payload_bytes)(const coll_args& args) = nullptr;
  std::string_view composition;  // e.g. "scatter + allgather (improved broadcast)"
  schedule (*build)(const coll_args& args, int rank) = nullptr;
  // Predicted time in seconds for elements of elem_size bytes; nullptr if not modelled.
  double (*cost)(const coll_args& args, std::size_t elem_size, const cost_model& m) = nullptr;
};

class registry {
 public:
  // One entry per collective `a` serves; returns true, for static registration. With
  // `serves` empty the algorithm serves `coll` alone (barrier unless set).
  //
  // Throws usage_error, naming the algorithm and the problem, for a declaration that cannot
  // be called by name: an empty name; a name with characters other than letters, digits and
  // `_ . : -`, or not starting with a letter or digit (it is typed as `--algo NAME` and
  // `RANKLAB_<COLL>_ALGORITHM=NAME`); the reserved names `auto` and `all`; a `coll` that is
  // no collective, or that `serves` leaves out; no `build`; a name already registered for
  // one of its collectives.
  //
  // RANKLAB_REGISTER_ALGORITHM calls this from a static initialiser, where an exception
  // ends the program (std::terminate prints the message) before main: a bad declaration
  // in a program shows at its first start. In a library that load_plugin loads, the error
  // is load_plugin's instead, and none of that library's algorithms is registered.
  static bool add(const algorithm& a);
  // The readers. The first call of any of them in a process loads the plugins named by
  // RANKLAB_PLUGINS (load_plugins_from_environment), so that every program picks them up;
  // when one of those fails, every call throws its usage_error.
  static std::vector<const algorithm*> all();  // sorted by collective, then name
  static std::vector<const algorithm*> for_collective(collective c);
  static const algorithm* find(collective c, std::string_view name);
};

// Loads a shared library whose static initialisers register algorithms (a plugin: the
// RANKLAB_REGISTER_ALGORITHM lines of its sources) and returns the entries it added, one
// per collective served. A path without '/' is searched for as dlopen(3) does. Loading a
// library again returns the same entries and changes nothing; so does naming one the program
// links (then: the entries whose builders it holds). Throws usage_error,
// naming the path, when the library cannot be loaded (dlerror's reason), registers nothing,
// or a registration in it is refused (registry::add's message); then none of its
// algorithms is registered. A loaded plugin stays loaded until the process ends.
std::vector<const algorithm*> load_plugin(std::string_view path);

// load_plugin for every path of the environment variable RANKLAB_PLUGINS, a list separated
// by ':' (empty entries skipped), in order; returns the entries added. A failure is a
// usage_error naming RANKLAB_PLUGINS and the path. The registry's readers call this once.
std::vector<const algorithm*> load_plugins_from_environment();

// Throws usage_error when `a` cannot run `args` (non-commutative operator, p not a power
// of two ...), naming algorithms of the same collective that can.
void check_preconditions(const algorithm& a, const coll_args& args);
bool meets_preconditions(const algorithm& a, const coll_args& args);
// Why `a` cannot run `args` ("needs a commutative operator" ...), or "" when it can.
std::string unmet_precondition(const algorithm& a, const coll_args& args);

// Resolves `requested` ("auto" or a name) for a call. With "auto", the environment
// variable RANKLAB_<COLLECTIVE>_ALGORITHM (e.g. RANKLAB_BCAST_ALGORITHM=binomial) wins,
// then the selection table. Sets `reason` to a short explanation when non-null. When
// RANKLAB_LOG_SELECTION is set, every choice is logged to stderr.
const algorithm& select_algorithm(const coll_args& args, std::size_t elem_size, std::string_view requested,
                                  std::string* reason = nullptr);

// Builds all p ranks' schedules (for the sequential executor, the verifier, printing).
schedule_set build_all(const algorithm& a, const coll_args& args);

}  // namespace ranklab

#define RANKLAB_CONCAT_INNER(a, b) a##b
#define RANKLAB_CONCAT(a, b) RANKLAB_CONCAT_INNER(a, b)
// Registers an algorithm at load time (the library is shared, so every file's registrar
// runs): registry::add from a static initialiser, so a refused declaration ends the
// program before main, with the message, unless load_plugin is loading its library.
#define RANKLAB_REGISTER_ALGORITHM(...)                                              \
  [[maybe_unused]] static const bool RANKLAB_CONCAT(ranklab_registered_, __LINE__) = \
      ::ranklab::registry::add(__VA_ARGS__)
