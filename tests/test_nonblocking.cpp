// Nonblocking collectives: every i-collective against the sequential reference for every
// registered algorithm, many outstanding requests completed in any order, requests mixed
// with blocking calls, the progress thread, failures.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <random>
#include <thread>

#include "collective_checks.hpp"
#include "ranklab/ranklab.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

call call_for(collective c, std::string_view algo, int p) { return irregular_call(c, algo, p, 13); }

// Runs the call as a request on every rank (waiting via test() polling on odd ranks and
// wait() on even ones) and compares with the reference.
std::string run_nonblocking(const call& c) {
  test_data d = make_test_data(c, 7);
  auto buffers = d.buffers();
  run(c.args.p, [&](comm& cm) {
    const int r = cm.rank();
    request req = cm.start_collective(c, buffers[r].in, buffers[r].out);
    if (r % 2) {
      // Polling: yield, so that on fewer cores than ranks the others progress meanwhile.
      while (!req.test()) std::this_thread::yield();
    } else {
      req.wait();
    }
    CHECK(req.done());
  });
  return compare(c, d);
}

}  // namespace

TEST_CASE("every i-collective with every algorithm matches the reference, p = 1..17") {
  for (int coll = 0; coll < collective_count; ++coll) {
    const auto c = static_cast<collective>(coll);
    for (const algorithm* a : registry::for_collective(c)) {
      for (int p = 1; p <= 17; ++p) {
        const call cl = call_for(c, a->name, p);
        if (!meets_preconditions(*a, cl.args)) continue;
        INFO(name(c), " ", a->name, " p=", p);
        std::string diff;
        try {
          diff = run_nonblocking(cl);
        } catch (const usage_error& e) {
          // An algorithm may reject parameters outside its documented domain.
          const std::string why = std::string("rejected: ") + e.what();
          MESSAGE(why);
          continue;
        }
        CHECK_MESSAGE(diff.empty(), diff);
      }
    }
  }
}

TEST_CASE("many outstanding requests complete in any order without mixing messages") {
  for (int p : {2, 3, 5, 8}) {
    run(p, [&](comm& cm) {
      const int r = cm.rank();
      constexpr int k = 6;
      std::vector<std::vector<long>> bufs(k, std::vector<long>(257));
      std::vector<std::vector<long>> outs(k, std::vector<long>(257));
      std::vector<request> reqs;
      for (int i = 0; i < k; ++i) {
        std::iota(bufs[i].begin(), bufs[i].end(), 1000 * i + r);
        if (i % 2 == 0)
          reqs.push_back(cm.iallreduce(bufs[i], outs[i], ops::sum, {i % 4 == 0 ? "circulant" : "auto"}));
        else
          reqs.push_back(cm.ibcast(bufs[i], i % p));
      }
      // Complete in a rank-specific random order.
      std::vector<int> order(k);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(r * 31 + 7)));
      for (int i : order) reqs[static_cast<std::size_t>(i)].wait();
      for (int i = 0; i < k; ++i)
        for (std::size_t j = 0; j < 257; ++j) {
          if (i % 2 == 0)
            CHECK(outs[i][j] == static_cast<long>(p) * (1000 * i + static_cast<long>(j) + 0) + p * (p - 1) / 2);
          else
            CHECK(bufs[i][j] == 1000 * i + static_cast<long>(j) + (i % p));
        }
    });
  }
}

TEST_CASE("more direct (shared-memory) requests outstanding than call slots: each call keeps its buffers and fences") {
  // Published buffers and fence counters live in 16 call slots; the 17th outstanding call
  // shares a slot with the first and must not start before it has finished.
  for (int p : {2, 3}) {
    run(p, [&](comm& cm) {
      constexpr int k = 40;
      std::vector<std::vector<int>> in(k), out(k, std::vector<int>(static_cast<std::size_t>(3 * p)));
      std::vector<request> reqs;
      for (int i = 0; i < k; ++i) {
        in[i] = {cm.rank(), i, cm.rank() * i};
        reqs.push_back(cm.iallgather(in[i], out[i], {"direct"}));
      }
      std::vector<int> order(k);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(cm.rank() + 1)));
      for (int i : order) reqs[static_cast<std::size_t>(i)].wait();
      for (int i = 0; i < k; ++i)
        for (int r = 0; r < p; ++r) {
          CHECK(out[i][3 * r] == r);
          CHECK(out[i][3 * r + 1] == i);
          CHECK(out[i][3 * r + 2] == r * i);
        }
    });
  }
}

TEST_CASE("requests interleave with blocking calls, wait_any and test_all") {
  run(6, [&](comm& cm) {
    const int r = cm.rank();
    // Separate buffers: a buffer an outstanding ibcast writes must not be another pending
    // call's input (as in MPI; ThreadSanitizer reports the race with a direct allgather).
    std::vector<int> a(100, r), g(100, r), b(600);
    request ra = cm.ibcast(a, 2);
    request rb = cm.iallgather(g, b);
    std::vector<double> x(50, 1.0);
    cm.allreduce(x, ops::sum);  // blocking, while two requests are outstanding
    CHECK(x[0] == 6.0);
    std::vector<request> reqs;
    reqs.push_back(std::move(ra));
    reqs.push_back(std::move(rb));
    std::size_t first = wait_any(reqs);
    CHECK(first < 2);
    wait_all(reqs);
    CHECK(test_all(reqs));
    for (int v : a) CHECK(v == 2);
    for (std::size_t i = 0; i < b.size(); ++i) CHECK(b[i] == static_cast<int>(i / 100));
  });
}

TEST_CASE("a destroyed unfinished request waits for completion") {
  run(4, [&](comm& cm) {
    std::vector<int> v(1000, cm.rank());
    { request r = cm.ibcast(v, 1); }  // destructor waits
    for (int x : v) CHECK(x == 1);
  });
}

TEST_CASE("with a progress thread, requests finish while the rank never calls test") {
  team_options o;
  o.progress_thread = true;
  run(
      4,
      [&](comm& cm) {
        std::vector<long> in(5000, cm.rank() + 1), out(5000 * 4);
        request r = cm.iallgather(in, out, {"ring"});
        // Compute without touching the request until it reports done (liveness, not speed).
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        volatile double sink = 0;
        while (!r.done() && std::chrono::steady_clock::now() < deadline)
          for (int i = 0; i < 10000; ++i) sink = sink + i;
        CHECK(r.done());
        r.wait();
        for (int j = 0; j < 4; ++j) CHECK(out[static_cast<std::size_t>(j) * 5000] == j + 1);
      },
      o);
}

TEST_CASE("a failing rank releases ranks waiting on requests") {
  std::atomic<int> released{0};
  CHECK_THROWS_WITH_AS(run(5,
                           [&](comm& cm) {
                             std::vector<int> v(10, 0);
                             if (cm.rank() == 3) throw std::runtime_error("boom");
                             try {
                               request r = cm.ibcast(v, 3);
                               r.wait();
                             } catch (const remote_failure& e) {
                               CHECK(e.origin_rank() == 3);
                               ++released;
                               throw;
                             }
                           }),
                       "boom", std::runtime_error);
  CHECK(released == 4);
}

TEST_CASE("mismatched i-collectives are detected") {
  team_options o;
  o.deadlock_timeout = std::chrono::milliseconds(200);
  CHECK_THROWS_AS(run(
                      3,
                      [&](comm& cm) {
                        std::vector<int> v(10, 0);
                        request r = cm.ibcast(v, cm.rank() == 0 ? 0 : 1, {"binomial"});
                        r.wait();
                        cm.barrier();
                      },
                      o),
                  mismatch_error);
}
