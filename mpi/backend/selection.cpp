// Selection over MPI: the registry's and the selection table's choice, restricted to
// one-ported algorithms (see executor.hpp, select_one_ported).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>

#include "executor.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/selection.hpp"

namespace ranklab::mpi::detail {

// The shipped table's text for this MPI ("" when none was measured): generated from
// data/selection/mpi-<impl>.json (cmake/mpi_selection.cpp.in).
extern const char* const shipped_mpi_selection_json;

namespace {

// The variable select_algorithm honours for "auto" (registry.hpp).
bool forced_by_environment(collective c) {
  std::string variable = "RANKLAB_";
  for (char ch : name(c)) variable += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  variable += "_ALGORITHM";
  const char* value = std::getenv(variable.c_str());
  return value && *value;
}

std::string one_ported_alternatives(const coll_args& args) {
  std::string names;
  for (const algorithm* a : registry::for_collective(args.coll))
    if (a->one_ported && meets_preconditions(*a, args)) names += (names.empty() ? "" : ", ") + std::string(a->name);
  return names.empty() ? "none" : names;
}

// What `t` chooses among its one-ported rules.
table_choice one_ported_choice(const selection_table& t, const coll_args& args, std::size_t elem_size) {
  selection_table kept = t;
  std::erase_if(kept.rules, [](const selection_rule& r) {
    const algorithm* a = registry::find(r.coll, r.algorithm);
    return a == nullptr || !a->one_ported;
  });
  return choose_from(kept, args, elem_size);
}

// The best one-ported choice: the table in use, then the built-in rows, then the first
// registered one-ported algorithm that accepts the call (the ranking select_algorithm uses).
const algorithm& fallback(const coll_args& args, std::size_t elem_size, std::string& why) {
  for (const selection_table* t : {current_selection().get(), &builtin_selection()}) {
    const table_choice c = one_ported_choice(*t, args, elem_size);
    if (c.algo) {
      why = c.why;
      return *c.algo;
    }
  }
  for (const algorithm* a : registry::for_collective(args.coll))
    if (a->one_ported && meets_preconditions(*a, args)) {
      why = "first registered one-ported algorithm that accepts the call";
      return *a;
    }
  throw usage_error(no_rank, std::string(name(args.coll)), "no one-ported algorithm accepts this call");
}

std::unique_ptr<const selection_table> load_mpi_selection() {
  const char* file = std::getenv("RANKLAB_MPI_SELECTION");
  if (file && *file) {
    if (std::string_view(file) == "none") return nullptr;
    return std::make_unique<const selection_table>(read_selection(file));
  }
  if (*shipped_mpi_selection_json == '\0') return nullptr;
  return std::make_unique<const selection_table>(
      parse_selection(shipped_mpi_selection_json, "the shipped MPI table (data/selection)"));
}

// The MPI table's one-ported or native choice for an "auto" call; no choice (algo null,
// native false) when the table has no rule that takes the call.
mpi_choice from_mpi_table(const coll_args& args, std::size_t elem_size, bool native_allowed) {
  mpi_choice out;
  const selection_table* t = mpi_selection();
  if (!t) return out;
  const table_choice c = choose_from(*t, args, elem_size, native_allowed);
  if (c.native || (c.algo && c.algo->one_ported)) {
    out.algo = c.native ? nullptr : c.algo;
    out.native = c.native;
    out.why = c.why;
  }
  return out;
}

}  // namespace

const selection_table* mpi_selection() {
  static const std::unique_ptr<const selection_table> table = load_mpi_selection();
  return table.get();
}

mpi_choice choose_over_mpi(const coll_args& args, std::size_t elem_size, bool native_allowed) {
  // The MPI library promises no order of its reductions: a fixed-order call stays with ranklab.
  if (args.params.fixed_order && is_reduction(args.coll)) native_allowed = false;
  if (!forced_by_environment(args.coll)) {
    mpi_choice c = from_mpi_table(args, elem_size, native_allowed);
    if (c.native || c.algo) return c;
  }
  mpi_choice c;
  c.algo = &select_one_ported(args, elem_size, "auto", &c.why);
  return c;
}

const algorithm& select_one_ported(const coll_args& args, std::size_t elem_size, std::string_view requested,
                                   std::string* reason) {
  const bool by_name = (!requested.empty() && requested != "auto") || forced_by_environment(args.coll);
  if (!by_name) {
    const mpi_choice c = from_mpi_table(args, elem_size, false);
    if (c.algo) {
      if (reason) *reason = c.why;
      return *c.algo;
    }
  }
  std::string why;
  const algorithm& chosen = select_algorithm(args, elem_size, requested, &why);
  if (chosen.one_ported) {
    if (reason) *reason = std::move(why);
    return chosen;
  }
  if (by_name)
    throw usage_error(no_rank, std::string(name(args.coll)),
                      fmt::format("algorithm '{}' ({}) is a shared-memory algorithm, not one-ported: separate MPI "
                                  "processes cannot read each other's buffers; one-ported algorithms that accept "
                                  "this call: {}",
                                  chosen.name, why, one_ported_alternatives(args)));
  std::string instead;
  const algorithm& a = fallback(args, elem_size, instead);
  if (reason)
    *reason = fmt::format("{} chose '{}' (shared memory, not one-ported); over MPI: {}", why, chosen.name, instead);
  return a;
}

}  // namespace ranklab::mpi::detail
