// A thread_team's comms: the world comm's numbering (rank = process * T + thread), split
// (along processes, across them, by parity, with undefined colours, reversed, interleaving
// and scrambled keys, one rank each), dup, create, a split of a split, each checked against
// the header's rank order rule computed here, then with collectives; and algorithms named
// between processes.
#include <algorithm>
#include <atomic>
#include <functional>

#include "ranklab/registry.hpp"
#include "thread_team_support.hpp"

namespace team_check {

namespace {

using ranklab::collective;

std::string list(const std::vector<int>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// The comm a rank expects: the world rank of each of its ranks, in rank order.
using members = std::vector<int>;

// The header's rule: members ordered by (key, parent rank) as MPI_Comm_split does; then,
// as a comm keeps each process's ranks together, processes ordered by their first member in
// that order and each process's ranks in it.
members split_order(const members& parent, int threads, const std::function<int(int, int)>& color,
                    const std::function<int(int, int)>& key, int wanted) {
  std::vector<int> chosen;  // parent ranks
  for (int r = 0; r < static_cast<int>(parent.size()); ++r)
    if (color(r, parent[static_cast<std::size_t>(r)]) == wanted) chosen.push_back(r);
  std::stable_sort(chosen.begin(), chosen.end(), [&](int a, int b) {
    return key(a, parent[static_cast<std::size_t>(a)]) < key(b, parent[static_cast<std::size_t>(b)]);
  });
  members by_mpi;
  for (int r : chosen) by_mpi.push_back(parent[static_cast<std::size_t>(r)]);
  members out;
  std::vector<int> processes;
  for (int w : by_mpi)
    if (std::find(processes.begin(), processes.end(), w / threads) == processes.end()) processes.push_back(w / threads);
  for (int proc : processes)
    for (int w : by_mpi)
      if (w / threads == proc) out.push_back(w);
  return out;
}

// Size, rank, process(), processes(), local_rank(), local_size(), local() and leaders()
// as `want` says; the ranks' order by an allgather of their world ranks; then collectives.
void expect_comm(rank_check& k, team_comm& c, const members& want, const std::string& where, int salt) {
  const int T = k.log.threads();
  k.step(where + ": structure");
  const auto at = std::find(want.begin(), want.end(), k.rank);
  if (!k.expect(at != want.end(), where + ": this rank got a comm it is not a member of")) return;
  const int me = static_cast<int>(at - want.begin());
  std::vector<int> processes;  // in rank order
  for (int w : want)
    if (std::find(processes.begin(), processes.end(), w / T) == processes.end()) processes.push_back(w / T);
  const int process = static_cast<int>(std::find(processes.begin(), processes.end(), k.rank / T) - processes.begin());
  int local_rank = 0, local_size = 0;
  for (int i = 0; i < static_cast<int>(want.size()); ++i)
    if (want[static_cast<std::size_t>(i)] / T == k.rank / T) {
      if (i < me) ++local_rank;
      ++local_size;
    }
  auto same = [&](const char* what, int got, int expected) {
    return k.expect(got == expected, where + ": " + what + "() is " + std::to_string(got) + ", expected " +
                                         std::to_string(expected) + " (members " + list(want) + ")");
  };
  bool ok = same("size", c.size(), static_cast<int>(want.size()));
  ok &= same("rank", c.rank(), me);
  ok &= same("processes", c.processes(), static_cast<int>(processes.size()));
  ok &= same("process", c.process(), process);
  ok &= same("local_size", c.local_size(), local_size);
  ok &= same("local_rank", c.local_rank(), local_rank);
  ok &= same("local().size", c.local().size(), local_size);
  ok &= same("local().rank", c.local().rank(), local_rank);
  // A comm within one process needs no MPI comm: its leader may have none.
  ranklab::mpi::comm* leaders = c.leaders();
  const bool may_lead = local_rank == 0, must_lead = may_lead && processes.size() > 1;
  ok &= k.expect(leaders ? may_lead : !must_lead, where + ": leaders() is " + (leaders ? "set" : "null") +
                                                      " at local rank " + std::to_string(local_rank) + " of " +
                                                      std::to_string(processes.size()) + " processes");
  if (leaders) {
    ok &= same("leaders().size", leaders->size(), static_cast<int>(processes.size()));
    ok &= same("leaders().rank", leaders->rank(), process);
  }
  if (!ok) return;  // the collectives below would only repeat the difference, or hang
  k.step(where + ": allgather of world ranks");
  std::vector<std::int32_t> mine{k.rank}, order(want.size(), -1);
  c.allgather(mine, order);
  k.expect(std::equal(order.begin(), order.end(), want.begin()),
           where + ": ranks in the order " + list(std::vector<int>(order.begin(), order.end())) + ", expected " +
               list(want));
  few_collectives(k, c, where, salt);
}

// A split of `c` (whose members are `parent`), checked at every rank.
void check_split(rank_check& k, team_comm& c, const members& parent, const std::string& where,
                 const std::function<int(int, int)>& color, const std::function<int(int, int)>& key, int salt) {
  const int r = c.rank();
  const int my_color = color(r, k.rank);
  k.step(where + ": split");
  std::optional<team_comm> s = c.split(my_color, key(r, k.rank));
  if (my_color < 0) {
    k.expect(!s.has_value(), where + ": a rank with an undefined colour got a comm");
    return;
  }
  if (!k.expect(s.has_value(), where + ": no comm for colour " + std::to_string(my_color))) return;
  expect_comm(k, *s, split_order(parent, k.log.threads(), color, key, my_color), where, salt);
}

}  // namespace

void structure(rank_check& k, team_comm& c, std::atomic<int> thread_slots[]) {
  const int N = k.log.processes(), T = k.log.threads(), P = k.log.process();
  auto same = [&](const char* what, int got, int expected) {
    return k.expect(got == expected, std::string("world comm: ") + what + "() is " + std::to_string(got) +
                                         ", expected " + std::to_string(expected));
  };
  same("size", c.size(), N * T);
  same("processes", c.processes(), N);
  same("process", c.process(), P);
  same("local_size", c.local_size(), T);
  if (!k.expect(c.local_rank() >= 0 && c.local_rank() < T,
                "world comm: local_rank() " + std::to_string(c.local_rank()) + " out of range"))
    return;
  same("rank", c.rank(), P * T + c.local_rank());
  ++thread_slots[c.local_rank()];  // main: each exactly once per process
  // Rank r's data comes from process r / T.
  std::vector<std::int32_t> mine{P}, from(static_cast<std::size_t>(N * T), -1);
  c.allgather(mine, from);
  for (int r = 0; r < N * T; ++r)
    if (!k.expect(from[static_cast<std::size_t>(r)] == r / T, "world comm: rank " + std::to_string(r) +
                                                                  "'s block came from process " +
                                                                  std::to_string(from[static_cast<std::size_t>(r)])))
      break;
  members world(static_cast<std::size_t>(N * T));
  for (int r = 0; r < N * T; ++r) world[static_cast<std::size_t>(r)] = r;
  expect_comm(k, c, world, "world comm", 300);
}

void communicators(rank_check& k, team_comm& c) {
  const int T = k.log.threads(), p = c.size();
  members world(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) world[static_cast<std::size_t>(r)] = r;
  auto zero = [](int, int) { return 0; };
  const int undefined = ranklab::undefined;

  check_split(
      k, c, world, "split along processes (colour = process)", [&](int, int w) { return w / T; }, zero, 400);
  check_split(
      k, c, world, "split across processes (colour = thread)", [&](int, int w) { return w % T; }, zero, 500);
  check_split(
      k, c, world, "split by parity of rank", [](int r, int) { return r % 2; }, zero, 600);
  check_split(
      k, c, world, "split with undefined colours and reversed keys",
      [&](int r, int) { return r % 3 == 2 ? undefined : r % 3; }, [](int r, int) { return -r; }, 700);
  // Keys that would interleave processes (MPI's order: thread 0 of every process first).
  check_split(
      k, c, world, "split with interleaving keys (key = thread)", zero, [&](int, int w) { return w % T; }, 800);
  check_split(
      k, c, world, "split of process pairs with scrambled keys", [&](int, int w) { return w / T / 2; },
      [&](int r, int) { return (r * 5 + 3) % p; }, 900);
  check_split(
      k, c, world, "split into one rank each", [](int r, int) { return r; }, zero, 1000);
  check_split(
      k, c, world, "split where only the last rank has a colour",
      [&](int r, int) { return r == p - 1 ? 7 : undefined; }, zero, 1100);

  // A split of a split: each comm of the split with undefined colours and reversed keys,
  // split again by the parity of its own ranks (keys: those ranks); then its dup.
  {
    auto color = [&](int r, int) { return r % 3 == 2 ? undefined : r % 3; };
    auto reversed = [](int r, int) { return -r; };
    k.step("nested: first split");
    std::optional<team_comm> s = c.split(color(c.rank(), k.rank), reversed(c.rank(), k.rank));
    if (s) {
      const members outer = split_order(world, T, color, reversed, color(c.rank(), k.rank));
      check_split(
          k, *s, outer, "split of a split (by parity in the reversed comm)", [](int r, int) { return r % 2; },
          [](int r, int) { return r; }, 1200);
      // dup of a sub-comm: the same ranks; a call on it in flight while the parent runs one.
      k.step("nested: dup of the sub-comm");
      team_comm d = s->dup();
      spec on_dup;
      on_dup.coll = collective::allreduce;
      on_dup.p = d.size();
      on_dup.count = 6;
      on_dup.type = elem::affine;
      on_dup.red = reduction::compose;
      on_dup.salt = 1300;
      auto pending = issue(d, form::nonblocking, on_dup);
      spec on_parent = on_dup;
      on_parent.type = elem::i32;
      on_parent.red = reduction::sum;
      on_parent.salt = 1301;
      check_blocking(k, *s, on_parent, "sub-comm beside a call on its dup");
      pending->request.wait();
      check_done(k, *pending, "dup of a sub-comm: nonblocking");
      expect_comm(k, d, outer, "dup of a sub-comm", 1310);
    }
  }

  // dup of the world comm: a nonblocking call on the dup across a blocking one on the world.
  {
    k.step("dup of the world comm");
    team_comm d = c.dup();
    spec s;
    s.coll = collective::allgather;
    s.p = p;
    s.count = 3;
    s.salt = 1400;
    auto pending = issue(d, form::nonblocking, s);
    spec w = s;
    w.coll = collective::allreduce;
    w.salt = 1401;
    check_blocking(k, c, w, "world comm beside a call on its dup");
    pending->request.wait();
    check_done(k, *pending, "dup of the world comm: nonblocking");
    expect_comm(k, d, world, "dup of the world comm", 1410);
  }

  // create: every rank but those with r % 3 == 1, in reverse order (the processes' ranks
  // stay together); then a comm of the middle rank alone. Every rank calls it.
  {
    members subset;
    for (int r = p - 1; r >= 0; --r)
      if (r % 3 != 1) subset.push_back(r);
    k.step("create of a subset in reverse order");
    std::optional<team_comm> s = c.create(subset);
    const bool member = std::find(subset.begin(), subset.end(), c.rank()) != subset.end();
    if (k.expect(s.has_value() == member, std::string("create ") + list(subset) + ": " +
                                              (member ? "a member got no comm" : "a non-member got a comm")) &&
        s)
      expect_comm(k, *s, subset, "create " + list(subset), 1500);
    const members alone{p / 2};
    k.step("create of one rank");
    std::optional<team_comm> one = c.create(alone);
    if (k.expect(one.has_value() == (c.rank() == p / 2), "create " + list(alone) + ": membership") && one)
      expect_comm(k, *one, alone, "create " + list(alone), 1600);
  }
}

void named_algorithms(rank_check& k, team_comm& c) {
  const int p = c.size(), T = k.log.threads();
  // Roots: a non-leader thread (results only), and the last process's leader thread, where
  // local rank 0 of every process makes the call between processes: the leaders' comm's
  // last_algorithm() then tells what ran, as soon as the call returns there. (Elsewhere the
  // root's own thread makes it, and a non-root may return before it has.)
  const int non_leader = T > 1 ? p - 1 : 0, last_leader = p - T;
  struct named {
    collective coll;
    elem type;
    reduction red;
    std::string_view algorithm;
    bool check_name;  // the leaders' MPI call is this collective (for allgather it need not be)
  };
  const named cases[] = {
      {collective::allreduce, elem::i32, reduction::sum, "ring", true},
      {collective::allreduce, elem::affine, reduction::compose, "recursive_doubling", true},
      {collective::bcast, elem::f64, reduction::sum, "binomial", true},
      {collective::allgather, elem::i32, reduction::sum, "ring", false},
      {collective::reduce, elem::i32, reduction::sum, "binomial", true},
  };
  int salt = 2000;
  for (const named& n : cases) {
    spec s;
    s.coll = n.coll;
    s.p = p;
    s.count = n.coll == collective::allgather ? 5 : 300;
    s.type = n.type;
    s.red = n.red;
    s.algorithm = n.algorithm;
    s.root = last_leader;
    s.salt = ++salt;
    check_blocking(k, c, s, "named algorithm");
    // The leaders ran the call between processes with the named algorithm.
    if (n.check_name && c.leaders() && c.processes() > 1) {
      const ranklab::algorithm* a = c.last_process_algorithm();  // this rank led the call
      k.expect(a && a->name == n.algorithm, "named algorithm: " + describe(s) + ": the leaders ran " +
                                                (a ? std::string(a->name) : std::string("nothing")));
    }
    s.root = non_leader;
    s.salt = ++salt;
    check_blocking(k, c, s, "named algorithm");
    // Also started and initialized with the name.
    auto started = issue(c, form::nonblocking, s);
    started->request.wait();
    check_done(k, *started, "named algorithm, nonblocking");
    auto init = issue(c, form::persistent, s);
    for (int run = 0; run < 2; ++run) {
      if (run > 0) init->refill(s.salt + 50);
      init->persistent.start();
      init->persistent.wait();
      check_done(k, *init, "named algorithm, persistent start " + std::to_string(run));
    }
  }
}

// Run in a team made with RANKLAB_HIERARCHY_ALGORITHMS=process:allreduce=reduce_bcast,
// process:bcast=linear (main): "auto" calls then run those between processes.
void environment_algorithms(rank_check& k, team_comm& c) {
  const int p = c.size();
  struct expected_name {
    collective coll;
    std::string_view algorithm;
  };
  int salt = 3000;
  for (const expected_name& e :
       {expected_name{collective::allreduce, "reduce_bcast"}, expected_name{collective::bcast, "linear"}}) {
    spec s;
    s.coll = e.coll;
    s.p = p;
    s.count = 40;
    s.root = p - k.log.threads();  // the last process's leader (see named_algorithms)
    s.salt = ++salt;
    check_blocking(k, c, s, "RANKLAB_HIERARCHY_ALGORITHMS");
    if (c.leaders() && c.processes() > 1) {
      const ranklab::algorithm* a = c.last_process_algorithm();  // this rank led the call
      k.expect(a && a->name == e.algorithm, "RANKLAB_HIERARCHY_ALGORITHMS: " + describe(s) + ": the leaders ran " +
                                                (a ? std::string(a->name) : "nothing") + ", expected " +
                                                std::string(e.algorithm));
    }
  }
}

}  // namespace team_check
