// Per-rank state of a comm: the operations in progress, messages that arrived early, the
// reusable vectors of the blocking path and the schedule cache.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "detail/aligned_buffer.hpp"
#include "detail/operation.hpp"
#include "executors/schedule_cache.hpp"
#include "mailbox/mailbox.hpp"
#include "ranklab/collectives.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::detail {

// Aligned to a cache line (and so allocated on lines of its own): every call reads it,
// and a neighbour on the heap that another thread writes, such as a small user buffer
// another rank receives into, would cost this rank a miss per call.
struct alignas(64) comm_state {
  std::uint32_t calls = 0;             // collective calls started
  operation blocking;                  // reused by every blocking call
  std::vector<operation*> active;      // outstanding nonblocking operations, by call
  std::vector<stashed_message> stash;  // early messages
  std::vector<chunk> stage;            // eager payload staging
  aligned_bytes scratch;               // blocking calls' scratch
  std::size_t scratch_bytes = 0;
  std::list<std::shared_ptr<cached_schedule>> cache;  // most recent first
  const algorithm* last_algo = nullptr;
  std::string last_reason;
  // The call `blocking` is prepared for (its schedule-cache entry, which the operation keeps
  // alive, and buffers); null once the operation served anything else. A blocking call
  // that repeats it skips the checks, the cache lookup and the preparation.
  const cached_schedule* prepared = nullptr;
  // That call's key flattened beside the buffers (detail::last_call, which the typed
  // surface compares a call with), so that the test for a repeat compares a few words here
  // instead of following `prepared` into the cache entry. Valid while `prepared` is set;
  // `typed` only then (forget_prepared).
  struct repeat_key : last_call {
    bool single_count = false;  // no counts or displacements
    // A v-collective's part of the layout at this rank (buffer_extents), which the lengths
    // of a detail::vcall_request's buffers must fit as make_checked_vcall checks them: `in`
    // exactly (when in_exact), `out` at least.
    std::uint64_t in_extent = 0;
    std::uint64_t out_extent = 0;
    bool in_exact = false;
    // The buffers pass the typed surface's overlap rule (buffers_separate), so that a typed
    // call may repeat the call: the general entry points leave overlap to the caller.
    bool separate = false;
  } repeat;
  void forget_prepared() {
    prepared = nullptr;
    repeat.typed = false;
  }

  // Optional progress thread (team_options::progress_thread): it and the rank thread take
  // `progress_lock` around every advance.
  bool threaded = false;
  // Some mailbox to this rank holds messages taken but not yet told to their sender
  // (mailbox::taken_through): publish_taken_from_all has work to do.
  bool takes_unpublished = false;
  std::mutex progress_lock;
  std::thread progress_thread;
  bool stop = false;

  // Set when the comm is destroyed (its rank returned) or its team is: requests that
  // outlive either must not touch the team again. Atomic because a team may end on
  // another thread than the one holding a stray request.
  std::atomic<bool> ended{false};
};

struct team_state;
[[noreturn, gnu::cold, gnu::noinline]] void throw_unusable(const team_state* t, int rank, const char* operation);
// A comm that was moved from (no team) or whose team has ended can do nothing. Inline: every
// call, the repeated one's quick way included, begins with it.
inline void require_usable(const team_state* t, const comm_state* cs, int rank, const char* operation) {
  if (!t || cs->ended.load(std::memory_order_acquire)) throw_unusable(t, rank, operation);
}

}  // namespace ranklab::detail
