// Each comm keeps its most recent schedules keyed by the call: building a rank's schedule
// is the expensive part of a collective, and programs repeat the same calls.
#pragma once
#include <list>
#include <memory>
#include <string>

#include "ranklab/call.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::mpi::detail {

struct cached_call {
  std::string key;  // what the schedule depends on: arguments, element type, requested algorithm
  const algorithm* algo = nullptr;
  std::string reason;  // why this algorithm
  schedule plan;
};

class call_cache {
 public:
  // This rank's schedule for `c` on `p` ranks, from the cache or built now (selection
  // restricted to one-ported algorithms). usage_error, naming the rank, for invalid
  // arguments or an algorithm that does not take them.
  std::shared_ptr<const cached_call> find_or_build(const call& c, int rank, int p);

 private:
  std::list<std::shared_ptr<const cached_call>> entries_;  // most recent first
};

}  // namespace ranklab::mpi::detail
