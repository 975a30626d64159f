#include "ranklab/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>

#include "ranklab/errors.hpp"
#include "selection_table.hpp"

namespace ranklab {

namespace {
std::vector<const algorithm*>& storage() {
  static std::vector<const algorithm*> algorithms;
  return algorithms;
}
}  // namespace

bool registry::add(const algorithm& declared) {
  // Registration happens during static initialisation, single threaded. Entries live in a
  // deque so that pointers handed out stay valid as more algorithms register.
  static std::deque<algorithm> entries;
  auto& s = storage();
  const collective_set serves = declared.serves.empty() ? collective_set{declared.coll} : declared.serves;
  for (int i = 0; i < collective_count; ++i) {
    const auto c = static_cast<collective>(i);
    if (!serves.contains(c)) continue;
    for (const algorithm* b : s)
      if (b->coll == c && b->name == declared.name)
        throw std::logic_error(fmt::format("algorithm {}/{} registered twice", name(c), declared.name));
    algorithm& a = entries.emplace_back(declared);
    a.coll = c;
    a.serves = serves;
    s.push_back(&a);
  }
  std::sort(s.begin(), s.end(), [](const algorithm* x, const algorithm* y) {
    return x->coll != y->coll ? x->coll < y->coll : x->name < y->name;
  });
  return true;
}

std::vector<const algorithm*> registry::all() { return storage(); }

std::vector<const algorithm*> registry::for_collective(collective c) {
  std::vector<const algorithm*> out;
  for (const algorithm* a : storage())
    if (a->coll == c) out.push_back(a);
  return out;
}

const algorithm* registry::find(collective c, std::string_view n) {
  for (const algorithm* a : storage())
    if (a->coll == c && a->name == n) return a;
  return nullptr;
}

bool meets_preconditions(const algorithm& a, const coll_args& args) {
  if (a.needs_commutative && !args.commutative) return false;
  if (a.needs_power_of_two && !std::has_single_bit(static_cast<unsigned>(args.p))) return false;
  if (a.payload_bytes && a.payload_bytes(args) > fence_payload_capacity(args.p)) return false;
  return true;
}

std::string unmet_precondition(const algorithm& a, const coll_args& args) {
  if (a.needs_commutative && !args.commutative) return "needs a commutative operator";
  if (a.needs_power_of_two && !std::has_single_bit(static_cast<unsigned>(args.p)))
    return fmt::format("needs p to be a power of two (p = {})", args.p);
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
