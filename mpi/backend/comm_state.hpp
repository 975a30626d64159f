// What an MPI comm holds (shared with its requests, which may outlive it): the private
// communicator, the call counter that numbers calls in tags, the schedule cache, the
// blocking calls' scratch, and the failure that ended it.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>

#include "call_cache.hpp"
#include "executor.hpp"
#include "ranklab/call.hpp"

namespace ranklab::mpi::detail {

struct comm_state {
  explicit comm_state(MPI_Comm parent);
  comm_state(const comm_state&) = delete;
  comm_state& operator=(const comm_state&) = delete;
  ~comm_state();  // frees the private communicator, unless MPI has been finalized or the comm failed

  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  std::uint64_t calls = 0;
  call_cache cache;
  scratch_arena arena;
  const algorithm* last_algo = nullptr;
  std::string last_reason;
  std::string failure;  // what ended the comm: a call failed while its messages were in flight

  // What every call does before it runs: refuses a failed comm, checks the call (operator
  // against type, arguments, buffers), finds its schedule and numbers it.
  struct prepared {
    std::shared_ptr<const cached_call> entry;
    call_identity id;
  };
  prepared prepare(const call& c, const void* in, const void* out);
  // prepare() without numbering: the checks and the schedule (persistent calls, at init).
  std::shared_ptr<const cached_call> checked_schedule(const call& c, const void* in, const void* out);
  // Waits for a run of this comm; a failure ends the comm (its messages may be in flight).
  void settle(running_schedule& run);
  void note_failure(const std::exception_ptr& e) noexcept;
};

// A nonblocking call: the run, and what it runs on.
struct pending_call {
  pending_call(std::shared_ptr<comm_state> s, comm_state::prepared p, const call& c, const void* in, void* out)
      : state(std::move(s)),
        entry(std::move(p.entry)),
        run(entry->plan, in, out, c.type, c.reduction, state->comm, p.id) {}
  std::shared_ptr<comm_state> state;
  std::shared_ptr<const cached_call> entry;
  running_schedule run;
  idle_poller poller;
};

}  // namespace ranklab::mpi::detail
