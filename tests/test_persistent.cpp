// Repeated calls: persistent collectives (comm's *_init forms and init_collective) and the
// blocking fast path that reuses the last call's preparation. Each run sees the data the
// caller put in the buffers just before it: new inputs on the same buffers give new results,
// checked against the sequential reference of those inputs.
#include <doctest/doctest.h>

#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "collective_checks.hpp"
#include "ranklab/ranklab.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

call call_for(collective c, std::string_view algo, int p) { return irregular_call(c, algo, p, 11); }

// Puts run k's inputs into the buffers the calls were prepared with (same sizes: same call).
void load_inputs(test_data& buffers, const test_data& run) {
  for (std::size_t r = 0; r < buffers.in.size(); ++r) {
    std::copy(run.in[r].begin(), run.in[r].end(), buffers.in[r].begin());
    std::copy(run.out[r].begin(), run.out[r].end(), buffers.out[r].begin());  // the fill pattern again
  }
}

// The results in `buffers`, checked as run k's outputs.
std::string check_run(const call& c, const test_data& buffers, test_data run) {
  run.out = buffers.out;
  return compare(c, run);
}

constexpr int runs = 3;

// Prepares the call on every rank (prepare(comm, rank's buffers) returns a handle), then runs
// it `runs` times on the same buffers with new inputs each time (run_once(comm, handle)),
// checking every run.
template <class Prepare, class RunOnce>
std::string repeat_with_new_inputs(const call& c, Prepare&& prepare, RunOnce&& run_once) {
  test_data d = make_test_data(c, 100);
  auto buffers = d.buffers();
  std::string first_difference;
  run(c.args.p, [&](comm& cm) {
    auto handle = prepare(cm, buffers[cm.rank()]);
    for (int k = 0; k < runs; ++k) {
      test_data inputs;
      if (cm.rank() == 0) {
        inputs = make_test_data(c, 200 + k);
        load_inputs(d, inputs);
      }
      cm.barrier();  // inputs in place before anyone starts
      run_once(cm, handle);
      cm.barrier();  // every result complete
      if (cm.rank() == 0 && first_difference.empty()) {
        const std::string diff = check_run(c, d, inputs);
        if (!diff.empty()) first_difference = fmt::format("run {}: {}", k, diff);
      }
      cm.barrier();
    }
  });
  return first_difference;
}

}  // namespace

TEST_CASE("persistent collectives: every collective and algorithm, new inputs each run, p = 1..9") {
  for (int coll = 0; coll < collective_count; ++coll) {
    const auto c = static_cast<collective>(coll);
    for (const algorithm* a : registry::for_collective(c)) {
      for (int p : {1, 2, 3, 4, 7, 9}) {
        const call cl = call_for(c, a->name, p);
        if (!meets_preconditions(*a, cl.args)) continue;
        INFO(name(c), " ", a->name, " p=", p);
        const std::string diff = repeat_with_new_inputs(
            cl, [&](comm& cm, const rank_buffers& b) { return cm.init_collective(cl, b.in, b.out); },
            [&](comm& cm, persistent_request& pr) {
              pr.start();
              if (cm.rank() % 2) {
                while (!pr.test()) std::this_thread::yield();
              } else {
                pr.wait();
              }
              CHECK_FALSE(pr.active());
            });
        CHECK_MESSAGE(diff.empty(), diff);
      }
    }
  }
}

TEST_CASE("repeated blocking calls on the same buffers see new inputs (the fast path), p = 1..9") {
  for (int coll = 0; coll < collective_count; ++coll) {
    const auto c = static_cast<collective>(coll);
    for (const algorithm* a : registry::for_collective(c)) {
      for (int p : {1, 2, 5, 8}) {
        const call cl = call_for(c, a->name, p);
        if (!meets_preconditions(*a, cl.args)) continue;
        INFO(name(c), " ", a->name, " p=", p);
        const std::string diff = repeat_with_new_inputs(
            cl, [&](comm&, const rank_buffers& b) { return b; },
            [&](comm& cm, const rank_buffers& b) { cm.run_collective(cl, b.in, b.out); });
        CHECK_MESSAGE(diff.empty(), diff);
      }
    }
  }
}

TEST_CASE("the typed *_init forms run like their blocking forms, interleaved with other calls") {
  for (int p : {1, 2, 3, 6}) {
    INFO("p=", p);
    run(p, [&](comm& cm) {
      const int r = cm.rank();
      std::vector<int> in(5), out(5);
      std::vector<int> buf(3);
      std::vector<int> gathered(static_cast<std::size_t>(p) * 5);
      auto sum = cm.allreduce_init(in, out, ops::sum);
      auto bc = cm.bcast_init(buf, p - 1);
      auto ag = cm.allgather_init(in, gathered);
      auto bar = cm.barrier_init();
      for (int k = 0; k < 4; ++k) {
        std::iota(in.begin(), in.end(), r * 10 + k);
        if (r == p - 1) std::fill(buf.begin(), buf.end(), 7 * k + 1);
        sum.start();
        bc.start();
        const int mine = r;
        int token = -1;
        cm.sendrecv((r + 1) % p, std::span(&mine, 1), (r + p - 1) % p, std::span(&token, 1));  // between starts
        ag.start();
        sum.wait();
        bc.wait();
        ag.wait();
        bar.start();
        bar.wait();
        CHECK(token == (r + p - 1) % p);
        for (int i = 0; i < 5; ++i) {
          // sum over ranks j of (j * 10 + k + i)
          CHECK(out[i] == 10 * p * (p - 1) / 2 + p * (k + i));
          for (int j = 0; j < p; ++j) CHECK(gathered[static_cast<std::size_t>(j) * 5 + i] == j * 10 + k + i);
        }
        CHECK(buf == std::vector<int>(3, 7 * k + 1));
        // A blocking call with the same arguments on other buffers is not mistaken for the last one.
        std::vector<int> out2(5, -1);
        cm.allreduce(in, out2, ops::sum);
        CHECK(out2 == out);
      }
    });
  }
}

TEST_CASE("persistent requests: misuse is a usage_error, destruction waits, a failure releases the others") {
  SUBCASE("start while running") {
    run(2, [&](comm& cm) {
      std::vector<int> in(4, 1), out(4);
      auto pr = cm.allreduce_init(in, out, ops::sum);
      pr.start();
      CHECK_THROWS_AS(pr.start(), usage_error);
      pr.wait();
      CHECK(out == std::vector<int>(4, 2));
      CHECK_NOTHROW(pr.wait());  // nothing running: a no-op
      CHECK(pr.test());
    });
  }
  SUBCASE("an empty one") {
    persistent_request empty;
    CHECK_FALSE(empty.valid());
    CHECK_THROWS_WITH_AS(empty.start(), doctest::Contains("empty persistent request"), usage_error);
  }
  SUBCASE("destroyed while running: waits") {
    run(3, [&](comm& cm) {
      std::vector<long> in(100, cm.rank()), out(100);
      {
        auto pr = cm.allreduce_init(in, out, ops::sum);
        pr.start();
      }
      CHECK(out == std::vector<long>(100, 3));
    });
  }
  SUBCASE("a failing rank releases a rank waiting on a persistent request") {
    CHECK_THROWS(run(3, [&](comm& cm) {
      std::vector<int> in(4, 1), out(4);
      auto pr = cm.allreduce_init(in, out, ops::sum);
      if (cm.rank() == 1) throw std::runtime_error("rank 1 gives up");
      pr.start();
      pr.wait();
    }));
  }
}

TEST_CASE("rounds between outstanding direct calls leave their published buffers alone (every call slot)") {
  // A sendrecv reuses the rank's blocking operation after a direct call: it must not
  // publish anything, or a direct call in flight in slot 0 would lose its buffers.
  for (int p : {2, 3, 6}) {
    INFO("p=", p);
    run(p, [&](comm& cm) {
      const int r = cm.rank();
      std::vector<long> in(3), out(3), out2(3);
      auto sum = cm.allreduce_init(in, out, ops::sum, {"direct"});
      for (int k = 0; k < 2 * 16 + 3; ++k) {
        std::fill(in.begin(), in.end(), r + k);
        cm.allreduce(in, out2, ops::sum, {"direct"});  // the blocking operation's plan shares buffers
        sum.start();
        const long mine = r;
        long got = -1;
        cm.sendrecv((r + 1) % p, std::span(&mine, 1), (r + p - 1) % p, std::span(&got, 1));
        sum.wait();
        CHECK(got == (r + p - 1) % p);
        CHECK(out == std::vector<long>(3, p * (p - 1) / 2 + static_cast<long>(p) * k));
        CHECK(out2 == out);
      }
    });
  }
}
