// Progress for the served nonblocking collectives (see nonblocking.cpp): while any is in
// flight, every MPI call of the program that may wait (completion calls, blocking
// point-to-point, blocking collectives) becomes a loop that advances them.
#pragma once
#include <mpi.h>

#include "backend/executor.hpp"
#include "interpose.hpp"

namespace ranklab::mpi::interpose {

// The identity of a served call's messages: its tag numbers it (`sequence`, the state's
// `calls` when the program made it) among the communicator's served calls (comm_state.cpp).
detail::call_identity identity(const comm_state& st, const call& c, const algorithm& a, std::uint64_t sequence);

// Whether any served nonblocking call is in flight (started, not yet completed): only then
// do the intercepted waits and tests do more than call PMPI.
bool active() noexcept;
// Served requests that failed and that the program has not completed yet: their
// completion call returns the error (and calls the communicator's error handler, as the
// blocking calls do). take_failure(request) forgets such a request and reports its error
// (MPI_SUCCESS for any other request).
bool failures_pending() noexcept;
int take_failure(MPI_Request request) noexcept;

// One pass: advances every ranklab run in flight (blocking and nonblocking) and moves the
// nonblocking calls on (issuing queued operations, completing finished calls' requests).
// True when anything moved.
bool step() noexcept;

// Passes until done() holds, yielding the core while nothing moves (as the backend's waits
// do: oversubscribed ranks share cores).
template <class Done>
void progress_until(Done&& done) {
  detail::idle_poller poller;
  while (!done()) poller.pass(step());
}

// Loops test(&done) (a PMPI_Test..., PMPI_Iprobe... call: its return code) with progress
// until it sets done or fails; returns its last code.
template <class Test>
int test_until(Test&& test) {
  int rc = MPI_SUCCESS;
  progress_until([&] {
    int done = 0;
    rc = test(&done);
    return done || rc != MPI_SUCCESS;
  });
  return rc;
}

// Waits for a native request with progress; returns PMPI_Test's code.
int wait_native(MPI_Request* request, MPI_Status* status);

// Waits (with progress) until the communicator's private duplicate is usable and no
// nonblocking call on it has an operation still to issue: a blocking call then goes next.
// This is also what keeps ranklab's own native operations in order with the native ones: the
// private duplicate's PMPI_Comm_idup is a collective on the user's communicator whose later
// stages the MPI library issues from its progress engine (Open MPI's agreement on a context
// id: one nonblocking allreduce after another), at a moment that differs between ranks. A
// native collective issued on that communicator meanwhile takes its place among them at a
// different point on different ranks, and the two meet each other's messages
// (MPI_ERR_TRUNCATE inside libnbc) or wait for each other. So nothing native goes onto a
// communicator before its duplicate is ready.
void settle(comm_state& st);
// settle() for a communicator that has a state, before a blocking operation of the program
// that is collective over it and that ranklab does not serve (MPI_Comm_dup, MPI_Comm_split,
// MPI_Comm_free ...: native_order.cpp). Errors are left to the calls concerned.
void settle_native_order(MPI_Comm comm) noexcept;

// Runs every served nonblocking call to its end (at MPI_Finalize: calls whose requests were
// freed may still be running).
void complete_all();

}  // namespace ranklab::mpi::interpose
