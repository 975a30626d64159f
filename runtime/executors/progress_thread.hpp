// The optional progress thread of a rank (team_options::progress_thread): it advances the
// rank's outstanding requests while the rank computes, so that a nonblocking collective
// overlaps with work instead of moving only when the rank tests or waits. It shares the
// comm's state with the rank thread, both taking the comm's progress_lock.
#pragma once
#include <memory>

#include "detail/comm_state.hpp"
#include "detail/team_state.hpp"

namespace ranklab::detail {

// Starts the rank's progress thread if the team asks for one and it is not running yet.
void start_progress_thread(team_state& t, const std::shared_ptr<comm_state>& state, int rank);

// Tells the progress thread to stop and waits until it has: it must be running.
void join_progress_thread(comm_state& cs);

}  // namespace ranklab::detail
