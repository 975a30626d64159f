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
  const void* prepared_in = nullptr;
  const void* prepared_out = nullptr;

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

}  // namespace ranklab::detail
