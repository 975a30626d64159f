// Cost of a fiber switch in the fiber scheduler (runtime/fibers/): two fibers on one worker
// yielding to each other, and a park/unpark ping-pong between two fibers, on one worker
// (the lock-free local path) and on two workers (inbox push plus waking the other worker).
// Prints nanoseconds per switch or per hand-over; the best of 5 batches.
//
//   bench_fiber_switch [iterations]
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>

// The scheduler is private to the library; its header needs nothing but the standard library.
#include "../runtime/fibers/fiber_scheduler.hpp"

namespace {

using ranklab::detail::fiber_options;
using ranklab::detail::fiber_scheduler;
using clock_type = std::chrono::steady_clock;

template <class Batch>
double best_of_5(Batch&& batch) {
  double best = 1e300;
  for (int i = 0; i < 5; ++i) best = std::min(best, batch());
  return best;
}

// ns per yield: each yield is one switch from one fiber to the other (through the worker's
// scheduler loop).
double yield_ns(long iterations) {
  fiber_scheduler s;
  clock_type::time_point t0, t1;
  s.run(2, [&](int rank) {
    if (rank == 0) t0 = clock_type::now();
    for (long i = 0; i < iterations; ++i) s.yield();
    if (rank == 1) t1 = clock_type::now();
  });
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * static_cast<double>(iterations));
}

// ns per hand-over: fiber r waits for its turn (park), takes it, passes it on (unpark).
double ping_pong_ns(long iterations, int workers) {
  fiber_options o;
  o.workers = workers;
  fiber_scheduler s(o);
  std::atomic<long> turn{0};  // even: rank 0's turn, odd: rank 1's
  clock_type::time_point t0, t1;
  s.run(2, [&](int rank) {
    if (rank == 0) t0 = clock_type::now();
    for (long i = 0; i < iterations; ++i) {
      const long mine = 2 * i + rank;
      for (;;) {
        const std::uint64_t epoch = s.wake_epoch(rank);
        if (turn.load(std::memory_order_acquire) == mine) break;
        s.park(epoch);
      }
      turn.store(mine + 1, std::memory_order_release);
      s.unpark(1 - rank);
    }
    if (rank == 1) t1 = clock_type::now();
  });
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * static_cast<double>(iterations));
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 1'000'000;
  fmt::print("fiber switch costs, best of 5 batches of {} iterations\n", iterations);
  fmt::print("  yield between 2 fibers, 1 worker:           {:8.1f} ns per switch\n",
             best_of_5([&] { return yield_ns(iterations); }));
  fmt::print("  park/unpark ping-pong, 1 worker:            {:8.1f} ns per hand-over\n",
             best_of_5([&] { return ping_pong_ns(iterations, 1); }));
  fmt::print("  park/unpark ping-pong, 2 workers:           {:8.1f} ns per hand-over\n",
             best_of_5([&] { return ping_pong_ns(iterations / 10, 2); }));
  return 0;
}
