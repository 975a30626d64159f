// The schedule cache of an MPI comm (see call_cache.hpp).
#include "call_cache.hpp"

#include <cstring>

#include "executor.hpp"
#include "ranklab/errors.hpp"

namespace ranklab::mpi::detail {

namespace {

constexpr std::size_t capacity = 16;

template <class T>
void append(std::string& key, const T& value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  key.append(bytes, sizeof(T));
}

// A schedule depends on the arguments (the operator only through its commutativity), the
// element size (cost-model choices) and the algorithm asked for.
std::string key_of(const call& c) {
  const coll_args& a = c.args;
  std::string key;
  key.reserve(64 + 8 * (a.counts.size() + a.displs.size()) + c.choice.name.size());
  append(key, a.coll);
  append(key, is_rooted(a.coll) ? a.root : 0);
  append(key, a.count);
  append(key, a.counts.size());
  for (std::uint64_t v : a.counts) append(key, v);
  append(key, a.displs.size());
  for (std::uint64_t v : a.displs) append(key, v);
  append(key, c.reduction.commutative);
  append(key, a.in_place);
  append(key, a.params.blocks);
  append(key, a.params.radix);
  append(key, a.params.removed_steps);
  append(key, a.params.segment);
  append(key, c.type.kind);
  append(key, c.type.size);
  key.append(c.choice.name);
  return key;
}

}  // namespace

std::shared_ptr<const cached_call> call_cache::find_or_build(const call& c, int rank, int p) {
  std::string key = key_of(c);
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if ((*it)->key == key) {
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front();
    }
  coll_args args = c.args;
  args.p = p;
  args.commutative = c.reduction.commutative;
  args.elem_size = c.type.size;
  auto e = std::make_shared<cached_call>();
  e->key = std::move(key);
  try {
    validate(args);
    e->algo = &select_one_ported(args, c.type.size, c.choice.name, &e->reason);
    e->plan = e->algo->build(args, rank);
  } catch (const error& err) {
    throw usage_error(rank, err.operation(), err.cause());
  }
  entries_.push_front(std::move(e));
  if (entries_.size() > capacity) entries_.pop_back();
  return entries_.front();
}

}  // namespace ranklab::mpi::detail
