// ranklab::mpi::thread_team under real MPI: `mpirun -n N thread_team_check T [phase...]`
// makes one comm of the N*T threads (T per process) and checks, each rank against a
// sequential reference it computes itself (thread_team_reference.hpp), in phases:
//   world        the world comm's numbering, its ranks OS threads; every collective
//                blocking, nonblocking (eight in flight, completed out of order) and
//                persistent (started three times); the barrier's order by clock
//   comms        split (along and across processes, parity, undefined colours, reversed,
//                interleaving and scrambled keys, one rank each), dup, create, a split of a
//                split; the header's rank order; collectives on each
//   named        algorithms named between processes ({"ring"} ...), in every form
//   environment  RANKLAB_HIERARCHY_ALGORITHMS, set before the team is made
//   failure      one rank (the last process's last thread) throws while the others wait in
//                an allreduce: every rank of every process leaves with an exception
//   attach       the application's own threads attach (a new team, after the failure)
//   mismatch     the last process (or thread) passes another count to an allreduce: some
//                rank must find it, and nothing may hang
// The phases named on the command line run (all by default). Every failure is printed as
// "thread_team_check: process P rank R: FAIL [phase] what"; the exit status is non-zero when
// any rank of any process failed. A run that hangs is ended by a watchdog (MPI_Abort) that
// prints where each thread was (THREAD_TEAM_CHECK_SECONDS, default 100).
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <typeinfo>

#include "thread_team_support.hpp"

namespace team_check {

namespace {

using ranklab::mpi::thread_team;

// Ends a hung run with a message instead of leaving it to the test's timeout.
class watchdog {
 public:
  watchdog(process_log& log, int seconds) : log_(log) {
    thread_ = std::thread([this, seconds] {
      std::unique_lock lock(mutex_);
      if (wake_.wait_for(lock, std::chrono::seconds(seconds), [this] { return stop_; })) return;
      std::fprintf(stderr,
                   "thread_team_check: process %d: FAIL still running after %d s, in phase [%s] (hung?); its "
                   "threads were at:\n%s",
                   log_.process(), seconds, log_.phase().c_str(), log_.steps().c_str());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
    });
  }
  ~watchdog() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

 private:
  process_log& log_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

std::string exception_text(const std::exception& e) {
  const char* kind = dynamic_cast<const ranklab::remote_failure*>(&e)   ? "remote_failure"
                     : dynamic_cast<const ranklab::mismatch_error*>(&e) ? "mismatch_error"
                     : dynamic_cast<const ranklab::usage_error*>(&e)    ? "usage_error"
                     : dynamic_cast<const ranklab::error*>(&e)          ? "ranklab::error"
                                                                        : typeid(e).name();
  return std::string(kind) + ": " + e.what();
}

// team.run(fn) as one phase: a rank whose checks throw reports it (and rethrows, failing the
// team, whose other ranks then leave too); run's rethrow is reported once per process.
bool run_phase(process_log& log, thread_team& team, const std::string& phase,
               const std::function<void(rank_check&, team_comm&)>& fn) {
  log.set_phase(phase);
  try {
    team.run([&](team_comm& c) {
      rank_check k{log, c.rank(), c.local_rank()};
      try {
        fn(k, c);
      } catch (const std::exception& e) {
        k.fail("the rank's checks threw " + exception_text(e));
        throw;
      }
    });
    return true;
  } catch (const std::exception& e) {
    log.fail(-1, "team.run threw " + exception_text(e));
    return false;
  }
}

// The world, communicator and named-algorithm phases on one team (run once per phase: a
// team runs its threads again), remade after a phase that failed.
void main_phases(process_log& log, const std::function<bool(const char*)>& wanted) {
  const int T = log.threads();
  std::unique_ptr<thread_team> team;
  auto fresh = [&] {
    team.reset();
    team = std::make_unique<thread_team>(MPI_COMM_WORLD, T);
  };
  log.set_phase("world");
  fresh();
  auto same = [&](const char* what, int got, int expected) {
    log.count_check();
    if (got != expected)
      log.fail(-1, std::string("thread_team::") + what + "() is " + std::to_string(got) + ", expected " +
                       std::to_string(expected));
  };
  same("processes", team->processes(), log.processes());
  same("threads", team->threads(), T);
  same("size", team->size(), log.processes() * T);
  same("process", team->process(), log.process());

  if (wanted("world")) {
    std::vector<std::atomic<int>> slots(static_cast<std::size_t>(T));
    // The ranks must be OS threads (thread_team_options), also where T exceeds the cores and
    // a plain team's automatic execution would pick fibers: ranks that are fibers of one
    // thread deadlock as soon as one blocks in MPI (making a comm) while another of them
    // must make its part of that call.
    std::vector<std::thread::id> os_thread(static_cast<std::size_t>(T));
    const bool ok = run_phase(log, *team, "world", [&](rank_check& k, team_comm& c) {
      if (c.local_rank() >= 0 && c.local_rank() < T)
        os_thread[static_cast<std::size_t>(c.local_rank())] = std::this_thread::get_id();
      structure(k, c, slots.data());
      world_collectives(k, c);
    });
    for (int t = 0; t < T; ++t) {
      log.count_check();
      if (slots[static_cast<std::size_t>(t)] != 1)
        log.fail(-1, "world comm: local rank " + std::to_string(t) + " held by " +
                         std::to_string(slots[static_cast<std::size_t>(t)].load()) + " threads of the process");
      for (int u = 0; u < t; ++u) {
        log.count_check();
        if (os_thread[static_cast<std::size_t>(t)] == os_thread[static_cast<std::size_t>(u)])
          log.fail(-1, "world comm: local ranks " + std::to_string(u) + " and " + std::to_string(t) +
                           " ran on one OS thread (fibers?), but a thread_team's ranks must be threads");
      }
    }
    if (!ok) fresh();
  }
  if (wanted("comms") && !run_phase(log, *team, "comms", communicators)) fresh();
  if (wanted("named")) run_phase(log, *team, "named", named_algorithms);
}

void environment_phase(process_log& log) {
  log.set_phase("environment");
  // Read when the team makes its comm's hierarchy: set before the team, undone after it.
  setenv("RANKLAB_HIERARCHY_ALGORITHMS", "process:allreduce=reduce_bcast,process:bcast=linear", 1);
  {
    thread_team team(MPI_COMM_WORLD, log.threads());
    run_phase(log, team, "environment", environment_algorithms);
  }
  unsetenv("RANKLAB_HIERARCHY_ALGORITHMS");
}

const char* const deliberate = "thread_team_check: the deliberate failure";

// How each thread of this process left run's function: the text of what it threw.
struct departures {
  explicit departures(int threads)
      : how(static_cast<std::size_t>(threads)), ranks(static_cast<std::size_t>(threads), -1) {}
  std::vector<std::string> how;  // empty: returned normally
  std::vector<int> ranks;        // each thread's rank, for the messages
};

// The last rank (the last process's last thread: a non-leader when T > 1) throws, 50 ms
// late so that the others are waiting in their allreduce by then, also between processes.
void failure_phase(process_log& log) {
  log.set_phase("failure");
  const int T = log.threads();
  departures left(T);
  std::string rethrown;
  bool remote = false;
  {
    thread_team team(MPI_COMM_WORLD, T);
    const int victim = team.size() - 1;
    try {
      team.run([&](team_comm& c) {
        const auto t = static_cast<std::size_t>(c.local_rank());
        left.ranks[t] = c.rank();
        log.step(c.local_rank(), c.rank() == victim ? "the victim: about to throw" : "in the allreduce");
        if (c.rank() == victim) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          left.how[t] = deliberate;
          throw std::runtime_error(deliberate);
        }
        std::vector<std::int32_t> in(64, c.rank()), out(64);
        try {
          c.allreduce(in, out, ranklab::ops::sum);
        } catch (const std::exception& e) {
          left.how[t] = exception_text(e);
          throw;
        }
      });
    } catch (const ranklab::remote_failure& e) {
      rethrown = exception_text(e);
      remote = true;
    } catch (const std::exception& e) {
      rethrown = exception_text(e);
    }
    log.step(0, "destroying the failed team");
  }
  const bool victim_process = log.process() == log.processes() - 1;
  for (int t = 0; t < T; ++t) {
    const std::string& how = left.how[static_cast<std::size_t>(t)];
    log.count_check();
    const bool ok = how.rfind("remote_failure", 0) == 0 || how.find(deliberate) != std::string::npos;
    if (!ok)
      log.fail(left.ranks[static_cast<std::size_t>(t)],
               how.empty() ? "returned from an allreduce that a failed rank never entered"
                           : "left with " + how + ", expected remote_failure or the original error");
  }
  log.count_check();
  if (rethrown.empty()) {
    log.fail(-1, "team.run returned normally although a rank threw");
  } else if (victim_process && rethrown.find(deliberate) == std::string::npos) {
    log.fail(-1, "team.run rethrew " + rethrown + ", expected the deliberate error (the first failure here)");
  } else if (!victim_process && !remote) {
    log.fail(-1, "team.run rethrew " + rethrown + ", expected remote_failure (the failure was in another process)");
  }
}

// The application's own threads attach (thread_team::attach), on a new team after the
// failure phase: nothing of the failed one may linger.
void attach_phase(process_log& log) {
  log.set_phase("attach");
  const int T = log.threads(), P = log.process();
  thread_team team(MPI_COMM_WORLD, T);
  std::vector<std::thread> threads;
  for (int t = 0; t < T; ++t)
    threads.emplace_back([&, t] {
      rank_check k{log, P * T + t, t};
      try {
        team_comm c = team.attach(t);
        k.expect(c.rank() == P * T + t, "attach(" + std::to_string(t) + "): rank " + std::to_string(c.rank()) +
                                            ", expected " + std::to_string(P * T + t));
        k.expect(c.size() == log.processes() * T, "attach: size " + std::to_string(c.size()));
        few_collectives(k, c, "attached threads", 4000);
      } catch (const std::exception& e) {
        k.fail("attached thread threw " + exception_text(e));
      }
    });
  for (auto& t : threads) t.join();
}

// Ranks that disagree on a call's count: the last process's ranks (in one process, the last
// thread) pass 5 elements, the others 6. Some rank must find the disagreement (an error other
// than remote_failure), every exception must be ranklab's, a process whose ranks threw must
// have run rethrow, and nothing may hang. A rank may return normally: its part of the call
// can be over before any rank sees the disagreement (a bcast's root), so that is allowed.
void mismatch_phase(process_log& log) {
  log.set_phase("mismatch");
  const int T = log.threads(), N = log.processes();
  if (N == 1 && T == 1) return;  // no one to disagree with
  departures left(T);
  bool threw = false;
  {
    thread_team team(MPI_COMM_WORLD, T);
    try {
      team.run([&](team_comm& c) {
        const auto t = static_cast<std::size_t>(c.local_rank());
        left.ranks[t] = c.rank();
        const bool odd_one = N > 1 ? c.process() == N - 1 : c.local_rank() == T - 1;
        const std::size_t n = odd_one ? 5 : 6;
        std::vector<std::int32_t> in(n, 1), out(n);
        log.step(c.local_rank(), "in an allreduce of " + std::to_string(n) + " elements");
        try {
          c.allreduce(in, out, ranklab::ops::sum);
        } catch (const std::exception& e) {
          left.how[t] = exception_text(e);
          throw;
        }
      });
    } catch (const std::exception&) {
      threw = true;
    }
  }
  int found = 0;
  bool any_threw = false;
  for (int t = 0; t < T; ++t) {
    const std::string& how = left.how[static_cast<std::size_t>(t)];
    if (how.empty()) continue;
    any_threw = true;
    log.count_check();
    const bool remote = how.rfind("remote_failure", 0) == 0;
    if (!remote && how.rfind("mismatch_error", 0) != 0 && how.rfind("usage_error", 0) != 0 &&
        how.rfind("ranklab::error", 0) != 0)
      log.fail(left.ranks[static_cast<std::size_t>(t)], "mismatched allreduce: left with " + how);
    if (!remote) ++found;
  }
  log.count_check();
  if (any_threw && !threw) log.fail(-1, "mismatch: ranks here threw, but team.run returned normally");
  int found_anywhere = 0;
  MPI_Allreduce(&found, &found_anywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  log.count_check();
  if (found_anywhere == 0 && log.process() == 0)
    log.fail(-1, "no rank of any process found that the ranks passed 5 and 6 elements to one allreduce");
}

}  // namespace

}  // namespace team_check

int main(int argc, char** argv) {
  using namespace team_check;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int process = 0, processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const int T = argc > 1 ? std::atoi(argv[1]) : 0;
  if (T < 1) {
    if (process == 0) std::fprintf(stderr, "usage: mpirun -n N %s T [phase...]  (T threads per process)\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  std::vector<std::string> only(argv + 2, argv + argc);
  auto wanted = [&](const char* phase) {
    return only.empty() || std::find(only.begin(), only.end(), phase) != only.end();
  };

  const auto start = std::chrono::steady_clock::now();
  process_log log(process, processes, T);
  {
    const char* limit = std::getenv("THREAD_TEAM_CHECK_SECONDS");
    watchdog guard(log, limit ? std::atoi(limit) : 100);
    if (provided < MPI_THREAD_MULTIPLE) {
      log.fail(-1, "MPI_Init_thread provided level " + std::to_string(provided) + ", not MPI_THREAD_MULTIPLE");
    } else {
      // Each phase makes its own teams; one that throws at construction fails that phase only.
      auto guarded = [&](const char* phase, const std::function<void()>& body) {
        try {
          body();
        } catch (const std::exception& e) {
          log.fail(-1, std::string("phase ") + phase + ": " + exception_text(e));
        }
      };
      if (wanted("world") || wanted("comms") || wanted("named")) guarded("main", [&] { main_phases(log, wanted); });
      if (wanted("environment")) guarded("environment", [&] { environment_phase(log); });
      if (wanted("failure")) guarded("failure", [&] { failure_phase(log); });
      if (wanted("attach")) guarded("attach", [&] { attach_phase(log); });
      if (wanted("mismatch")) guarded("mismatch", [&] { mismatch_phase(log); });
    }
    log.set_phase("end");
  }
  int local = log.failures(), failures = 0;
  MPI_Allreduce(&local, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (process == 0)
    std::printf("thread_team_check: %d processes x %d threads: %ld checks in process 0, %d failures, %.1f s\n",
                processes, T, log.checks(), failures, seconds);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
