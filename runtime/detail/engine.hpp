// A rank at work in the thread runtime: its team, its comm's state and its number. The
// mailbox protocol, the thread executor and the progress thread all act through it.
#pragma once
#include <atomic>

#include "detail/comm_state.hpp"
#include "detail/team_state.hpp"

namespace ranklab::detail {

struct engine {
  team_state& t;
  comm_state& cs;
  int me;
};

// Every message sent or received counts: the deadlock detector declares a deadlock only
// when no rank's count moves.
inline void count_progress(engine& e) {
  auto& progress = e.t.slots[e.me].progress;
  progress.store(progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

}  // namespace ranklab::detail
