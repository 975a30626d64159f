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
inline void count_progress(team_state& t, int me) {
  auto& progress = t.slots[me].progress;
  progress.store(progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}
inline void count_progress(engine& e) { count_progress(e.t, e.me); }

}  // namespace ranklab::detail
