// Timing of one measurement by several threads in lockstep, with the statistics of the rank
// threads (measure.cpp's measure_ranklab): every thread runs measure_batches' batch loop,
// each batch starts after a barrier, each thread times only its own calls, and a batch's
// figure is the max over threads of the per-call mean. Before calibration every thread runs
// warm-up calls untimed, so that a cold first call (caches, TLB, a thread's start or
// wake-up) cannot end the calibration's doubling at one iteration and leave batches too
// short to amortise it. Used by the memcpy and OpenMP baselines; the team's barrier is a
// parameter (spin_barrier for std::threads, `omp barrier` for an OpenMP team).
// Header-only and free of the library, so that the unit tests can drive it with made-up
// durations.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "bench/timing.hpp"

namespace ranklab::tools::bench {

// One thread's figure of a batch, a cache line each so that the threads do not share one.
struct alignas(64) padded_double {
  double value = 0;
};

// Runs on thread t of `per_thread.size()` threads, all calling it together. sync() is the
// team's barrier; run(iters) performs iters calls on this thread and returns the seconds
// they took. Every thread returns the same measurement.
template <class Sync, class Run>
measurement measure_in_lockstep(std::size_t t, std::vector<padded_double>& per_thread, Sync&& sync, Run&& run,
                                const timing_options& o, std::int64_t warmup_calls = 1) {
  if (warmup_calls > 0) {
    sync();
    run(warmup_calls);
  }
  auto time_batch = [&](std::int64_t iters) {
    sync();  // every thread starts its batch together: the wake-up is not timed
    per_thread[t].value = run(iters) / static_cast<double>(iters);
    sync();  // every figure written
    double worst = 0;
    for (const padded_double& x : per_thread) worst = std::max(worst, x.value);
    // A thread writes its next figure only after the next batch's first barrier, which no
    // thread passes before every thread has read this one: no third barrier needed.
    return worst;
  };
  return measure_batches(time_batch, o);
}

// A sense-reversing barrier for a few std::threads that spins, then yields: the threads of
// a baseline wait only for each other's copies, microseconds, so sleeping would time the
// kernel's wake-up instead.
class spin_barrier {
 public:
  explicit spin_barrier(int threads) : threads_(threads) {}
  void arrive_and_wait() {
    const bool sense = !sense_.load(std::memory_order_relaxed);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      arrived_.store(0, std::memory_order_relaxed);
      sense_.store(sense, std::memory_order_release);
      return;
    }
    for (int spins = 0; sense_.load(std::memory_order_acquire) != sense; ++spins)
      if (spins > 4096) std::this_thread::yield();  // oversubscribed: let the others run
  }

 private:
  const int threads_;
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<bool> sense_{false};
};

// Runs fn(t) for t = 0..threads-1, t = 0 on the calling thread, the others on new threads
// (joined before it returns); fn must not throw.
template <class Fn>
void run_threads(int threads, Fn&& fn) {
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) helpers.emplace_back([&fn, t] { fn(t); });
  fn(0);
  for (std::thread& h : helpers) h.join();
}

}  // namespace ranklab::tools::bench
