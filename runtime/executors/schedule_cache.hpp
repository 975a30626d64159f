// The schedule cache and call signatures. Building a rank's schedule is the expensive part
// of a collective, and programs repeat the same calls, so each comm keeps its most recent
// schedules keyed by the call. The signature, a hash of everything the ranks must agree on
// (collective, counts, root, type, operator, algorithm and its parameters), travels with
// every message so that a receiver notices a peer in a different call.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "detail/operation.hpp"
#include "ranklab/call.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

struct comm_state;
struct team_state;

struct cached_schedule {
  call key_call;          // the call as made (args, type, operator kind, choice)
  std::string requested;  // choice.name, owned
  const algorithm* algo = nullptr;
  std::string reason;
  schedule plan;
  std::uint64_t signature = 0;
  std::string text;  // "bcast(p=8, root=0, count=10) algorithm=binomial"
};

// This rank's schedule for the call, from the cache or built now. Throws usage_error for
// invalid arguments or an algorithm that does not take them. A hierarchical algorithm's call
// without a hierarchy of its own (coll_args::hierarchy) is built with the comm's (`team`'s:
// hierarchy_of, made then, not before: only such calls need the machine's topology).
std::shared_ptr<const cached_schedule> schedule_for(comm_state& cs, const call& c, int rank, int p,
                                                    team_state* team = nullptr);

// Whether `e` is the cache entry of call `c` (the same arguments, type, operator and
// algorithm choice).
bool matches(const cached_schedule& e, const call& c);

// The signature entry `e`'s call would have with `root` for its root (signature_of on its
// key_call): a peer's signature equal to it differs from ours in the root alone.
std::uint64_t signature_with_root(const cached_schedule& e, int root);

// The tag of the rank's next collective call: numbers it and carries the signature.
call_tag tag_for(comm_state& cs, const call& c, const cached_schedule& entry);

}  // namespace ranklab::detail
