// Teams (include/ranklab/team.hpp): an application's own std::threads attaching as ranks
// (attach, run_as), failures seen through the team, thread binding as applied and as the
// operating system reports it (automatic: compact when p fits the cores, unbound when
// oversubscribed; none; compact; spread), binding policy names, and team options read from
// the environment. Binding may fail in a container; the tests then only check that the
// failure is reported (empty cpuset, a note), never that it succeeded.
#include <doctest/doctest.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ranklab/ranklab.hpp"

namespace {

using namespace ranklab;
using namespace std::chrono_literals;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct scoped_env {
  std::string name;
  scoped_env(const char* n, const char* value) : name(n) { setenv(n, value, 1); }
  ~scoped_env() { unsetenv(name.c_str()); }
};

// The CPUs the calling thread may run on, as the kernel sees it.
std::vector<int> my_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// "3" -> 3; anything that is not a single number ("0-1", "0,2", "") -> -1.
int single_pu(const std::string& cpuset) {
  if (cpuset.empty() || !std::all_of(cpuset.begin(), cpuset.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return -1;
  return std::stoi(cpuset);
}

// Thread placement: rank threads (fiber workers are placed per core, see test_execution).
team_options with_binding(binding_policy b) {
  team_options o;
  o.binding = b;
  o.execution = execution_mode::threads;
  return o;
}

// Runs p ranks on a team with policy b; returns the bindings and each rank's affinity as
// seen from inside the rank.
struct placement {
  std::vector<binding_info> bindings;
  std::vector<std::vector<int>> affinity;
};
placement place(int p, binding_policy b) {
  team t(p, with_binding(b));
  placement out;
  out.affinity.resize(p);
  run(t, [&](comm& c) {
    out.affinity[c.rank()] = my_cpus();
    c.barrier();
  });
  out.bindings = t.bindings();
  return out;
}

// Checks one rank's binding: either applied (a single PU, which is where the thread runs)
// or reported as not applied (empty cpuset, unbound policy, a note).
void check_bound_or_reported(const binding_info& b, const std::vector<int>& affinity, binding_policy expected) {
  INFO("rank ", b.rank, " policy ", name(b.policy), " core ", b.core, " cpuset '", b.cpuset, "' note '", b.note, "'");
  if (!b.cpuset.empty()) {
    CHECK(b.policy == expected);
    CHECK(b.core >= 0);
    const int pu = single_pu(b.cpuset);
    CHECK(pu >= 0);  // a single hardware thread
    CHECK(affinity == std::vector<int>{pu});
  } else {
    CHECK(b.policy == binding_policy::none);
    CHECK(b.core == -1);
    CHECK_FALSE(b.note.empty());
  }
}

}  // namespace

TEST_SUITE("team") {
  TEST_CASE("machine() describes at least one core and PU") {
    const machine_info m = machine();
    CHECK(m.cores >= 1);
    CHECK(m.hardware_threads >= m.cores);
    CHECK(m.numa_nodes >= 1);
    CHECK_FALSE(m.description.empty());
    MESSAGE("machine: ", m.description);
  }

  TEST_CASE("a team of size p, teams of size < 1 are usage errors") {
    team t(5, team_options{});
    CHECK(t.size() == 5);
    CHECK_FALSE(t.failed());
    CHECK_NOTHROW(t.rethrow_if_failed());
    CHECK_THROWS_AS(team(0, team_options{}), usage_error);
    CHECK_THROWS_AS(team(-3, team_options{}), usage_error);
    CHECK_THROWS_AS(run(
                        0, [](comm&) {}, team_options{}),
                    usage_error);
  }

  TEST_CASE("an application's own std::threads attach as ranks and communicate") {
    for (int p : {1, 2, 3, 7}) {
      team t(p, team_options{});
      std::vector<int> ring_ok(p, 0), sum(p, 0), sizes(p, 0);
      std::vector<std::thread> threads;
      for (int r = 0; r < p; ++r)
        threads.emplace_back([&, r] {
          comm c = t.attach(r);
          sizes[r] = c.size() * 100 + c.rank();
          int token = r * 10, got = -1;
          c.sendrecv((r + 1) % p, std::span(&token, 1), (r + p - 1) % p, std::span(&got, 1));
          ring_ok[r] = got == ((r + p - 1) % p) * 10;
          std::vector<int> v{r};
          c.allreduce(v, ops::sum);
          sum[r] = v[0];
        });
      for (auto& th : threads) th.join();
      CHECK_FALSE(t.failed());
      for (int r = 0; r < p; ++r) {
        CAPTURE(p);
        CAPTURE(r);
        CHECK(sizes[r] == p * 100 + r);
        CHECK(ring_ok[r] == 1);
        CHECK(sum[r] == p * (p - 1) / 2);
      }
      // attach() without bind leaves the threads where they are, and says so.
      for (const binding_info& b : t.bindings()) {
        CHECK(b.policy == binding_policy::none);
        CHECK(b.core == -1);
        CHECK(b.cpuset.empty());
        CHECK(contains(b.note, "not bound"));
      }
    }
  }

  TEST_CASE("attach: each rank once, ranks in range") {
    team t(2, team_options{});
    comm c0 = t.attach(0);
    CHECK(c0.rank() == 0);
    CHECK_THROWS_AS(t.attach(0), usage_error);
    CHECK_THROWS_AS(t.attach(2), usage_error);
    CHECK_THROWS_AS(t.attach(-1), usage_error);
    try {
      t.attach(0);
    } catch (const usage_error& e) {
      CHECK(contains(e.what(), "attached twice"));
    }
    try {
      t.attach(5);
    } catch (const usage_error& e) {
      CHECK(contains(e.what(), "outside 0..1"));
    }
  }

  TEST_CASE("a rank that never attaches: the ranks waiting for it get a deadlock_error naming it, no hang") {
    // Ranks 0 and 1 of a team of 3 call a collective; rank 2's thread never comes. Nothing
    // can move, exactly as in a deadlock, and the detector must say which rank is missing.
    team_options o;
    o.deadlock_timeout = 100ms;
    team t(3, o);
    std::vector<std::string> outcome(2);
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r)
      threads.emplace_back([&, r] {
        try {
          t.run_as(r, [](comm& c) {
            std::vector<int> v(4, c.rank());
            c.allreduce(v, ops::sum, {"ring"});
          });
          outcome[r] = "returned";
        } catch (const deadlock_error& e) {
          outcome[r] = e.what();
        } catch (const std::exception& e) {
          outcome[r] = std::string("other: ") + e.what();
        }
      });
    for (auto& th : threads) th.join();
    for (int r = 0; r < 2; ++r) {
      INFO("rank ", r, ": ", outcome[r]);
      CHECK(contains(outcome[r], "rank 2 never attached"));
      CHECK(contains(outcome[r], "waits for a message from rank"));
    }
    CHECK(t.failed());
  }

  TEST_CASE("a comm can be moved, the moved-to comm keeps the rank") {
    team t(2, team_options{});
    std::vector<int> got(2, -1);
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r)
      threads.emplace_back([&, r] {
        std::vector<comm> holder;
        holder.push_back(t.attach(r));
        comm c = std::move(holder.back());
        holder.clear();  // destroying a moved-from comm must not end the rank
        int x = r + 40;
        c.sendrecv(1 - r, std::span(&x, 1), 1 - r, std::span(&got[r], 1));
      });
    for (auto& th : threads) th.join();
    CHECK(got[0] == 41);
    CHECK(got[1] == 40);
    CHECK_FALSE(t.failed());
  }

  TEST_CASE("run_as from the application's threads: a failure is rethrown where it happened and releases the others") {
    constexpr int p = 4;
    team t(p, team_options{});
    std::vector<std::string> outcome(p);
    std::vector<std::thread> threads;
    for (int r = 0; r < p; ++r)
      threads.emplace_back([&, r] {
        try {
          t.run_as(r, [](comm& c) {
            if (c.rank() == 1) throw std::logic_error("rank one fails");
            std::vector<int> v(4, 1);
            c.allreduce(v, ops::sum);
          });
          outcome[r] = "ok";
        } catch (const remote_failure& e) {
          outcome[r] = "remote_failure " + std::to_string(e.origin_rank());
        } catch (const std::logic_error& e) {
          outcome[r] = std::string("logic_error ") + e.what();
        } catch (...) {
          outcome[r] = "other";
        }
      });
    for (auto& th : threads) th.join();
    CHECK(outcome[1] == "logic_error rank one fails");
    for (int r : {0, 2, 3}) CHECK(outcome[r] == "remote_failure 1");
    CHECK(t.failed());
    CHECK_THROWS_WITH_AS(t.rethrow_if_failed(), "rank one fails", std::logic_error);
  }

  TEST_CASE("run_as without failures, run(team, fn) on a team the application made") {
    constexpr int p = 3;
    team t(p, team_options{});
    std::vector<int> sum(p);
    std::vector<std::thread> threads;
    for (int r = 0; r < p; ++r)
      threads.emplace_back([&, r] {
        t.run_as(r, [&](comm& c) {
          std::vector<int> v{c.rank() + 1};
          c.allreduce(v, ops::prod);
          sum[c.rank()] = v[0];
        });
      });
    for (auto& th : threads) th.join();
    CHECK_FALSE(t.failed());
    for (int r = 0; r < p; ++r) CHECK(sum[r] == 6);

    team u(4, with_binding(binding_policy::none));
    std::atomic<int> ran{0};
    run(u, [&](comm& c) {
      c.barrier();
      ++ran;
    });
    CHECK(ran == 4);
  }

  TEST_CASE("binding, automatic policy, p <= cores: compact, one PU per rank, different cores (when binding works)") {
    const int cores = machine().cores;
    for (int p = 1; p <= std::min(cores, 8); ++p) {
      const placement pl = place(p, binding_policy::automatic);
      REQUIRE(pl.bindings.size() == static_cast<std::size_t>(p));
      std::set<int> used_cores, used_pus;
      int bound = 0;
      for (int r = 0; r < p; ++r) {
        const binding_info& b = pl.bindings[r];
        CHECK(b.rank == r);
        check_bound_or_reported(b, pl.affinity[r], binding_policy::compact);
        if (!b.cpuset.empty()) {
          ++bound;
          CHECK(b.core == r % cores);
          used_cores.insert(b.core);
          used_pus.insert(single_pu(b.cpuset));
        }
      }
      if (bound == p) {
        CHECK(used_cores.size() == static_cast<std::size_t>(p));
        CHECK(used_pus.size() == static_cast<std::size_t>(p));
      } else {
        MESSAGE("binding not applied for ", p - bound, " of ", p, " ranks: ", pl.bindings[0].note);
      }
    }
  }

  TEST_CASE("binding, automatic policy, oversubscribed: unbound, with a note") {
    const int cores = machine().cores;
    for (int p : {cores + 1, 2 * cores + 1, 16}) {
      if (p <= cores) continue;
      const placement pl = place(p, binding_policy::automatic);
      const std::vector<int> process_cpus = my_cpus();
      for (int r = 0; r < p; ++r) {
        const binding_info& b = pl.bindings[r];
        CAPTURE(r);
        CHECK(b.policy == binding_policy::none);
        CHECK(b.core == -1);
        CHECK(b.cpuset.empty());
        CHECK(contains(b.note, "oversubscribed"));
        CHECK(pl.affinity[r] == process_cpus);  // left where the process may run
      }
    }
  }

  TEST_CASE("binding_policy::none leaves every rank unbound") {
    const placement pl = place(3, binding_policy::none);
    const std::vector<int> process_cpus = my_cpus();
    for (int r = 0; r < 3; ++r) {
      const binding_info& b = pl.bindings[r];
      CHECK(b.policy == binding_policy::none);
      CHECK(b.core == -1);
      CHECK(b.cpuset.empty());
      CHECK(contains(b.note, "disabled"));
      CHECK(pl.affinity[r] == process_cpus);
    }
  }

  TEST_CASE("binding_policy::compact, also when oversubscribed: rank r on core r mod cores (when binding works)") {
    const int cores = machine().cores;
    for (int p : {1, cores, cores + 1, 2 * cores + 1}) {
      const placement pl = place(p, binding_policy::compact);
      for (int r = 0; r < p; ++r) {
        const binding_info& b = pl.bindings[r];
        check_bound_or_reported(b, pl.affinity[r], binding_policy::compact);
        if (!b.cpuset.empty()) CHECK(b.core == r % cores);
      }
    }
  }

  TEST_CASE("binding_policy::spread: one PU per rank (when binding works)") {
    const int cores = machine().cores;
    for (int p : {1, 2, cores, cores + 1}) {
      const placement pl = place(p, binding_policy::spread);
      std::set<int> pus;
      int bound = 0;
      for (int r = 0; r < p; ++r) {
        check_bound_or_reported(pl.bindings[r], pl.affinity[r], binding_policy::spread);
        if (!pl.bindings[r].cpuset.empty()) {
          ++bound;
          pus.insert(single_pu(pl.bindings[r].cpuset));
        }
      }
      if (bound == p && p <= machine().hardware_threads) CHECK(pus.size() == static_cast<std::size_t>(p));
    }
  }

  TEST_CASE("run_as(..., bind = true) binds an application thread with the team's policy") {
    const int cores = machine().cores;
    team t(1, with_binding(binding_policy::compact));
    std::vector<int> affinity;
    std::thread th([&] {
      t.run_as(
          0, [&](comm&) { affinity = my_cpus(); }, true);
    });
    th.join();
    const binding_info b = t.bindings()[0];
    check_bound_or_reported(b, affinity, binding_policy::compact);
    if (!b.cpuset.empty()) CHECK(b.core == 0 % cores);
  }

  TEST_CASE("binding policy names round-trip, unknown names are usage errors listing the choices") {
    for (binding_policy b :
         {binding_policy::automatic, binding_policy::compact, binding_policy::spread, binding_policy::none})
      CHECK(binding_from_name(name(b)) == b);
    CHECK(name(binding_policy::automatic) == "auto");
    try {
      binding_from_name("everywhere");
      FAIL("no error");
    } catch (const usage_error& e) {
      CHECK(contains(e.what(), "everywhere"));
      CHECK(contains(e.what(), "compact"));
    }
  }

  TEST_CASE("team options from the environment: RANKLAB_BINDING, _EAGER_LIMIT, _TRACE, _DEADLOCK_MS") {
    {
      const team_options d = team_options::from_environment();  // nothing set
      CHECK(d.binding == binding_policy::automatic);
      CHECK(d.eager_limit == 2048);
      CHECK_FALSE(d.trace);
      CHECK(d.deadlock_timeout == 400ms);
    }
    {
      scoped_env b("RANKLAB_BINDING", "none"), e("RANKLAB_EAGER_LIMIT", "100"), t("RANKLAB_TRACE", "1"),
          d("RANKLAB_DEADLOCK_MS", "123");
      const team_options o = team_options::from_environment();
      CHECK(o.binding == binding_policy::none);
      CHECK(o.eager_limit == 100);
      CHECK(o.trace);
      CHECK(o.deadlock_timeout == 123ms);
      // A team built with the default argument reads the environment.
      team tm(2);
      CHECK(tm.options().binding == binding_policy::none);
      CHECK(tm.options().eager_limit == 100);
      CHECK(tm.options().trace);
      CHECK(tm.options().deadlock_timeout == 123ms);
      run(tm, [](comm& c) {
        int x = c.rank(), y = -1;
        c.sendrecv(1 - c.rank(), std::span(&x, 1), 1 - c.rank(), std::span(&y, 1));
      });
      for (const binding_info& bi : tm.bindings()) CHECK(bi.policy == binding_policy::none);
      CHECK(tm.trace().size() == 2);  // tracing is on: one event per rank
    }
    {
      scoped_env e("RANKLAB_EAGER_LIMIT", "100000"), t("RANKLAB_TRACE", "0"), b("RANKLAB_BINDING", "spread");
      CHECK(team_options::from_environment().eager_limit == 100000);
      CHECK_FALSE(team_options::from_environment().trace);
      CHECK(team_options::from_environment().binding == binding_policy::spread);
      team tm(2);
      CHECK(tm.options().eager_limit == max_eager_limit);  // capped
    }
    {
      scoped_env b("RANKLAB_BINDING", "bogus");
      CHECK_THROWS_AS(team_options::from_environment(), usage_error);
    }
    {
      // An empty variable counts as unset.
      scoped_env b("RANKLAB_BINDING", ""), e("RANKLAB_EAGER_LIMIT", ""), t("RANKLAB_TRACE", "");
      const team_options o = team_options::from_environment();
      CHECK(o.binding == binding_policy::automatic);
      CHECK(o.eager_limit == 2048);
      CHECK_FALSE(o.trace);
    }
    // And everything is back to the defaults.
    CHECK(team_options::from_environment().binding == binding_policy::automatic);
  }

  TEST_CASE("RANKLAB_DEADLOCK_MS shortens deadlock detection for ranklab::run with default options") {
    scoped_env d("RANKLAB_DEADLOCK_MS", "50");
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(run(2,
                        [](comm& c) {
                          int x;
                          c.recv(1 - c.rank(), std::span(&x, 1));
                        }),
                    deadlock_error);
    MESSAGE("deadlock with RANKLAB_DEADLOCK_MS=50 reported after ",
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), " s");
  }

}  // TEST_SUITE
