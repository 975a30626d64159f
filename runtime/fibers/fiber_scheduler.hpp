// Ranks as stackful fibers (Boost.Context) multiplexed on a few pinned worker threads, so
// that a team can have far more ranks than cores without an OS thread, a kernel stack and a
// futex sleep per rank. Fiber `rank` lives on worker `rank % workers` for its whole life: no
// migration, so switching between fibers of one worker needs no lock (a yield touches no
// shared memory; park/unpark add a few atomics for the wakeup and deadlock accounting), and
// TLS stays valid across switches.
//
// Blocking is park/unpark with an epoch (like a futex word): read wake_epoch(rank), check
// the condition, park(epoch). An unpark between the read and the park makes park return at
// once, so wakeups are never lost. Unpark works from any fiber of any worker and from plain
// threads; across workers it pushes onto the target worker's lock-free inbox.
//
// Deterministic mode (options.seed, one worker): every choice of the next fiber is made by a
// seeded splitmix64, so the same seed replays the same interleaving bit for bit (as long as
// only fibers unpark: a plain thread's unpark arrives when it arrives).
//
// A fiber may yield or park inside a catch block: the exceptions being handled, which the
// C++ runtime keeps per thread, travel with the fiber. A body that catches everything
// (catch (...)) and keeps parking defeats the deadlock cancellation (see run()).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace ranklab::detail {

struct fiber_options {
  int workers = 1;                       // worker threads (at most p are started)
  std::vector<int> cpus;                 // cpu of worker i = cpus[i % size]; empty: unpinned
  std::size_t stack_bytes = 128 * 1024;  // usable stack per fiber, rounded up to pages
  std::optional<std::uint64_t> seed;     // deterministic mode: requires workers == 1
};

class fiber_scheduler {
 public:
  // Throws std::invalid_argument for workers < 1, a seed with workers != 1 or a cpu id out of range.
  explicit fiber_scheduler(fiber_options options = {});
  ~fiber_scheduler();
  fiber_scheduler(const fiber_scheduler&) = delete;
  fiber_scheduler& operator=(const fiber_scheduler&) = delete;

  // Runs body(rank) for rank 0..p-1, fiber `rank` on worker rank % workers, and returns when
  // all have returned. All stacks are mapped before anything runs: too many fibers or no
  // memory for their stacks throws std::runtime_error saying so, and nothing ran.
  // An exception escaping a body is captured; run() rethrows the first one by rank once
  // every fiber finished. If all fibers park with nobody left to wake them and no
  // on_all_parked handler is installed, run() cancels them (park() throws an internal
  // exception that unwinds the body) and throws std::runtime_error naming the parked
  // ranks, unless a body exception is there to rethrow instead. Not reentrant.
  void run(int p, const std::function<void(int rank)>& body);

  // From inside a fiber; outside of one: nullptr and -1.
  static fiber_scheduler* current();
  static int current_rank();

  // Let the other runnable fibers of this worker run, then continue. From a fiber of this
  // scheduler only (else std::logic_error).
  void yield();

  // Lost-wakeup-safe parking. park(epoch) suspends the calling fiber until an unpark(rank)
  // that happened after wake_epoch(rank) returned `epoch`; returns at once if one already
  // did. May return spuriously (re-check the condition).
  std::uint64_t wake_epoch(int rank) const;
  void park(std::uint64_t epoch);
  // From any fiber or thread, any worker, while run() runs (from a plain thread: before
  // run() returned; run() waits for such a call that is under way).
  void unpark(int rank);

  // When every unfinished fiber is parked (none runnable or running anywhere) the team is
  // deadlocked unless a plain thread will unpark one. The handler is called then, once per
  // such state, on a worker thread outside of any fiber; it may unpark ranks (e.g. after
  // marking the team failed) or do nothing and let a plain thread's unpark end the state.
  // While it runs it counts as a running fiber (fibers it wakes may park again before it
  // returns). If it throws, run() cancels the fibers as for a deadlock and rethrows that.
  // Set it before run().
  void on_all_parked(std::function<void()> handler);

  const fiber_options& options() const { return options_; }

  // Implementation types (fiber_scheduler.cpp), named here for its internal functions.
  struct fiber_record;
  struct worker;
  struct run_state;

 private:
  worker& calling_worker(const char* what) const;  // the caller's worker, or std::logic_error
  fiber_record& checked_fiber(int rank) const;     // or std::logic_error / std::out_of_range
  fiber_options options_;
  std::function<void()> all_parked_;
  std::atomic<run_state*> run_{nullptr};  // set while run() runs
  // unpark() calls from outside this scheduler's fibers (plain threads) that are under way:
  // run() waits for them before it frees the state they touch.
  std::atomic<int> outside_unparks_{0};
};

}  // namespace ranklab::detail
