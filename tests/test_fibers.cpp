// The fiber scheduler (runtime/fibers/): ranks as Boost.Context fibers on a few workers.
// Every body runs once with its rank; yield, park/unpark (within and across workers, from a
// plain thread, with the wakeup before the park), the all-parked deadlock with and without
// a handler, deterministic schedules from a seed, exceptions, a stack overflow reported by
// rank (in a forked child), many small-stack fibers, and clear errors for impossible sizes.
//
// No test depends on timing: waits are park loops or yield loops on a condition.
#include <doctest/doctest.h>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fibers/fiber_scheduler.hpp"
#include "fibers/sanitizer_fiber.hpp"
#include "test_support.hpp"

namespace {

using ranklab::detail::fiber_options;
using ranklab::detail::fiber_scheduler;

fiber_options with_workers(int workers) {
  fiber_options o;
  o.workers = workers;
  return o;
}

// Parks the calling fiber until `flag` is set, then clears it: the epoch protocol.
void wait_for(fiber_scheduler& s, int rank, std::atomic<int>& flag) {
  for (;;) {
    const std::uint64_t epoch = s.wake_epoch(rank);
    if (flag.exchange(0, std::memory_order_acq_rel) != 0) return;
    s.park(epoch);
  }
}

std::string error_of(fiber_scheduler& s, int p, const std::function<void(int)>& body) {
  try {
    s.run(p, body);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every body runs once, with its rank, on 1 and 2 workers") {
  for (int workers : {1, 2}) {
    for (int p : {1, 2, 7, 64, 1000}) {
      CAPTURE(workers);
      CAPTURE(p);
      fiber_scheduler s(with_workers(workers));
      std::vector<std::atomic<int>> runs(static_cast<std::size_t>(p));
      std::atomic<int> wrong{0};
      s.run(p, [&](int rank) {
        runs[static_cast<std::size_t>(rank)].fetch_add(1);
        if (fiber_scheduler::current() != &s || fiber_scheduler::current_rank() != rank) wrong.fetch_add(1);
      });
      CHECK(wrong.load() == 0);
      CHECK(std::all_of(runs.begin(), runs.end(), [](const std::atomic<int>& n) { return n.load() == 1; }));
    }
  }
}

TEST_CASE("outside of a fiber: no current fiber, and yield/park/unpark refuse") {
  fiber_scheduler s;
  CHECK(fiber_scheduler::current() == nullptr);
  CHECK(fiber_scheduler::current_rank() == -1);
  CHECK_THROWS_AS(s.yield(), std::logic_error);
  CHECK_THROWS_AS(s.park(0), std::logic_error);
  CHECK_THROWS_AS(s.unpark(0), std::logic_error);
  CHECK_THROWS_AS(s.run(0, [](int) {}), std::invalid_argument);
  CHECK_THROWS_AS(fiber_scheduler{with_workers(0)}, std::invalid_argument);
  fiber_options seeded_two = with_workers(2);
  seeded_two.seed = 1;
  CHECK_THROWS_AS(fiber_scheduler{seeded_two}, std::invalid_argument);
  // A second scheduler's fiber is not this scheduler's.
  fiber_scheduler other;
  std::atomic<int> refused{0};
  other.run(1, [&](int) {
    try {
      s.yield();
    } catch (const std::logic_error&) {
      refused = 1;
    }
  });
  CHECK(refused.load() == 1);
}

TEST_CASE("yield takes turns: every fiber gets all its k turns") {
  constexpr int p = 5, k = 40;
  fiber_scheduler s;
  std::vector<int> order;
  s.run(p, [&](int rank) {
    for (int i = 0; i < k; ++i) {
      order.push_back(rank);
      s.yield();
    }
  });
  REQUIRE(order.size() == static_cast<std::size_t>(p * k));
  for (int r = 0; r < p; ++r) CHECK(std::count(order.begin(), order.end(), r) == k);
  // FIFO on one worker: between two turns of a fiber, every other fiber had one.
  for (std::size_t i = p; i < order.size(); ++i) CHECK(order[i] == order[i - p]);
}

TEST_CASE("park/unpark: a token around a ring, on 1 and 2 workers") {
  for (int workers : {1, 2}) {
    for (int p : {1, 2, 7, 64}) {
      CAPTURE(workers);
      CAPTURE(p);
      const int laps = p >= 64 ? 50 : 300;
      fiber_scheduler s(with_workers(workers));
      std::vector<std::atomic<int>> token(static_cast<std::size_t>(p));
      token[0] = 1;
      long counter = 0;  // the token orders every access
      s.run(p, [&](int rank) {
        const int next = (rank + 1) % p;
        for (int lap = 0; lap < laps; ++lap) {
          wait_for(s, rank, token[static_cast<std::size_t>(rank)]);
          ++counter;
          token[static_cast<std::size_t>(next)].store(1, std::memory_order_release);
          s.unpark(next);
        }
      });
      CHECK(counter == static_cast<long>(p) * laps);
    }
  }
}

TEST_CASE("unpark from a plain thread") {
  for (int workers : {1, 2}) {
    CAPTURE(workers);
    fiber_scheduler s(with_workers(workers));
    std::atomic<int> ready{0}, flag{0}, woken{0};
    std::thread helper;
    s.run(2, [&](int rank) {
      if (rank == 0) {
        helper = std::thread([&] {
          while (ready.load() == 0) std::this_thread::yield();
          flag.store(1);
          s.unpark(0);
        });
        ready.store(1);
        wait_for(s, 0, flag);
        woken.store(1);
      } else {
        // Keeps the run from being "all parked" while the helper is on its way: a plain
        // thread's wakeup is invisible to the deadlock check.
        while (woken.load() == 0) s.yield();
      }
    });
    helper.join();
    CHECK(woken.load() == 1);
  }
}

TEST_CASE("a wakeup before the park is not lost") {
  fiber_scheduler s;
  std::atomic<int> passed{0};
  s.run(1, [&](int rank) {
    const std::uint64_t epoch = s.wake_epoch(rank);
    s.unpark(rank);
    s.park(epoch);  // would park forever (a deadlock error) if the unpark were lost
    passed.fetch_add(1);
  });
  CHECK(passed.load() == 1);

  // The same with the unpark from another fiber, between reading the epoch and parking.
  for (int workers : {1, 2}) {
    fiber_scheduler t(with_workers(workers));
    std::atomic<int> epoch_read{0}, unparked{0};
    t.run(2, [&](int rank) {
      if (rank == 0) {
        const std::uint64_t epoch = t.wake_epoch(0);
        epoch_read.store(1);
        while (unparked.load() == 0) t.yield();
        t.park(epoch);
        passed.fetch_add(1);
      } else {
        while (epoch_read.load() == 0) t.yield();
        t.unpark(0);
        unparked.store(1);
      }
    });
  }
  CHECK(passed.load() == 3);
}

TEST_CASE("all fibers parked: run() throws naming them, after unwinding their stacks") {
  for (int workers : {1, 2}) {
    CAPTURE(workers);
    fiber_scheduler s(with_workers(workers));
    std::atomic<int> unwound{0};
    struct on_unwind {
      std::atomic<int>& n;
      ~on_unwind() { n.fetch_add(1); }
    };
    const std::string what = error_of(s, 3, [&](int rank) {
      on_unwind guard{unwound};
      if (rank == 1) return;  // a finished rank is not listed
      for (;;) s.park(s.wake_epoch(rank));
    });
    CHECK(what.find("deadlock") != std::string::npos);
    CHECK(what.find("parked ranks: 0, 2)") != std::string::npos);
    CHECK(unwound.load() == 3);
  }
}

TEST_CASE("all fibers parked: the handler runs once per such state and may unpark them") {
  for (int workers : {1, 2}) {
    CAPTURE(workers);
    constexpr int p = 4, rounds = 3;
    fiber_scheduler s(with_workers(workers));
    std::vector<std::atomic<int>> released(p);
    std::atomic<int> calls{0};
    s.on_all_parked([&] {
      calls.fetch_add(1);
      CHECK(fiber_scheduler::current() == nullptr);
      for (int r = 0; r < p; ++r) {
        released[r].store(1);
        s.unpark(r);
      }
    });
    s.run(p, [&](int rank) {
      for (int i = 0; i < rounds; ++i) wait_for(s, rank, released[static_cast<std::size_t>(rank)]);
    });
    CHECK(calls.load() == rounds);
  }
}

TEST_CASE("a handler that unparks nobody leaves the wakeup to a plain thread") {
  fiber_scheduler s;
  std::atomic<int> calls{0}, flag{0};
  std::thread helper;
  s.on_all_parked([&] {
    if (calls.fetch_add(1) == 0)
      helper = std::thread([&] {
        flag.store(1);
        s.unpark(0);
      });
  });
  s.run(1, [&](int rank) { wait_for(s, rank, flag); });
  helper.join();
  CHECK(calls.load() == 1);
}

namespace {

// A schedule-dependent trace: rank r appends itself, yielding r % 3 + 1 times in between.
std::vector<int> trace(std::uint64_t seed) {
  fiber_options o;
  o.seed = seed;
  fiber_scheduler s(o);
  std::vector<int> out;
  std::vector<std::atomic<int>> flags(6);
  s.run(6, [&](int rank) {
    for (int i = 0; i < 4; ++i) {
      out.push_back(rank);
      for (int y = 0; y <= rank % 3; ++y) s.yield();
    }
    // Parking and unparking are switch points too.
    if (rank > 0) wait_for(s, rank, flags[static_cast<std::size_t>(rank)]);
    out.push_back(100 + rank);
    if (rank + 1 < 6) {
      flags[static_cast<std::size_t>(rank) + 1].store(1);
      s.unpark(rank + 1);
    }
  });
  return out;
}

}  // namespace

TEST_CASE("deterministic mode: a seed fixes the interleaving, other seeds change it") {
  std::set<std::vector<int>> distinct;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<int> first = trace(seed);
    REQUIRE(first.size() == 6 * 5);
    for (int run = 1; run < 20; ++run) REQUIRE(trace(seed) == first);
    distinct.insert(first);
  }
  CHECK(distinct.size() >= 2);
}

TEST_CASE("an exception escaping a body is rethrown by run(), first by rank") {
  for (int workers : {1, 2}) {
    fiber_scheduler s(with_workers(workers));
    std::atomic<int> finished{0};
    const std::string what = error_of(s, 8, [&](int rank) {
      s.yield();
      if (rank == 5 || rank == 2) throw std::runtime_error("boom " + std::to_string(rank));
      finished.fetch_add(1);
    });
    CHECK(what == "boom 2");
    CHECK(finished.load() == 6);
  }
  // Peers that wait forever for the failed rank are cancelled; its exception wins.
  fiber_scheduler s;
  const std::string what = error_of(s, 3, [&](int rank) {
    if (rank == 0) throw std::runtime_error("rank 0 failed");
    s.park(s.wake_epoch(rank));
  });
  CHECK(what == "rank 0 failed");
}

TEST_CASE("fibers that switch inside catch blocks each rethrow their own exception") {
  // The C++ runtime's stack of exceptions being handled is per thread: without moving it
  // with the fiber, fiber 1's catch would end fiber 0's, and `throw;` would rethrow the
  // wrong one (or terminate).
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    fiber_options o;
    o.seed = seed;
    fiber_scheduler s(o);
    std::vector<std::string> rethrown(4);
    s.run(4, [&](int rank) {
      try {
        try {
          throw std::runtime_error("from rank " + std::to_string(rank));
        } catch (const std::exception&) {
          for (int k = 0; k < 3; ++k) s.yield();
          CHECK(std::uncaught_exceptions() == 0);
          throw;
        }
      } catch (const std::exception& e) {
        rethrown[static_cast<std::size_t>(rank)] = e.what();
      }
    });
    for (int r = 0; r < 4; ++r) CHECK(rethrown[static_cast<std::size_t>(r)] == "from rank " + std::to_string(r));
  }
}

TEST_CASE("workers pinned to a cpu run their fibers there") {
  cpu_set_t allowed;
  REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) ++cpu;
  REQUIRE(cpu < CPU_SETSIZE);
  fiber_options o = with_workers(2);
  o.cpus = {cpu};
  fiber_scheduler s(o);
  std::atomic<int> elsewhere{0};
  s.run(8, [&](int) {
    if (sched_getcpu() != cpu) elsewhere.fetch_add(1);
  });
  CHECK(elsewhere.load() == 0);
}

namespace {

long resident_kib() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

}  // namespace

TEST_CASE("4096 fibers with 64 KiB stacks cost only the pages they touch") {
  constexpr int p = 4096;
  fiber_options o = with_workers(2);
  o.stack_bytes = 64 * 1024;
  fiber_scheduler s(o);
  std::atomic<int> started{0};
  std::atomic<long> peak_kib{0};
  const long before = resident_kib();
  s.run(p, [&](int rank) {
    started.fetch_add(1);
    while (started.load() < p) s.yield();  // all stacks are alive at once here
    if (rank == 0) peak_kib.store(resident_kib());
  });
  CHECK(started.load() == p);
  MESSAGE("resident growth with 4096 live fibers: " << (peak_kib.load() - before) / 1024 << " MiB");
  // Fully touched, the stacks alone would be 256 MiB; untouched pages must not count.
  // Not under TSan: it gives every fiber its own thread state of about half a MiB.
#if !RANKLAB_FIBER_TSAN
  CHECK(peak_kib.load() - before < 512 * 1024);
#endif
}

TEST_CASE("impossible sizes: a clear exception, nothing runs") {
  fiber_scheduler s;
  std::atomic<int> ran{0};
  const std::string too_many = error_of(s, 10'000'000, [&](int) { ran.fetch_add(1); });
  CHECK(too_many.find("too many fibers") != std::string::npos);
  CHECK(too_many.find("vm.max_map_count") != std::string::npos);
  fiber_options huge;
  huge.stack_bytes = std::size_t{1} << 46;  // 64 TiB each: the address space runs out
  fiber_scheduler h(huge);
  const std::string no_memory = error_of(h, 8, [&](int) { ran.fetch_add(1); });
  CHECK(no_memory.find("cannot map a fiber stack") != std::string::npos);
  CHECK(ran.load() == 0);
  // The scheduler is still usable.
  s.run(3, [&](int) { ran.fetch_add(1); });
  CHECK(ran.load() == 3);
}

namespace {

// Recursion the compiler can neither remove nor turn into a loop.
int deep(volatile int* keep_going, int depth) {
  volatile char frame[512];
  frame[0] = static_cast<char>(depth);
  if (*keep_going) return deep(keep_going, depth + 1) + frame[0];
  return frame[0];
}

}  // namespace

// Also under ASan: the scheduler installs its SIGSEGV handler over ASan's (which gets every
// fault that is not a guard page), so ASan does not see this fault first.
TEST_CASE("a stack overflow is reported with the rank, in a forked child") {
  const ranklab::testing::child_result r = ranklab::testing::run_in_child([] {
    fiber_options o;
    o.stack_bytes = 32 * 1024;
    fiber_scheduler s(o);
    static volatile int keep_going = 1;
    s.run(5, [&](int rank) {
      if (rank == 3) deep(&keep_going, 0);
    });
  });
  CAPTURE(r.err);
  CAPTURE(r.status);
  CHECK_FALSE(r.exited_cleanly());
  CHECK(r.err.find("ranklab: rank 3 overflowed its fiber stack of 32 KiB") != std::string::npos);
}
