// The thread executor: interprets a rank's schedule on the rank's own thread, round by
// round, exchanging messages through the mailboxes (mailbox/protocol.hpp). Every call — a
// blocking collective, a request, a point-to-point round — is an operation; blocking calls
// advance theirs (and any outstanding requests) while they wait, requests when tested or
// waited on, or on the progress thread.
#pragma once
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>

#include "detail/aligned_buffer.hpp"
#include "detail/engine.hpp"
#include "detail/operation.hpp"
#include "ranklab/datatype.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// Points the operation at schedule `s` and the caller's buffers, sized scratch from
// `scratch` (grown when too small), and rewinds it to its first round.
void prepare(operation& op, const schedule& s, const void* in, void* out, const datatype& type,
             const ranklab::op& reduction, aligned_bytes& scratch, std::size_t& scratch_bytes);

// Moves the operation as far as it can go without waiting. Returns whether anything moved.
bool advance(engine& e, operation& op);

// Makes `op` (prepared and numbered) one of the rank's outstanding operations and starts
// it, so that its first sends go out before the caller computes. A failure fails the team
// and completes `op` with the error (its request reports it).
void launch(team_state& t, const std::shared_ptr<comm_state>& cs, int me, operation& op);

// Advances `first` (may be null) and every outstanding request.
bool progress_all(engine& e, operation* first);
// MPI's progress rule across comms: a rank waiting in one comm advances the nonblocking
// operations outstanding in its others too (rank_slot::busy), or requests outstanding on
// two comms could each wait for a rank that waits in the other.
bool progress_other_comms(engine& e);

// Blocks until `op` completes, advancing everything outstanding meanwhile. On failure the
// team fails and every outstanding operation of the rank is abandoned.
// `spun_before`: polls already spent on `op` (they count toward the spin stage).
void wait_for(engine& e, operation& op, int spun_before = 0);

// wait_for() for a repeated blocking call of rank `me`: `op` finished the same call last
// time and is numbered for this one. Runs it again from its first round without rewinding
// it first when it can go the quick way (a plan of messages and local steps, nothing else
// to advance), else rewinds it and waits for it. One frame for the quick way, which a rank
// streaming small calls pays in stores (see post_express_line).
void wait_again(team_state& t, comm_state& cs, int me, operation& op);

// What the operation waits for, for the deadlock detector; also records the rank's call.
std::pair<wait_reason, int> blocked_on(engine& e, const operation& op);

// Completes an unfinished operation with the error `why`, withdrawing what peers could still
// read: its published buffers and its posted large-message descriptor (or, if a receiver is
// copying right now, letting it finish) — nothing of the operation is read once we unwind.
void abandon(team_state& t, int me, operation& op, std::exception_ptr why = std::current_exception());
// abandon() for `first` (may be null) and every outstanding request.
void abandon_all(team_state& t, int me, comm_state& cs, operation* first);

// Runs the rank's progress under the comm's lock when a progress thread shares it.
template <class F>
auto locked(comm_state& cs, F&& f) {
  if (!cs.threaded) return f();
  std::lock_guard lock(cs.progress_lock);
  return f();
}

}  // namespace ranklab::detail
