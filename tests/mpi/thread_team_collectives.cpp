// Every collective of collectives.hpp on a thread_team's world comm (N processes x T
// threads), in its three forms, against the reference: counts 0, 1, 2p+3 and a long one,
// irregular v-counts with zeros, one rank holding everything, displacements in reverse rank
// order with gaps, every root (so roots in every process, at leader and non-leader
// threads), in place, integers, integer-valued doubles and a non-commutative operator.
#include <algorithm>
#include <chrono>
#include <thread>
#include <tuple>
#include <utility>

#include "thread_team_support.hpp"

namespace team_check {

namespace {

using ranklab::collective;

bool per_block(collective c) {
  return c == collective::allgather || c == collective::scatter || c == collective::gather ||
         c == collective::alltoall || c == collective::reduce_scatter_block;
}
bool has_displs(collective c) {
  return c == collective::allgatherv || c == collective::scatterv || c == collective::gatherv;
}

// The shapes a collective is called with at a root. shape 0 is the main one (count 2p+3,
// irregular counts), run at every root and with every operand.
std::vector<spec> shapes(collective c, int p, int root) {
  std::vector<spec> out;
  auto add = [&](std::uint64_t count, counts cnt = {}, counts displs = {}) {
    spec s;
    s.coll = c;
    s.p = p;
    s.root = root;
    s.count = count;
    s.cnt = std::move(cnt);
    s.displs = std::move(displs);
    out.push_back(std::move(s));
  };
  const auto up = static_cast<std::uint64_t>(p);
  if (c == collective::alltoallv) {
    add(0, irregular_matrix(p, root));
    counts one_sends(up * up, 0);  // only the last rank sends, 3 elements to everyone
    for (int j = 0; j < p; ++j) one_sends[static_cast<std::size_t>((p - 1) * p + j)] = 3;
    add(0, one_sends);
    add(0, counts(up * up, 0));
    add(0, irregular_matrix(p, root + 1, 20));  // long: up to 60 per pair
  } else if (ranklab::has_vector_counts(c)) {
    add(0, irregular_counts(p, root));
    add(0, one_rank_counts(p, (root + 1) % p, 2 * up + 1));
    if (has_displs(c)) add(0, irregular_counts(p, root + 2), reversed_with_gaps(irregular_counts(p, root + 2)));
    add(0, counts(up, 0));
    add(0, irregular_counts(p, root + 3, 300));  // long: up to 1200 per rank
  } else {
    add(2 * up + 3);
    add(0);
    add(1);
    add(per_block(c) ? 157 : 1501);  // long
  }
  return out;
}

// The blocking sweep: the main shape at every root with int32 sum, the other shapes at
// roots 0 and p-1, the other operands and in place at a root that is a non-leader thread
// (process 1's thread 1 when there is one).
std::vector<spec> sweep(int p, int threads) {
  const int processes = p / threads;
  const int non_leader = threads == 1 ? p - 1 : processes > 1 ? threads + 1 : 1;
  std::vector<spec> out;
  int salt = 0;
  auto add = [&](spec s) {
    s.salt = ++salt;
    out.push_back(std::move(s));
  };
  for (int i = 1; i < ranklab::collective_count; ++i) {
    const auto c = static_cast<collective>(i);
    const bool rooted = ranklab::is_rooted(c);
    for (int root = 0; root < (rooted ? p : 1); ++root) add(shapes(c, p, root).front());
    for (int root : rooted ? std::vector<int>{0, p - 1} : std::vector<int>{0}) {
      std::vector<spec> all = shapes(c, p, root);
      for (std::size_t k = 1; k < all.size(); ++k) add(all[k]);
    }
    spec main = shapes(c, p, rooted ? non_leader : 0).front();
    std::vector<std::pair<elem, reduction>> operands = {{elem::f64, reduction::sum},
                                                        {elem::affine, reduction::compose}};
    if (ranklab::is_reduction(c)) operands.push_back({elem::i32, reduction::max});
    for (auto [type, red] : operands) {
      spec s = main;
      s.type = type;
      s.red = red;
      add(s);
    }
    if (ranklab::has_in_place_form(c)) {
      for (auto [type, red, count] : {std::tuple{elem::i32, reduction::sum, 2 * static_cast<std::uint64_t>(p) + 3},
                                      std::tuple{elem::affine, reduction::compose, std::uint64_t{5}},
                                      std::tuple{elem::f64, reduction::sum, std::uint64_t{0}}}) {
        spec s = main;
        s.type = type;
        s.red = red;
        s.count = count;
        s.in_place = true;
        add(s);
      }
    }
  }
  return out;
}

std::int64_t now_ns() {
  // steady_clock is CLOCK_MONOTONIC, one clock for every process of the machine: the
  // barrier check compares times taken in different processes (all on this host, as
  // mpirun runs them in the tests).
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// No rank leaves a barrier before the last one has entered it: the last rank (the last
// process's last thread, a non-leader when T > 1) enters 30 ms late; every rank's exit time
// must follow every rank's entry time.
void barrier_order(rank_check& k, team_comm& c) {
  const int late = c.size() - 1;
  ranklab::mpi::team_persistent_request again = c.barrier_init();
  for (int round = 0; round < 4; ++round) {
    const form f = round == 0 ? form::blocking : round == 1 ? form::nonblocking : form::persistent;
    const std::string how =
        std::string(name(f)) + " barrier" + (round >= 2 ? " start " + std::to_string(round - 1) : "");
    k.step(how);
    if (c.rank() == late) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const std::int64_t entered = now_ns();
    if (f == form::blocking) {
      c.barrier();
    } else if (f == form::nonblocking) {
      ranklab::mpi::team_request r = c.ibarrier();
      r.wait();
    } else {
      again.start();
      again.wait();
    }
    const std::int64_t left = now_ns();
    std::vector<std::int64_t> mine{entered}, all(static_cast<std::size_t>(c.size()));
    c.allgather(mine, all);
    const auto last = std::max_element(all.begin(), all.end());
    k.expect(left >= *last, how + ": left " + std::to_string((*last - left) / 1000) + " us before rank " +
                                std::to_string(last - all.begin()) + " entered");
  }
}

// Every sweep call blocking.
void blocking_sweep(rank_check& k, team_comm& c, const std::vector<spec>& calls) {
  for (const spec& s : calls) check_blocking(k, c, s, "world");
}

// The sweep again as i-forms, eight in flight at a time (from different collectives: every
// eighth call), a blocking allreduce while they are, then completed out of order: the last
// started waited first, then the middle one, then the rest by a test() loop.
void nonblocking_sweep(rank_check& k, team_comm& c, const std::vector<spec>& calls) {
  const std::size_t width = 8;
  const std::size_t batches = (calls.size() + width - 1) / width;
  for (std::size_t b = 0; b < batches; ++b) {
    std::vector<std::unique_ptr<call_in_flight>> flight;
    for (std::size_t i = b; i < calls.size(); i += batches) {
      k.step("world: starting nonblocking " + describe(calls[i]));
      flight.push_back(issue(c, form::nonblocking, calls[i]));
    }
    spec between;
    between.coll = collective::allreduce;
    between.p = c.size();
    between.count = 11;
    between.salt = 5000 + static_cast<int>(b);
    check_blocking(k, c, between, "world: between nonblocking calls");
    std::vector<bool> done(flight.size(), false);
    auto finish = [&](std::size_t i) {
      if (done[i]) return;
      k.step("world: waiting for nonblocking " + describe(flight[i]->what()));
      flight[i]->request.wait();
      done[i] = true;
    };
    finish(flight.size() - 1);
    finish(flight.size() / 2);
    for (std::size_t left = std::count(done.begin(), done.end(), false); left > 0;) {
      for (std::size_t i = 0; i < flight.size(); ++i)
        if (!done[i] && flight[i]->request.test()) {
          done[i] = true;
          --left;
        }
      k.step("world: testing nonblocking calls, " + std::to_string(left) + " left");
    }
    for (const auto& call : flight) {
      k.expect(call->request.done(), "nonblocking " + describe(call->what()) + ": done() false after completion");
      check_done(k, *call, "nonblocking");
    }
  }
}

// Persistent forms: per collective the main shape at root p-1, the non-commutative operator,
// and in place; all initialized, then started three times with new inputs in the same
// buffers, completed in reverse order, by a test() loop, in order. A second start while one
// runs is a usage_error.
void persistent_sweep(rank_check& k, team_comm& c, const std::vector<spec>& calls) {
  std::vector<std::unique_ptr<call_in_flight>> persistent;
  std::vector<bool> seen(ranklab::collective_count, false);
  for (const spec& s : calls) {
    const auto i = static_cast<std::size_t>(s.coll);
    const bool first_of_coll = !seen[i] && (s.root == s.p - 1 || !ranklab::is_rooted(s.coll));
    if (first_of_coll || s.red == reduction::compose || (s.in_place && s.count > 0)) {
      if (first_of_coll) seen[i] = true;
      k.step("world: initializing persistent " + describe(s));
      persistent.push_back(issue(c, form::persistent, s));
    }
  }
  for (int run = 0; run < 3; ++run) {
    for (std::size_t i = 0; i < persistent.size(); ++i) {
      if (run > 0) persistent[i]->refill(persistent[i]->what().salt + 100000);
      k.step("world: persistent start " + std::to_string(run) + " of " + describe(persistent[i]->what()));
      persistent[i]->persistent.start();
    }
    if (run == 0) {
      bool refused = false;
      try {
        persistent.front()->persistent.start();
      } catch (const ranklab::usage_error&) {
        refused = true;
      }
      k.expect(refused, "persistent: a second start() while the first runs was accepted");
    }
    const std::string how = "persistent start " + std::to_string(run);
    if (run == 0) {
      for (std::size_t i = persistent.size(); i-- > 0;) persistent[i]->persistent.wait();
    } else if (run == 1) {
      for (std::size_t left = persistent.size(); left > 0;) {
        left = 0;
        for (auto& p : persistent)
          if (!p->persistent.test()) ++left;
        k.step("world: testing persistent calls, " + std::to_string(left) + " left");
      }
    } else {
      for (auto& p : persistent) p->persistent.wait();
    }
    for (const auto& p : persistent) {
      k.expect(!p->persistent.active(), how + " " + describe(p->what()) + ": still active after completion");
      check_done(k, *p, how);
    }
  }
}

}  // namespace

void world_collectives(rank_check& k, team_comm& c) {
  const std::vector<spec> calls = sweep(c.size(), k.log.threads());
  barrier_order(k, c);
  blocking_sweep(k, c, calls);
  nonblocking_sweep(k, c, calls);
  persistent_sweep(k, c, calls);
}

void few_collectives(rank_check& k, team_comm& c, const std::string& where, int salt) {
  const int q = c.size();
  auto make = [&](collective coll, elem type, reduction red, std::uint64_t count) {
    spec s;
    s.coll = coll;
    s.p = q;
    s.count = count;
    s.type = type;
    s.red = red;
    s.salt = ++salt;
    return s;
  };
  check_blocking(k, c, make(collective::allreduce, elem::i32, reduction::sum, 7), where);
  check_blocking(k, c, make(collective::allreduce, elem::affine, reduction::compose, 3), where);  // rank order
  spec b = make(collective::bcast, elem::i32, reduction::sum, 9);
  b.root = q - 1;  // not 0 when the comm has more than one rank
  check_blocking(k, c, b, where);
  spec v = make(collective::allgatherv, elem::f64, reduction::sum, 0);
  v.cnt = irregular_counts(q, salt);
  check_blocking(k, c, v, where);
  check_blocking(k, c, make(collective::alltoall, elem::i32, reduction::sum, 2), where);
  // Two in flight, the later one completed first.
  spec g = make(collective::gather, elem::affine, reduction::sum, 4);
  g.root = q / 2;
  auto first = issue(c, form::nonblocking, make(collective::scan, elem::affine, reduction::compose, 4));
  auto second = issue(c, form::nonblocking, g);
  k.step(where + ": waiting for iscan and igather");
  second->request.wait();
  first->request.wait();
  check_done(k, *first, where + ": nonblocking");
  check_done(k, *second, where + ": nonblocking");
}

}  // namespace team_check
