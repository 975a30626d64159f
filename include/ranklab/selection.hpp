// Algorithm selection as data: the table "auto" consults, its file format, and the
// calibrated cost model that comes with it.
//
// A selection table is a JSON file (written by `ranklab tune`, editable by hand):
//
//   {"format": "ranklab-selection", "version": 1,
//    "machine": {...},                       // free-form: where and when it was measured
//    "measurements": {...},                  // optional, free-form: the raw measurements
//    "cost_model": {"alpha": 4.1e-7, "beta": 1.2e-10, "gamma": 3e-11,
//                   "bands": [{"max_bytes": 2048, "alpha": ..., "beta": ...},
//                             {"max_bytes": null, "alpha": ..., "beta": ...}]},
//    "rules": [{"coll": "allreduce", "p_min": 1, "p_max": 4, "max_bytes": 4096,
//               "algorithm": "recursive_doubling", "note": "measured fastest ..."}, ...]}
//
// Rules are tried in order. A rule matches a call when the collective is the same,
// p_min <= p <= p_max and the call's size (selection_bytes) is <= max_bytes; the first
// matching rule whose algorithm accepts the call (preconditions: commutative operator,
// power-of-two p) wins, so a rule whose algorithm cannot run the call falls through to the
// next. null (or a missing key) means unbounded for p_max and max_bytes; p_min defaults to
// 1. "note" is optional text shown by --explain. The algorithm "native" names the MPI
// library's own collective: tables measured over MPI (`ranklab tune --backend mpi`) have such
// rules, which only the PMPI interposer acts on; every other selection passes over them. A call no rule of the table covers is
// decided by the built-in table. Algorithm and collective names must be known (registered
// in this build): a table naming an unknown algorithm is refused with an error naming the
// file and the rule.
//
// Which table "auto" uses: the one installed by load_selection()/use_selection(); else,
// read at first use, the file named by the environment variable RANKLAB_SELECTION
// ("builtin": the hand-written built-in rows; "shipped": the default); else the shipped
// table (shipped_selection()). RANKLAB_<COLLECTIVE>_ALGORITHM and an explicit algorithm name in the call
// still win over any table (registry.hpp, select_algorithm). Install a table before ranks
// start calling collectives: schedules already built (and cached by each comm) keep the
// algorithm they were built with, and ranks must agree on the choice.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ranklab/collective.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {

inline constexpr std::uint64_t unbounded_bytes = std::numeric_limits<std::uint64_t>::max();
inline constexpr int unbounded_p = std::numeric_limits<int>::max();
inline constexpr int selection_format_version = 1;

// alpha and beta fitted over messages up to max_bytes (and above the previous band's).
struct cost_band {
  std::uint64_t max_bytes = unbounded_bytes;
  double alpha = 0;
  double beta = 0;
  friend bool operator==(const cost_band&, const cost_band&) = default;
};

struct selection_rule {
  collective coll = collective::barrier;
  int p_min = 1;
  int p_max = unbounded_p;                    // inclusive
  std::uint64_t max_bytes = unbounded_bytes;  // inclusive, in selection_bytes() units
  std::string algorithm;
  std::string note;  // optional, e.g. "measured fastest (3.1 us; next ring 4.0 us)"
  bool matches(collective c, int p, std::uint64_t bytes) const {
    return c == coll && p >= p_min && p <= p_max && bytes <= max_bytes;
  }
  friend bool operator==(const selection_rule&, const selection_rule&) = default;
};

struct selection_table {
  std::string source = "built-in";  // the file it was read from, or "built-in"
  // The "machine" object as JSON text ("{}" when absent); kept verbatim for round trips.
  std::string machine_json = "{}";
  // The optional "measurements" object (what tune measured: ping-pong, kernels, every
  // algorithm's time), JSON text, "" when absent; kept verbatim, not interpreted.
  std::string measurements_json;
  cost_model model;              // whole-range fit; what machine_cost_model() returns
  std::vector<cost_band> bands;  // per message-size band, ascending max_bytes; may be empty
  std::vector<selection_rule> rules;

  // The band's alpha and beta for a message of `bytes` (gamma from model); model itself
  // when there are no bands.
  cost_model model_for(std::uint64_t bytes) const;
};

// The call's size as the rules see it: count * elem_size with MPI's meaning of count (the
// buffer for bcast, reduce, allreduce, scan, exscan; the per-rank block for allgather,
// gather, scatter, alltoall, reduce_scatter_block); for v-collectives the mean of counts
// (the mean block; alltoallv: the mean per-pair block) times elem_size.
std::uint64_t selection_bytes(const coll_args& args, std::size_t elem_size);

// The built-in rows (data in algorithms/selection_table.cpp), model = cost_model{}.
const selection_table& builtin_selection();
// The shipped table: data/selection/default.json, written by `ranklab tune` on the reference
// machine and compiled into the library; its calls not covered fall back to the built-in
// rows. What "auto" uses unless a table is installed or RANKLAB_SELECTION names another.
const selection_table& shipped_selection();

// Parses a table. Errors are usage_error whose message starts with `origin` (the file name)
// and says what is wrong (JSON syntax with line and column, missing or mistyped key,
// unknown collective or algorithm, with the rule number counted from 1).
selection_table parse_selection(std::string_view json_text, const std::string& origin);
selection_table read_selection(const std::string& path);  // parse_selection of the file
// Format version 1, pretty-printed. to_json(parse_selection(to_json(t))) == to_json(t).
std::string to_json(const selection_table& t);
void write_selection(const selection_table& t, const std::string& path);  // usage_error on failure

// Installing the table "auto" uses (thread-safe; see above for when it is safe to call).
void load_selection(const std::string& path);  // read_selection + install; throws, keeps the old one
void use_selection(selection_table t);
// Forgets the installed table: the next selection reads RANKLAB_SELECTION again (or uses
// the built-in table).
void reset_selection();
// The table in use (loads RANKLAB_SELECTION at first use; throws usage_error if that file
// is bad).
std::shared_ptr<const selection_table> current_selection();

// What `t` chooses for a call: the first matching rule whose algorithm accepts the call,
// else nullptr. `why` says which rule and why earlier matching rules were passed over.
struct table_choice {
  const algorithm* algo = nullptr;
  bool native = false;  // a "native" rule chose the MPI library's own collective (algo null)
  int rule = -1;  // index into t.rules
  std::string why;
};
// A rule naming "native" (native_algorithm) is taken only when native_allowed (the MPI
// interposer, which can call the MPI library's collective); elsewhere it is passed over.
table_choice choose_from(const selection_table& t, const coll_args& args, std::size_t elem_size,
                         bool native_allowed = false);

// One line for --explain and messages: "rule 3 (allreduce, p 4..8, <= 4096 B)" (1-based).
std::string describe_rule(const selection_table& t, std::size_t index);

}  // namespace ranklab
