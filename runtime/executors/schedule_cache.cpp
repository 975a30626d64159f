// The schedule cache and call signatures (see executors/schedule_cache.hpp). The cache is
// per comm, so per rank thread: it needs no lock. Entries are shared with the operations
// running them, so evicting one never frees a schedule in use.
#include "executors/schedule_cache.hpp"

#include "detail/topology.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include "detail/comm_state.hpp"
#include "detail/topology.hpp"
#include "ranklab/errors.hpp"
#include "selection_table.hpp"

namespace ranklab::detail {

namespace {

std::uint64_t fnv(std::uint64_t h, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xff;
    h *= 1099511628211ull;
  }
  return h;
}

std::uint64_t signature_of(const call& c, const algorithm* a) {
  std::uint64_t h = 1469598103934665603ull;
  h = fnv(h, static_cast<std::uint64_t>(c.args.coll));
  h = fnv(h, static_cast<std::uint64_t>(c.args.p));
  h = fnv(h, static_cast<std::uint64_t>(is_rooted(c.args.coll) ? c.args.root : 0));
  h = fnv(h, c.args.count);
  h = fnv(h, c.args.in_place ? 1 : 0);
  for (auto v : c.args.counts) h = fnv(h, v);
  for (auto v : c.args.displs) h = fnv(h, v);
  h = fnv(h, (static_cast<std::uint64_t>(c.type.kind) << 32) | c.type.size);
  if (is_reduction(c.args.coll)) {
    h = fnv(h, static_cast<std::uint64_t>(c.reduction.kind));
    // All ranks are threads of one process: user operators compare by function.
    h = fnv(h, reinterpret_cast<std::uintptr_t>(c.reduction.function));
  }
  h = fnv(h, reinterpret_cast<std::uintptr_t>(a));
  h = fnv(h, static_cast<std::uint64_t>(c.args.params.blocks));
  h = fnv(h, static_cast<std::uint64_t>(c.args.params.radix));
  h = fnv(h, static_cast<std::uint64_t>(c.args.params.removed_steps));
  h = fnv(h, c.args.params.segment);
  return h;
}

}  // namespace

std::uint64_t signature_with_root(const cached_schedule& e, int root) {
  call c = e.key_call;
  c.args.root = root;
  return signature_of(c, e.algo);
}

// Looked up once per call that does not repeat the last one (comm.cpp has the test for
// that, on a flattened copy of this key).
bool matches(const cached_schedule& e, const call& c) {
  const call& k = e.key_call;
  return k.args.coll == c.args.coll && k.args.count == c.args.count && k.args.root == c.args.root &&
         k.args.commutative == c.args.commutative && k.args.in_place == c.args.in_place &&
         k.args.params == c.args.params && k.type == c.type && k.reduction.kind == c.reduction.kind &&
         k.reduction.function == c.reduction.function && e.requested == c.choice.name &&
         k.args.counts == c.args.counts && k.args.displs == c.args.displs;
}

namespace {

constexpr std::size_t cache_capacity = 16;

}  // namespace

std::shared_ptr<const cached_schedule> schedule_for(comm_state& cs, const call& c, int rank, int p,
                                                    team_state* team) {
  auto it = std::find_if(cs.cache.begin(), cs.cache.end(), [&](const auto& e) { return matches(*e, c); });
  if (it != cs.cache.end()) {
    if (it != cs.cache.begin()) cs.cache.splice(cs.cache.begin(), cs.cache, it);
    return cs.cache.front();
  }
  coll_args args = c.args;
  args.p = p;
  args.commutative = c.reduction.commutative;
  args.elem_size = c.type.size;
  auto e = std::make_shared<cached_schedule>();
  e->key_call = c;
  e->requested = std::string(c.choice.name);
  e->key_call.choice.name = e->requested;
  try {
    validate(args);
    e->algo = &select_algorithm(args, c.type.size, c.choice.name, &e->reason);
    // "auto" weighs the hierarchical algorithm only where measured level costs make it worth
    // the topology query (hierarchical_candidate); every rank decides alike, from the same
    // hierarchy and costs.
    if (team)
      if (const algorithm* hier = hierarchical_candidate(args, c.choice.name, *e->algo))
        if (const rank_hierarchy* h = hierarchy_of(*team))
          e->algo = &flat_or_hierarchical(args, c.type.size, *e->algo, *hier, *h, e->reason);
    if (e->algo->hierarchical && !args.hierarchy && team) args.hierarchy = hierarchy_of(*team);
    e->plan = e->algo->build(args, rank);
  } catch (const error& err) {
    throw usage_error(rank, err.operation(), err.cause());
  }
  e->signature = signature_of(c, e->algo);
  e->text = describe(args) + " algorithm=" + std::string(e->algo->name);
  cs.cache.push_front(std::move(e));
  if (cs.cache.size() > cache_capacity) cs.cache.pop_back();
  return cs.cache.front();
}

call_tag tag_for(comm_state& cs, const call& c, const cached_schedule& entry) {
  return call_tag{static_cast<std::uint8_t>(c.args.coll),   ++cs.calls,   entry.signature,
                  is_rooted(c.args.coll) ? c.args.root : 0, c.args.count, entry.algo};
}

}  // namespace ranklab::detail
