// Selection over MPI: the registry's and the selection table's choice, restricted to
// one-ported algorithms (see executor.hpp, select_one_ported).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "executor.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/selection.hpp"

namespace ranklab::mpi::detail {

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

}  // namespace

const algorithm& select_one_ported(const coll_args& args, std::size_t elem_size, std::string_view requested,
                                   std::string* reason) {
  std::string why;
  const algorithm& chosen = select_algorithm(args, elem_size, requested, &why);
  if (chosen.one_ported) {
    if (reason) *reason = std::move(why);
    return chosen;
  }
  const bool by_name = (!requested.empty() && requested != "auto") || forced_by_environment(args.coll);
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
