// Execution modes (team_options::execution, seed, stack_bytes): how auto resolves, what
// each mode refuses, collectives on fibers against a sequential reference, failures and
// deadlocks on fibers, deterministic mode replaying a program exactly, explore() finding
// the seed of an ordering bug, and a stack overflow reported with its rank. The other
// suites run in every mode through ctest (tests/CMakeLists.txt sets RANKLAB_EXECUTION and
// RANKLAB_SEED for them), so this one only covers what is particular to the modes.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ranklab/ranklab.hpp"
#include "test_support.hpp"

namespace {

using namespace ranklab;
using testing::contains;
using testing::error_of;
using testing::scoped_env;

team_options mode(execution_mode m) {
  team_options o;
  o.execution = m;
  return o;
}

team_options seeded(std::uint64_t seed, bool trace = false) {
  team_options o;
  o.seed = seed;
  o.trace = trace;
  return o;
}

// The trace of one deterministic run, as JSON lines.
std::string trace_of(int p, std::uint64_t seed, const std::function<void(comm&)>& fn) {
  team t(p, seeded(seed, true));
  run(t, fn);
  std::ostringstream out;
  t.write_trace_json_lines(out);
  return out.str();
}

// The order in which the ranks' code between calls runs: after each of three barriers every
// rank appends its rank to a shared list. Which rank leaves a barrier first is the
// schedule's choice, so the list is the interleaving.
std::vector<int> arrival_order(int p, std::uint64_t seed) {
  std::vector<int> order;
  std::mutex m;
  run(
      p,
      [&](comm& c) {
        for (int k = 0; k < 3; ++k) {
          c.barrier();
          std::lock_guard lock(m);
          order.push_back(c.rank());
        }
      },
      seeded(seed));
  return order;
}

}  // namespace

TEST_SUITE("execution") {
  TEST_CASE("mode names round-trip and unknown names are usage errors") {
    for (auto m : {execution_mode::automatic, execution_mode::threads, execution_mode::fibers})
      CHECK(execution_from_name(name(m)) == m);
    CHECK(contains(error_of([] { execution_from_name("green"); }), "unknown mode 'green'"));
  }

  TEST_CASE("environment: RANKLAB_EXECUTION, RANKLAB_SEED and RANKLAB_STACK_KIB, with errors for bad values") {
    {
      scoped_env x("RANKLAB_EXECUTION", "fibers"), s("RANKLAB_SEED", "42"), k("RANKLAB_STACK_KIB", "64");
      const team_options o = team_options::from_environment();
      CHECK(o.execution == execution_mode::fibers);
      REQUIRE(o.seed.has_value());
      CHECK(*o.seed == 42);
      CHECK(o.stack_bytes == 64 * 1024);
    }
    {
      scoped_env x("RANKLAB_EXECUTION", "processes");
      CHECK(contains(error_of([] { team_options::from_environment(); }), "RANKLAB_EXECUTION"));
    }
    {
      scoped_env s("RANKLAB_SEED", "-3");
      CHECK(contains(error_of([] { team_options::from_environment(); }), "RANKLAB_SEED"));
    }
  }

  TEST_CASE("auto is threads while every rank has a core, fibers beyond; a seed or fibers forces fibers") {
    const int cores = machine().cores;
    CHECK(team(cores, mode(execution_mode::automatic)).execution() == execution_mode::threads);
    CHECK(team(cores + 1, mode(execution_mode::automatic)).execution() == execution_mode::fibers);
    CHECK(team(1, mode(execution_mode::fibers)).execution() == execution_mode::fibers);
    CHECK(team(cores + 5, mode(execution_mode::threads)).execution() == execution_mode::threads);
    CHECK(team(1, seeded(3)).execution() == execution_mode::fibers);
    team_options progress = mode(execution_mode::automatic);
    progress.progress_thread = true;
    CHECK(team(cores + 1, progress).execution() == execution_mode::threads);
  }

  TEST_CASE("what a mode refuses: attach on fibers, a seed with threads, progress threads on fibers, tiny stacks") {
    team fibers(2, mode(execution_mode::fibers));
    CHECK(contains(error_of([&] { fibers.attach(0); }), "fibers"));
    team_options o = seeded(1);
    o.execution = execution_mode::threads;
    CHECK(contains(error_of([&] { team t(2, o); }), "seed"));
    o = mode(execution_mode::fibers);
    o.progress_thread = true;
    CHECK(contains(error_of([&] { team t(2, o); }), "progress threads"));
    o = mode(execution_mode::fibers);
    o.stack_bytes = 1024;
    CHECK(contains(error_of([&] { team t(2, o); }), "stack_bytes"));
    // auto with attach: the application's threads are the ranks.
    team automatic(3, mode(execution_mode::automatic));
    CHECK_NOTHROW(automatic.attach(0));
  }

  TEST_CASE("fibers: allreduce, bcast, alltoall and sendrecv rings match the reference for p = 1..17 and 64") {
    for (int p : {1, 2, 3, 5, 8, 16, 17, 64}) {
      CAPTURE(p);
      for (auto opts : {mode(execution_mode::fibers), seeded(11)}) {
        std::atomic<int> wrong{0};
        run(
            p,
            [&](comm& c) {
              const int me = c.rank();
              std::vector<std::int64_t> v(5);
              for (int i = 0; i < 5; ++i) v[i] = me * 10 + i;
              std::vector<std::int64_t> sum(5);
              c.allreduce(v, sum, ops::sum);
              for (int i = 0; i < 5; ++i)
                if (sum[i] != 10LL * p * (p - 1) / 2 + static_cast<std::int64_t>(i) * p) ++wrong;
              std::vector<int> b(3, me == p - 1 ? 7 : 0);
              c.bcast(b, p - 1);
              if (b != std::vector<int>(3, 7)) ++wrong;
              std::vector<int> out(static_cast<std::size_t>(p)), in(static_cast<std::size_t>(p));
              for (int j = 0; j < p; ++j) out[j] = me * 1000 + j;
              c.alltoall(out, in);
              for (int j = 0; j < p; ++j)
                if (in[j] != j * 1000 + me) ++wrong;
              int left = -1;
              const int mine = me;
              for (int k = 0; k < 3; ++k)
                c.sendrecv((me + 1) % p, std::span(&mine, 1), (me + p - 1) % p, std::span(&left, 1));
              if (left != (me + p - 1) % p) ++wrong;
            },
            opts);
        CHECK(wrong == 0);
      }
    }
  }

  TEST_CASE(
      "fibers: nonblocking requests polled with test() in a loop finish (test lets the worker's other ranks run)") {
    for (auto opts : {mode(execution_mode::fibers), seeded(5)}) {
      std::atomic<int> wrong{0};
      run(
          9,
          [&](comm& c) {
            std::vector<int> v(4, c.rank() + 1), out(4);
            request r = c.iallreduce(v, out, ops::sum);
            while (!r.test()) {
            }
            if (out != std::vector<int>(4, 45)) ++wrong;
          },
          opts);
      CHECK(wrong == 0);
    }
  }

  TEST_CASE("fibers: a throwing rank releases the others, run rethrows it; a deadlock is reported at once") {
    for (auto opts : {mode(execution_mode::fibers), seeded(2)}) {
      std::atomic<int> released{0};
      const std::string thrown = error_of([&] {
        run(
            12,
            [&](comm& c) {
              if (c.rank() == 7) throw std::runtime_error("rank seven gives up");
              try {
                c.barrier();
              } catch (const remote_failure&) {
                ++released;
                throw;
              }
            },
            opts);
      });
      CHECK(contains(thrown, "rank seven gives up"));
      CHECK(released == 11);

      // Every rank parked: no timeout to wait for (the deadlock timeout is a minute here).
      opts.deadlock_timeout = std::chrono::milliseconds(60000);
      const auto t0 = std::chrono::steady_clock::now();
      const std::string deadlock = error_of([&] {
        run(
            6,
            [](comm& c) {
              int x = 0;
              c.recv((c.rank() + 1) % c.size(), std::span(&x, 1));
            },
            opts);
      });
      CHECK(contains(deadlock, "every live rank is blocked"));
      CHECK(contains(deadlock, "rank 5 waits for a message from rank 0"));
      CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
    }
  }

  TEST_CASE("fibers: every rank reports the worker it runs on") {
    team t(5, mode(execution_mode::fibers));
    run(t, [](comm&) {});
    for (const binding_info& b : t.bindings()) CHECK(contains(b.note, "fiber on worker"));
  }

  TEST_CASE("deterministic mode: the same seed gives byte-identical traces, run after run") {
    auto program = [](comm& c) {
      std::vector<double> v(3, c.rank());
      c.allreduce(v, ops::sum, {"recursive_doubling"});
      int x = c.rank(), y = -1;
      c.sendrecv((c.rank() + 3) % c.size(), std::span(&x, 1), (c.rank() + c.size() - 3) % c.size(), std::span(&y, 1));
      c.bcast(v, 2, {"binomial"});
      c.barrier();
    };
    const std::string first = trace_of(7, 99, program);
    REQUIRE_FALSE(first.empty());
    for (int i = 0; i < 30; ++i) CHECK(trace_of(7, 99, program) == first);
    int different = 0;
    for (std::uint64_t s = 1; s <= 10; ++s) different += trace_of(7, s, program) != first;
    CHECK(different > 0);
  }

  TEST_CASE("deterministic mode: the user's code between calls runs in the order the seed fixes") {
    const std::vector<int> once = arrival_order(6, 17);
    for (int i = 0; i < 10; ++i) CHECK(arrival_order(6, 17) == once);
    std::vector<int> counts(6, 0);
    for (int r : once) ++counts[static_cast<std::size_t>(r)];
    CHECK(counts == std::vector<int>(6, 3));  // every rank, after every barrier
    std::set<std::vector<int>> orders;
    for (std::uint64_t s = 1; s <= 20; ++s) orders.insert(arrival_order(6, s));
    CHECK(orders.size() > 1);
  }

  TEST_CASE("explore: finds the seed of an ordering bug in user code, and that seed replays it") {
    // The bug: rank 0 sets `ready` after the barrier and rank 1 reads it after the barrier,
    // but nothing orders that write before that read: whichever rank completes the barrier
    // runs on first. Some interleavings run rank 1 first.
    auto racy = [](std::atomic<int>& ready) {
      return [&ready](comm& c) {
        if (c.rank() == 0) ready = 0;
        c.barrier();
        if (c.rank() == 0) ready = 1;
        if (c.rank() == 1 && ready.load() != 1) throw std::logic_error("rank 1 read ready before rank 0 set it");
      };
    };
    std::atomic<int> ready{0};
    explore_options eo;
    eo.seeds = 200;
    const exploration found = explore(3, racy(ready), eo);
    REQUIRE(found.failing_seed.has_value());
    CHECK(found.runs == *found.failing_seed - eo.first_seed + 1);
    CHECK(contains(found.what, "rank 1 read ready before rank 0 set it"));
    // Replaying the seed fails the same way, every time.
    for (int i = 0; i < 5; ++i)
      CHECK(contains(error_of([&] { run(3, racy(ready), seeded(*found.failing_seed)); }), "rank 1 read ready"));
    // A correct program survives every seed.
    const exploration clean = explore(
        3,
        [](comm& c) {
          int x = c.rank();
          c.allreduce(std::span(&x, 1), ops::max);
          if (x != 2) throw std::logic_error("wrong maximum");
        },
        eo);
    CHECK_FALSE(clean.failing_seed.has_value());
    CHECK(clean.runs == eo.seeds);
  }

  TEST_CASE("fibers: 1024 ranks pass a token around a ring, 4096 ranks meet at a barrier") {
    constexpr int p = 1024;
    std::atomic<int> wrong{0};
    run(
        p,
        [&](comm& c) {
          int token = c.rank() == 0 ? 1 : 0;
          for (int k = 0; k < 3; ++k) {
            int in = -1;
            c.sendrecv((c.rank() + 1) % p, std::span(&token, 1), (c.rank() + p - 1) % p, std::span(&in, 1));
            token = in;
          }
          if (token != (c.rank() == 3 % p ? 1 : 0)) ++wrong;
        },
        mode(execution_mode::fibers));
    CHECK(wrong == 0);
    team_options o = mode(execution_mode::fibers);
    o.stack_bytes = 64 * 1024;
    std::atomic<int> passed{0};
#if defined(__SANITIZE_THREAD__)
    const int most = 512;  // ThreadSanitizer keeps ~0.5 MiB of state per fiber
#else
    const int most = max_team_size;
#endif
    run(
        most,
        [&](comm& c) {
          c.barrier();
          ++passed;
        },
        o);
    CHECK(passed == most);
  }

  TEST_CASE("fibers: a stack overflow is reported with the rank and the stack size, not as silent corruption") {
    const testing::child_result r = testing::run_in_child([] {
      team_options o = mode(execution_mode::fibers);
      o.stack_bytes = 64 * 1024;
      run(
          4,
          [](comm& c) {
            if (c.rank() != 3) return;
            // Unbounded recursion the optimizer cannot remove (nor inline into one frame
            // larger than the guard).
            struct deep {
              [[gnu::noinline]] static int down(int n) {
                volatile char pad[512];
                pad[0] = static_cast<char>(n);
                return down(n + 1) + pad[0];
              }
            };
            deep::down(0);
          },
          o);
    });
    CAPTURE(r.err);
    CHECK_FALSE(r.exited_cleanly());
    CHECK(contains(r.err, "rank 3 overflowed its fiber stack of 64 KiB"));
  }
  // Threads that sleep at once on every wait, so that every message, fence and release
  // goes through the sleep/wake protocol: with the asymmetric barrier (membarrier on the
  // sleeper's side, none on the publisher's) and, in a child process (the choice is made
  // once per process), with full fences on both sides. A lost wake-up would not hang (the
  // futex wait times out and looks again) but each one costs a timeout; the results are
  // what is checked here, for both protocols, with flag fences (p <= 8) and the counter (9).
  TEST_CASE("sleep and wake: collectives stay correct when every wait sleeps at once, with either barrier protocol") {
    auto play = [] {
      std::string problems;
      for (int p : {2, 3, 5, 8, 9}) {
        team_options o = mode(execution_mode::threads);
        o.spin_polls = 0;
        o.yields = 0;
        std::vector<std::string> bad(p);
        run(
            p,
            [&](comm& c) {
              const int r = c.rank();
              for (int i = 0; i < 20; ++i) {
                for (const char* a : {"counter", "dissemination"}) c.barrier({a});
                std::vector<int> in(3, r + i), out(3);
                for (const char* a : {"slots", "recursive_doubling"}) {
                  c.allreduce(in, out, ops::sum, {a});
                  if (out[0] != p * (p - 1) / 2 + p * i) bad[r] += std::string("allreduce ") + a + "; ";
                }
                const int root = i % p;
                for (const char* a : {"slots", "binomial"}) {
                  std::vector<int> v(4, r == root ? 1000 + i : -1);
                  c.bcast(v, root, {a});
                  if (v[3] != 1000 + i) bad[r] += std::string("bcast ") + a + "; ";
                  std::vector<int> all(r == root ? p : 0);
                  c.gather(std::vector<int>{r * i}, all, root, {a});
                  for (int k = 0; r == root && k < p; ++k)
                    if (all[k] != k * i) bad[r] += std::string("gather ") + a + "; ";
                }
                std::vector<int> got(1, -1);
                c.sendrecv((r + 1) % p, std::vector<int>{r}, (r + p - 1) % p, got);
                if (got[0] != (r + p - 1) % p) bad[r] += "sendrecv; ";
              }
            },
            o);
        for (int r = 0; r < p; ++r)
          if (!bad[r].empty()) problems += "p " + std::to_string(p) + " rank " + std::to_string(r) + ": " + bad[r];
      }
      return problems;
    };
    const std::string here = play();
    CHECK_MESSAGE(here.empty(), here);
    const testing::child_result full_fences = testing::run_in_child([&] {
      setenv("RANKLAB_ASYMMETRIC_FENCES", "0", 1);
      const std::string there = play();
      if (!there.empty()) {
        std::fputs(there.c_str(), stderr);
        std::_Exit(1);
      }
    });
    CAPTURE(full_fences.err);
    CHECK(full_fences.exited_cleanly());
  }
}
