// The progress thread (see executors/progress_thread.hpp).
#include "executors/progress_thread.hpp"

#include <chrono>
#include <mutex>
#include <thread>

#include "executors/thread_executor.hpp"
#include "mailbox/protocol.hpp"

namespace ranklab::detail {

namespace {

void progress_thread_main(team_state* t, std::shared_ptr<comm_state> state, int rank) {
  comm_state& cs = *state;
  engine e{*t, cs, rank};
  for (;;) {
    bool idle = false;
    {
      std::lock_guard lock(cs.progress_lock);
      if (cs.stop) return;
      try {
        progress_all(e, nullptr);
      } catch (...) {
        t->fail_with_current_exception(rank);
        abandon_all(*t, rank, cs, nullptr);
      }
      idle = cs.active.empty();
      publish_taken_from_all(e);  // before it dozes, as a rank does before it sleeps
    }
    // Sleep until a message or release rings the rank's doorbell (or briefly, to notice
    // new requests and stop).
    t->doze(rank, idle ? std::chrono::milliseconds(2) : std::chrono::milliseconds(1), [] { return false; });
  }
}

}  // namespace

void start_progress_thread(team_state& t, const std::shared_ptr<comm_state>& state, int rank) {
  comm_state& cs = *state;
  if (t.options.progress_thread && !cs.threaded) {
    cs.threaded = true;
    cs.progress_thread = std::thread(progress_thread_main, &t, state, rank);
  }
}

void join_progress_thread(comm_state& cs) {
  {
    std::lock_guard lock(cs.progress_lock);
    cs.stop = true;
  }
  cs.progress_thread.join();
}

}  // namespace ranklab::detail
