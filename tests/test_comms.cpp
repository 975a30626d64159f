// Communicators (comm::split, dup, create, split_type; docs/communicators.md): membership
// and numbering against MPI's rules computed here, every registered algorithm on split
// sub-comms against the sequential reference (blocking, nonblocking and persistent), calls
// interleaved on overlapping comms with requests outstanding on several, failures,
// mismatches and deadlocks inside sub-comms, synthetic topologies, re-attaching ranks,
// deterministic replay with splits, and thousands of comms created and destroyed.
#include <doctest/doctest.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "call_sweeps.hpp"
#include "ranklab/ranklab.hpp"
#include "test_support.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

// The groups split(color(r), key(r)) must form, by MPI's rule, computed without ranklab:
// for each colour, its ranks ordered by (key, rank).
std::map<int, std::vector<int>> expected_groups(int p, const std::function<int(int)>& color,
                                                const std::function<int(int)>& key) {
  std::map<int, std::vector<int>> groups;
  for (int r = 0; r < p; ++r)
    if (color(r) >= 0) groups[color(r)].push_back(r);
  for (auto& [c, members] : groups)
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return key(a) < key(b); });
  return groups;
}

// The sub-comm shape of the conformance runs: colour rank % 3, keys reversed, and (for p
// > 4) the last rank alone in a colour of its own.
int irregular_color(int r, int p) { return p > 4 && r == p - 1 ? 3 : r % 3; }
int reversed_key(int r) { return -r; }

}  // namespace

TEST_CASE("split: colours, keys and undefined follow MPI's rule") {
  for (int p : {1, 2, 3, 5, 8, 13, 17}) {
    INFO("p = ", p);
    auto color = [p](int r) { return r == p / 2 && p > 2 ? undefined : (r * 7) % 3; };
    auto key = [](int r) { return (r * 5) % 4; };  // ties: broken by rank
    const auto groups = expected_groups(p, color, key);
    std::vector<int> got_rank(p, -2), got_size(p, -2), got_world(p, -2);
    std::vector<std::vector<int>> members_seen(p);
    run(p, [&](comm& c) {
      CHECK(c.world_rank() == c.rank());
      std::optional<comm> s = c.split(color(c.rank()), key(c.rank()));
      if (!s) return;
      got_rank[c.rank()] = s->rank();
      got_size[c.rank()] = s->size();
      got_world[c.rank()] = s->world_rank();
      // Every member learns the others' team ranks through the new comm itself.
      std::vector<int> world(s->size());
      const int mine = c.rank();
      s->allgather(std::span<const int>(&mine, 1), world);
      members_seen[c.rank()] = world;
    });
    for (int r = 0; r < p; ++r) {
      INFO("rank ", r);
      if (color(r) < 0) {
        CHECK(got_rank[r] == -2);
        continue;
      }
      const std::vector<int>& g = groups.at(color(r));
      const auto at = std::find(g.begin(), g.end(), r) - g.begin();
      CHECK(got_rank[r] == at);
      CHECK(got_size[r] == static_cast<int>(g.size()));
      CHECK(got_world[r] == r);
      CHECK(members_seen[r] == g);
    }
  }
}

TEST_CASE("every registered algorithm on split sub-comms matches the sequential reference") {
  // For each p: the ranks split by irregular_color with reversed keys; every algorithm of the
  // registry runs a sample of its conformance calls in every sub-comm at once (each
  // sub-comm its own calls, for its size), blocking, nonblocking or persistent in turn.
  for (int p = 1; p <= 17; ++p) {
    INFO("p = ", p);
    auto color = [p](int r) { return irregular_color(r, p); };
    const auto groups = expected_groups(p, color, reversed_key);
    struct planned {
      const algorithm* algo;
      call c;
      test_data data;
      std::vector<rank_buffers> buffers;
    };
    std::map<int, std::vector<planned>> plans;  // by colour
    std::uint64_t seed = 1;
    for (const auto& [col, members] : groups) {
      const int q = static_cast<int>(members.size());
      for (const algorithm* a : registry::all()) {
        std::vector<call> calls = conformance_calls(*a, q, sweep::threads);
        const std::size_t step = std::max<std::size_t>(1, calls.size() / 4);
        for (std::size_t i = 0; i < calls.size(); i += step) {
          planned pl{a, calls[i], make_test_data(calls[i], ++seed), {}};
          pl.buffers = pl.data.buffers();
          plans[col].push_back(std::move(pl));
        }
      }
    }
    run(p, [&](comm& c) {
      std::optional<comm> s = c.split(color(c.rank()), reversed_key(c.rank()));
      REQUIRE(s);
      auto& mine = plans.at(color(c.rank()));
      const int me = s->rank();
      for (std::size_t i = 0; i < mine.size(); ++i) {
        planned& pl = mine[i];
        const rank_buffers& b = pl.buffers[static_cast<std::size_t>(me)];
        switch (i % 3) {
          case 0:
            s->run_collective(pl.c, b.in, b.out);
            break;
          case 1: {
            request r = s->start_collective(pl.c, b.in, b.out);
            r.wait();
            break;
          }
          default: {
            persistent_request r = s->init_collective(pl.c, b.in, b.out);
            r.start();
            r.wait();
          }
        }
      }
    });
    std::size_t checked = 0;
    for (auto& [col, list] : plans)
      for (planned& pl : list) {
        INFO(name(pl.algo->coll), "/", pl.algo->name, " on a sub-comm of ", pl.c.args.p, " ranks (colour ", col, ")");
        CHECK(compare(pl.c, pl.data) == "");
        ++checked;
      }
    CHECK(checked > registry::all().size());
  }
}

TEST_CASE("a sub-comm of one rank runs every collective on its own") {
  run(3, [](comm& c) {
    std::optional<comm> s = c.split(c.rank(), 0);
    REQUIRE(s);
    CHECK(s->size() == 1);
    CHECK(s->rank() == 0);
    std::vector<long> v{c.rank() + 1L, 7}, out(2);
    s->allreduce(v, out, ops::sum);
    CHECK(out == v);
    s->allreduce(v, ops::sum);  // in place
    CHECK(v == std::vector<long>{c.rank() + 1L, 7});
    s->bcast(v, 0);
    s->barrier();
    std::vector<long> empty;
    s->allreduce(empty, ops::sum);  // count 0
  });
}

TEST_CASE("dup: same ranks, calls that never match the parent's") {
  for (int p : {1, 2, 5, 8}) {
    INFO("p = ", p);
    run(p, [p](comm& c) {
      comm d = c.dup();
      CHECK(d.rank() == c.rank());
      CHECK(d.size() == c.size());
      // Even ranks start on the parent first, odd ranks on the dup first, and each waits in
      // its own order: the calls still pair by comm, not by order.
      std::vector<int> a{c.rank()}, b{10 * c.rank()};
      std::vector<int> ra(1), rb(1);
      std::optional<request> on_parent, on_dup;
      if (c.rank() % 2 == 0) {
        on_parent.emplace(c.iallreduce(a, ra, ops::sum));
        on_dup.emplace(d.iallreduce(b, rb, ops::max));
        on_dup->wait();
        on_parent->wait();
      } else {
        on_dup.emplace(d.iallreduce(b, rb, ops::max));
        on_parent.emplace(c.iallreduce(a, ra, ops::sum));
        on_parent->wait();
        on_dup->wait();
      }
      CHECK(ra[0] == p * (p - 1) / 2);
      CHECK(rb[0] == 10 * (p - 1));
      // Blocking calls on the dup beside blocking calls on the parent.
      std::vector<int> x{1};
      d.allreduce(x, ops::sum);
      c.allreduce(x, ops::sum);
      CHECK(x[0] == p * p);
      comm dd = d.dup();  // a dup of a dup
      std::vector<int> w{dd.world_rank()};
      dd.bcast(w, p - 1);
      CHECK(w[0] == p - 1);
    });
  }
}

TEST_CASE("rows and columns: nonblocking calls outstanding on both, completed in random order") {
  for (auto [rows, cols] : {std::pair{2, 3}, std::pair{3, 4}, std::pair{4, 4}, std::pair{1, 5}}) {
    const int p = rows * cols;
    INFO(rows, " x ", cols);
    run(p, [=](comm& c) {
      const int row = c.rank() / cols, col = c.rank() % cols;
      comm row_comm = *c.split(row, col);
      comm col_comm = *c.split(col, row);
      CHECK(row_comm.rank() == col);
      CHECK(col_comm.rank() == row);
      std::mt19937 random(static_cast<unsigned>(c.rank() * 7919 + 1));
      for (int iteration = 0; iteration < 20; ++iteration) {
        // Values such that the expected results are computed here in closed form.
        std::vector<long> mine{c.rank() + iteration, 1}, row_sum(2), col_max(2), row_all(cols);
        std::vector<long> col_scan(1);
        std::vector<request> requests;
        requests.push_back(row_comm.iallreduce(mine, row_sum, ops::sum));
        requests.push_back(col_comm.iallreduce(mine, col_max, ops::max));
        const long me = c.rank();
        requests.push_back(row_comm.iallgather(std::span<const long>(&me, 1), row_all));
        requests.push_back(col_comm.iscan(std::span<const long>(&me, 1), col_scan, ops::sum));
        std::vector<std::size_t> order(requests.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::shuffle(order.begin(), order.end(), random);
        for (std::size_t i : order) {
          if (random() % 2)
            requests[i].wait();
          else
            while (!requests[i].test()) ranklab::yield();
        }
        long expected_row = 0;
        for (int k = 0; k < cols; ++k) expected_row += row * cols + k + iteration;
        CHECK(row_sum[0] == expected_row);
        CHECK(row_sum[1] == cols);
        CHECK(col_max[0] == (rows - 1) * cols + col + iteration);
        for (int k = 0; k < cols; ++k) CHECK(row_all[k] == row * cols + k);
        long expected_scan = 0;
        for (int k = 0; k <= row; ++k) expected_scan += k * cols + col;
        CHECK(col_scan[0] == expected_scan);
      }
    });
  }
}

TEST_CASE("create: a comm of the members only, others not involved") {
  run(6, [](comm& c) {
    // Ranks 4, 1, 3 form a comm (rank 0 of it is 4); 0, 2 and 5 do something else meanwhile.
    const std::vector<int> members{4, 1, 3};
    const auto at = std::find(members.begin(), members.end(), c.rank());
    if (at != members.end()) {
      std::optional<comm> s = c.create(members);
      REQUIRE(s);
      CHECK(s->rank() == at - members.begin());
      CHECK(s->size() == 3);
      CHECK(s->world_rank() == c.rank());
      std::vector<int> v{c.rank()};
      s->bcast(v, 0);
      CHECK(v[0] == 4);
    } else {
      const std::vector<int> others{0, 2, 5};
      comm o = *c.create(others);
      std::vector<int> v{1};
      o.allreduce(v, ops::sum);
      CHECK(v[0] == 3);
    }
    c.barrier();
    const std::vector<int> alone{c.rank()};
    comm self = *c.create(alone);
    CHECK(self.size() == 1);
  });
}

TEST_CASE("create: bad member lists are usage errors naming the problem") {
  run(4, [](comm& c) {
    const std::vector<int> outside{0, 4};
    CHECK(contains(error_of([&] { (void)c.create(outside); }), "member 4 outside 0..3"));
    const std::vector<int> twice{c.rank(), c.rank()};
    CHECK(contains(error_of([&] { (void)c.create(twice); }), "listed twice"));
    const std::vector<int> without{(c.rank() + 1) % 4};
    CHECK(contains(error_of([&] { (void)c.create(without); }), "not among the members"));
    const std::vector<int> none;
    CHECK(contains(error_of([&] { (void)c.create(none); }), "no members"));
  });
}

TEST_CASE("split_type on a synthetic topology groups ranks by their domains") {
  team_options o = team_options::from_environment();
  o.topology = "package:2 numa:2 core:4";  // 16 cores: 4 per NUMA node, 8 per package
  for (int p : {16, 12, 5, 20}) {
    INFO("p = ", p);
    std::vector<std::array<int, 5>> seen(p);
    std::vector<std::array<int, 5>> sizes(p), ranks(p);
    run(
        p,
        [&](comm& c) {
          for (domain d : {domain::core, domain::l3, domain::numa, domain::package, domain::machine}) {
            comm s = c.split_type(d);
            const int k = static_cast<int>(d);
            seen[c.rank()][k] = c.domain_index(d);
            sizes[c.rank()][k] = s.size();
            ranks[c.rank()][k] = s.rank();
          }
          CHECK(c.domain_count(domain::numa) == 4);
          CHECK(c.domain_count(domain::package) == 2);
          CHECK(c.domain_count(domain::core) == 16);
          CHECK(c.domain_count(domain::machine) == 1);
          CHECK(c.domain_count(domain::l3) == 1);  // none described: the machine is one
        },
        o);
    for (int r = 0; r < p; ++r) {
      INFO("rank ", r);
      const int core = r % 16;  // rank r on synthetic core r (mod 16)
      CHECK(seen[r][static_cast<int>(domain::core)] == core);
      CHECK(seen[r][static_cast<int>(domain::numa)] == core / 4);
      CHECK(seen[r][static_cast<int>(domain::package)] == core / 8);
      CHECK(seen[r][static_cast<int>(domain::machine)] == 0);
      // Sizes: how many ranks share the domain, counted here.
      for (domain d : {domain::core, domain::numa, domain::package, domain::machine}) {
        const int k = static_cast<int>(d);
        int same = 0, before = 0;
        for (int x = 0; x < p; ++x)
          if (seen[x][k] == seen[r][k]) {
            ++same;
            before += x < r;
          }
        CHECK(sizes[r][k] == same);
        CHECK(ranks[r][k] == before);
      }
    }
  }
}

TEST_CASE("a synthetic topology hwloc refuses is a usage error at team creation") {
  team_options o;
  o.topology = "package:two";
  CHECK(contains(error_of([&] { team t(2, o); }), "not an hwloc synthetic topology"));
  scoped_env env("RANKLAB_TOPOLOGY", "numa:2 core:3");
  run(6, [](comm& c) { CHECK(c.domain_count(domain::numa) == 2); });
  CHECK(name(domain::numa) == "numa");
  CHECK(domain_from_name("package") == domain::package);
  CHECK(contains(error_of([] { (void)domain_from_name("socket"); }), "unknown domain 'socket'"));
}

TEST_CASE("a rank that throws inside a sub-comm call releases every rank of the team") {
  for (int p : {3, 6, 9}) {
    INFO("p = ", p);
    std::atomic<int> released{0};
    const std::string what = error_of([&] {
      run(p, [&](comm& c) {
        comm half = *c.split(c.rank() % 2, 0);
        comm all = c.dup();
        if (c.rank() == 1) throw std::runtime_error("boom in rank 1");
        try {
          std::vector<int> v{1};
          if (c.rank() % 2 == 1)
            half.allreduce(v, ops::sum);  // waits for rank 1 of the team
          else
            all.allreduce(v, ops::sum);  // waits for rank 1 too, in another comm
        } catch (const remote_failure& e) {
          CHECK(e.origin_rank() == 1);
          ++released;
          throw;
        }
      });
    });
    CHECK(contains(what, "boom in rank 1"));
    CHECK(released.load() == p - 1);
  }
}

TEST_CASE("a mismatch inside a sub-comm names both ranks, in the comm and in the team") {
  const std::string what = error_of([] {
    run(6, [](comm& c) {
      comm s = *c.split(c.rank() % 2, 0);  // ranks 1, 3, 5 form comm ranks 0, 1, 2
      std::vector<int> v{1};
      if (c.rank() % 2 == 0) return;
      if (s.rank() == 1)
        s.bcast(v, 0);
      else
        s.allreduce(v, ops::sum);
    });
  });
  INFO(what);
  CHECK((contains(what, "mismatch") || contains(what, "different collective")));
  CHECK(contains(what, "team rank"));
}

TEST_CASE("ranks waiting for each other across two comms are a deadlock, not a hang") {
  team_options o = team_options::from_environment();
  o.deadlock_timeout = std::chrono::milliseconds(100);
  const std::string what = error_of([&] {
    run(
        4,
        [](comm& c) {
          comm a = *c.split(c.rank() < 2 ? 0 : 1, 0);  // {0,1} {2,3}
          comm b = *c.split(c.rank() % 2, 0);          // {0,2} {1,3}
          std::vector<int> v{1};
          // Team rank 0 waits in a for rank 1, which waits in b for rank 3, which waits in a
          // for rank 2, which waits in b for rank 0.
          if (c.rank() == 0 || c.rank() == 3)
            a.allreduce(v, ops::sum);
          else
            b.allreduce(v, ops::sum);
          if (c.rank() == 0 || c.rank() == 3)
            b.allreduce(v, ops::sum);
          else
            a.allreduce(v, ops::sum);
        },
        o);
  });
  INFO(what);
  CHECK(contains(what, "deadlock"));
  CHECK(contains(what, "in comm #"));
}

TEST_CASE("comms keep their ranks' traces in team ranks, with the comm's number") {
  team_options o = team_options::from_environment();
  o.trace = true;
  team t(4, o);
  run(t, [](comm& c) {
    comm s = *c.split(c.rank() / 2, -c.rank());  // {1, 0} and {3, 2}
    std::vector<int> v{c.rank()};
    s.bcast(v, 0, algo{"binomial"});  // from team rank 1 and 3: a message, traced
    CHECK(v[0] == (c.rank() / 2) * 2 + 1);
  });
  std::set<std::uint32_t> comms;
  for (const trace_event& e : t.trace()) {
    if (e.comm == 0) continue;
    comms.insert(e.comm);
    if (e.coll != "bcast") continue;
    // In the new comms, comm rank 0 is team rank 1 (or 3): the sender of each bcast.
    if (e.to >= 0) {
      CHECK(e.rank % 2 == 1);
      CHECK(e.comm_rank == 0);
      CHECK(e.to == e.rank - 1);
    }
    if (e.from >= 0) CHECK(e.from == e.rank + 1);
  }
  CHECK(comms.size() == 2);
}

TEST_CASE("deterministic mode: the same seed gives the same trace with splits") {
  auto traced = [](std::uint64_t seed) {
    team_options o;
    o.execution = execution_mode::fibers;
    o.seed = seed;
    o.trace = true;
    team t(7, o);
    run(t, [](comm& c) {
      comm s = *c.split(c.rank() % 3, -c.rank());
      comm d = s.dup();
      std::vector<int> v{c.rank(), 1};
      request r = s.iallreduce(v, ops::sum);
      d.barrier();
      r.wait();
      c.allreduce(v, ops::max);
    });
    std::vector<std::tuple<int, std::uint32_t, std::uint32_t, std::uint32_t, int, int, std::uint64_t>> out;
    for (const trace_event& e : t.trace()) out.emplace_back(e.rank, e.comm, e.call, e.round, e.to, e.from, e.begin_ns);
    return out;
  };
  const auto first = traced(42);
  CHECK(!first.empty());
  CHECK(traced(42) == first);
}

// Bytes glibc's heap has handed out, or 0 under a sanitizer (whose allocator glibc's
// mallinfo2 cannot read).
static std::size_t heap_in_use() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return 0;
#else
  return mallinfo2().uordblks;
#endif
}

TEST_CASE("10 000 comms created and destroyed leave memory flat") {
  run(4, [](comm& c) {
    auto cycle = [&](int n) {
      for (int i = 0; i < n; ++i) {
        comm d = c.dup();
        std::optional<comm> s = c.split(c.rank() % 2, 0);
        if (i % 100 == 0) {
          std::vector<int> v{1};
          d.allreduce(v, ops::sum);
          s->allreduce(v, ops::sum);
        }
      }
    };
    cycle(200);  // allocator caches settle
    c.barrier();
    const std::size_t before = heap_in_use();
    cycle(2300);  // with the other ranks: 10 000 comms made in all by the dups and splits
    c.barrier();
    const std::size_t after = heap_in_use();
    // A leaked comm state alone is kilobytes; 2300 of them would be megabytes. (Under a
    // sanitizer the heap is the sanitizer's: LeakSanitizer does the checking there.)
    CHECK(after <= before + (1u << 20));
  });
}

TEST_CASE("an application thread leaves and attaches again in a later region") {
  team_options o;
  o.execution = execution_mode::threads;
  team t(3, o);
  std::vector<std::optional<comm>> keep(3);
  for (int region = 0; region < 3; ++region) {
    std::vector<std::thread> threads;
    for (int r = 0; r < 3; ++r)
      threads.emplace_back([&, r] {
        comm c = t.attach(r);
        CHECK(this_rank() == r);
        std::vector<int> v{region + r};
        c.allreduce(v, ops::sum);
        CHECK(v[0] == 3 * region + 3);
        comm s = *c.split(r == 0 ? 0 : 1, 0);
        std::vector<int> w{1};
        s.allreduce(w, ops::sum);
        CHECK(w[0] == (r == 0 ? 1 : 2));
      });  // the comm ends with the thread's function: the rank is detached
    for (auto& th : threads) th.join();
  }
  CHECK_FALSE(t.failed());
  // A rank whose comm is still alive cannot attach twice.
  comm held = t.attach(0);
  CHECK(contains(error_of([&] { (void)t.attach(0); }), "its comm is still alive"));
}

TEST_CASE("a message a sub-comm's rank never received is reported when the ranks return") {
  const std::string what = error_of([] {
    run(4, [](comm& c) {
      comm s = *c.split(c.rank() / 2, 0);  // {0, 1} and {2, 3}
      const std::vector<int> v{1};
      if (c.rank() == 2) s.send(1, v);  // to team rank 3, which never receives it
    });
  });
  INFO(what);
  CHECK(contains(what, "never received"));
  CHECK(contains(what, "rank 0 (team rank 2)"));
  CHECK(contains(what, "in comm #"));
}

namespace {

// One iteration of a random-split campaign, planned sequentially before the run: every
// rank's colour and key, and for each new comm a call of a random algorithm that accepts
// its size, with its reference data.
struct split_round {
  std::vector<int> color, key;
  struct planned {
    const algorithm* algo;
    call c;
    test_data data;
    std::vector<rank_buffers> buffers;
  };
  std::map<int, planned> calls;  // by colour
};

std::vector<split_round> plan_random_splits(std::mt19937_64& g, int p, int iterations) {
  std::vector<split_round> plan(static_cast<std::size_t>(iterations));
  const auto all = registry::all();
  for (split_round& round : plan) {
    const int colours = 1 + static_cast<int>(g() % 4);
    for (int r = 0; r < p; ++r) {
      round.color.push_back(g() % 8 == 0 ? undefined : static_cast<int>(g() % colours));
      round.key.push_back(static_cast<int>(g() % 5) - 2);
    }
    for (const auto& [col, members] : expected_groups(
             p, [&](int r) { return round.color[r]; }, [&](int r) { return round.key[r]; })) {
      const int q = static_cast<int>(members.size());
      for (int attempt = 0; attempt < 50; ++attempt) {
        const algorithm* a = all[g() % all.size()];
        std::vector<call> calls = conformance_calls(*a, q, sweep::threads);
        if (calls.empty()) continue;
        const call& c = calls[g() % calls.size()];
        split_round::planned pl{a, c, make_test_data(c, g()), {}};
        pl.buffers = pl.data.buffers();
        round.calls.emplace(col, std::move(pl));
        break;
      }
    }
  }
  return plan;
}

}  // namespace

TEST_CASE("stress: random splits with a random algorithm on every new comm, each checked") {
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    std::mt19937_64 g(seed);
    const int p = 1 + static_cast<int>(g() % 13);
    INFO("seed ", seed, ", p = ", p);
    std::vector<split_round> plan = plan_random_splits(g, p, 5);
    run(p, [&](comm& c) {
      for (std::size_t it = 0; it < plan.size(); ++it) {
        split_round& round = plan[it];
        std::optional<comm> s = c.split(round.color[c.rank()], round.key[c.rank()]);
        if (!s) continue;
        auto found = round.calls.find(round.color[c.rank()]);
        if (found == round.calls.end()) continue;
        const rank_buffers& b = found->second.buffers[static_cast<std::size_t>(s->rank())];
        if (it % 2) {
          request r = s->start_collective(found->second.c, b.in, b.out);
          r.wait();
        } else {
          s->run_collective(found->second.c, b.in, b.out);
        }
      }
    });
    for (split_round& round : plan)
      for (auto& [col, pl] : round.calls) {
        INFO(name(pl.algo->coll), "/", pl.algo->name, " at ", pl.c.args.p, " ranks");
        CHECK(compare(pl.c, pl.data) == "");
      }
  }
}

TEST_CASE("faults: a random rank throws inside a random sub-comm call; every rank is released") {
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    std::mt19937_64 g(seed * 7919);
    const int p = 2 + static_cast<int>(g() % 11);
    INFO("seed ", seed, ", p = ", p);
    std::vector<split_round> plan = plan_random_splits(g, p, 4);
    const int thrower = static_cast<int>(g() % static_cast<std::uint64_t>(p));
    const std::size_t at = g() % plan.size();
    std::atomic<int> released{0};
    const std::string what = error_of([&] {
      run(p, [&](comm& c) {
        try {
          for (std::size_t it = 0; it < plan.size(); ++it) {
            split_round& round = plan[it];
            std::optional<comm> s = c.split(round.color[c.rank()], round.key[c.rank()]);
            if (c.rank() == thrower && it == at) throw std::runtime_error("planned failure");
            if (!s) continue;
            auto found = round.calls.find(round.color[c.rank()]);
            if (found == round.calls.end()) continue;
            const rank_buffers& b = found->second.buffers[static_cast<std::size_t>(s->rank())];
            s->run_collective(found->second.c, b.in, b.out);
          }
          c.barrier();  // nobody passes this once the thrower has thrown
        } catch (const remote_failure& e) {
          CHECK(e.origin_rank() == thrower);
          ++released;
          throw;
        }
      });
    });
    CHECK(contains(what, "planned failure"));
    CHECK(released.load() == p - 1);  // every other rank, in whichever comm it waited
  }
}

TEST_CASE("large requests on two comms, waited for in crossed order") {
  // Two ranks, two comms, a large broadcast on each (sent by descriptor, copied by the
  // receiver from the sender's buffer), each rank waiting first for the request whose root
  // is the other rank.
  for (int iteration = 0; iteration < 20; ++iteration)
    run(2, [&](comm& c) {
      comm a = c.dup(), b = c.dup();
      std::vector<int> x(1 << 15, c.rank() == 0 ? iteration : -1), y(1 << 15, c.rank() == 1 ? iteration + 1 : -1);
      request ra = a.ibcast(x, 0, algo{"binomial"});
      request rb = b.ibcast(y, 1, algo{"binomial"});
      if (c.rank() == 0) {
        ra.wait();
        rb.wait();
      } else {
        rb.wait();
        ra.wait();
      }
      CHECK(x.front() == iteration);
      CHECK(x.back() == iteration);
      CHECK(y.front() == iteration + 1);
    });
}
