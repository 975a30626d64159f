// Failure semantics of the thread runtime:
//  * an exception in one rank releases every blocked rank with remote_failure naming the
//    origin, and ranklab::run rethrows the original exception (type and message);
//  * deadlocks (every live rank blocked, nothing in flight) give deadlock_error on every rank,
//    naming who waits for whom;
//  * collective mismatches (different collectives, roots, counts, types, operators or
//    algorithms at the same position of the ranks' sequences) give mismatch_error instead
//    of a hang or wrong data.
// Each rank records what it observed (catch, record, rethrow) so the tests can check every
// rank, not only what run() rethrows. Test names say which exception is expected.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ranklab/ranklab.hpp"
#include "test_support.hpp"

namespace {

using namespace ranklab;
using namespace ranklab::testing;
using namespace std::chrono_literals;

// A bcast algorithm that exists only in this test: the root sends to every other rank, one
// per round (relative rank v receives in round v-1). Lets mismatch tests ask for two
// different algorithms whatever else is registered.
schedule flat_bcast(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const int v = (rank - a.root + a.p) % a.p;
  const region all{out_buffer, 0, a.count};
  for (int t = 1; t < a.p; ++t) {
    s.next_round();
    if (v == 0)
      s.send((a.root + t) % a.p, all);
    else if (v == t)
      s.recv(a.root, all);
  }
  return s;
}
const algorithm flat_bcast_info{
    .name = "testonly_flat_failures",
    .coll = collective::bcast,
    .summary = "test only: the root sends to each rank in turn",
    .build = flat_bcast,
};
RANKLAB_REGISTER_ALGORITHM(flat_bcast_info);

team_options fast_detection() {
  team_options o;
  o.deadlock_timeout = 200ms;
  return o;
}

// What one rank saw: "ok", or the exception class it ended with, its origin and message.
struct outcome {
  std::string kind = "not run";
  int origin = -2;  // remote_failure::origin_rank()
  std::string what;
};

struct recorder {
  std::vector<outcome> seen;
  explicit recorder(int p) : seen(static_cast<std::size_t>(p)) {}

  // Wraps a rank function: runs it, records how it ended, rethrows.
  template <class F>
  auto wrap(F fn) {
    return [this, fn](comm& c) {
      outcome& o = seen[static_cast<std::size_t>(c.rank())];
      try {
        fn(c);
        o.kind = "ok";
      } catch (const remote_failure& e) {
        o = {"remote_failure", e.origin_rank(), e.what()};
        throw;
      } catch (const deadlock_error& e) {
        o = {"deadlock_error", -2, e.what()};
        throw;
      } catch (const mismatch_error& e) {
        o = {"mismatch_error", -2, e.what()};
        throw;
      } catch (const size_mismatch_error& e) {
        o = {"size_mismatch_error", -2, e.what()};
        throw;
      } catch (const usage_error& e) {
        o = {"usage_error", -2, e.what()};
        throw;
      } catch (const std::exception& e) {
        o = {"std::exception", -2, e.what()};
        throw;
      } catch (...) {
        o = {"unknown", -2, ""};
        throw;
      }
    };
  }
};

// Runs fn on p ranks and returns the exception run() rethrew (or null).
template <class F>
std::exception_ptr run_catching(int p, F fn, team_options o = fast_detection()) {
  try {
    run(p, fn, o);
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

// The message of a std::exception in `e`, or "" for anything else.
std::string message_of(std::exception_ptr e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
  }
  return "";
}

template <class E>
bool holds(std::exception_ptr e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const E&) {
    return true;
  } catch (...) {
  }
  return false;
}

// The exact dynamic type of a std::runtime_error: not any ranklab error.
bool is_plain_runtime_error(std::exception_ptr e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const ranklab::error&) {
    return false;
  } catch (const std::runtime_error&) {
    return true;
  } catch (...) {
  }
  return false;
}

struct custom_failure : std::exception {
  int code;
  explicit custom_failure(int c) : code(c) {}
  const char* what() const noexcept override { return "custom failure"; }
};

// Checks that every rank but `origin` ended with remote_failure naming `origin` and
// carrying `text`.
void expect_released(const recorder& rec, int origin, const std::string& text) {
  for (std::size_t r = 0; r < rec.seen.size(); ++r) {
    if (static_cast<int>(r) == origin) continue;
    CAPTURE(r);
    CHECK(rec.seen[r].kind == "remote_failure");
    CHECK(rec.seen[r].origin == origin);
    CHECK(contains(rec.seen[r].what, text));
    CHECK(contains(rec.seen[r].what, "rank " + std::to_string(origin)));
  }
}

}  // namespace

TEST_SUITE("failures") {
  // ---- an exception in one rank ------------------------------------------------------------

  TEST_CASE(
      "rank 3 throws runtime_error(boom) while the others wait in recv: run rethrows it, others get "
      "remote_failure(3)") {
    for (int p : {4, 5, 8, 17}) {
      CAPTURE(p);
      recorder rec(p);
      auto e = run_catching(p, rec.wrap([](comm& c) {
        if (c.rank() == 3) {
          std::this_thread::sleep_for(20ms);  // typically the others are asleep by now
          throw std::runtime_error("boom");
        }
        std::uint64_t x = 0;
        c.recv((c.rank() + c.size() - 1) % c.size(), std::span(&x, 1));  // nobody ever sends
      }));
      REQUIRE(e);
      CHECK(is_plain_runtime_error(e));
      CHECK(message_of(e) == "boom");
      CHECK(rec.seen[3].kind == "std::exception");
      expect_released(rec, 3, "boom");
    }
  }

  TEST_CASE(
      "rank 3 throws while the others wait in a collective (bcast from root 3, allreduce, barrier): "
      "remote_failure(3)") {
    for (int which = 0; which < 3; ++which) {
      for (int p : {4, 7, 16}) {
        CAPTURE(which);
        CAPTURE(p);
        recorder rec(p);
        auto e = run_catching(p, rec.wrap([which](comm& c) {
          if (c.rank() == 3) {
            std::this_thread::sleep_for(10ms);
            throw std::runtime_error("boom");
          }
          std::vector<std::int32_t> v(1000, c.rank()), out(1000);
          if (which == 0)
            c.bcast(v, 3, {"binomial"});
          else if (which == 1)
            c.allreduce(v, out, ops::sum, {"recursive_doubling"});
          else
            c.barrier({"dissemination"});
        }));
        CHECK(is_plain_runtime_error(e));
        CHECK(message_of(e) == "boom");
        expect_released(rec, 3, "boom");
      }
    }
  }

  TEST_CASE(
      "rank 3 throws after five good collectives: run rethrows boom, the others are released (in the fifth or sixth)") {
    constexpr int p = 6;
    recorder rec(p);
    std::vector<int> completed(p, 0);
    auto e = run_catching(p, rec.wrap([&](comm& c) {
      for (int i = 0; i < 10; ++i) {
        if (c.rank() == 3 && i == 5) throw std::runtime_error("boom");
        std::vector<double> v(10, 1.0);
        c.allreduce(v, ops::sum, {"recursive_doubling"});
        if (v[0] == p) ++completed[c.rank()];
      }
    }));
    CHECK(message_of(e) == "boom");
    expect_released(rec, 3, "boom");
    // Rank 3 completed five; the others completed four or five: the failure releases ranks
    // that are still finishing the fifth call too (fail fast, nothing waits for stragglers).
    CHECK(completed[3] == 5);
    for (int r = 0; r < p; ++r) CHECK((completed[r] == 4 || completed[r] == 5));
  }

  TEST_CASE("a custom exception type and a non-std exception are rethrown as thrown") {
    {
      recorder rec(4);
      auto e = run_catching(4, rec.wrap([](comm& c) {
        if (c.rank() == 2) throw custom_failure(42);
        c.barrier();
      }));
      REQUIRE(e);
      int code = 0;
      try {
        std::rethrow_exception(e);
      } catch (const custom_failure& f) {
        code = f.code;
      } catch (...) {
      }
      CHECK(code == 42);
      expect_released(rec, 2, "custom failure");
    }
    {
      recorder rec(4);
      auto e = run_catching(4, rec.wrap([](comm& c) {
        if (c.rank() == 1) throw 17;
        c.barrier();
      }));
      REQUIRE(e);
      int thrown = 0;
      try {
        std::rethrow_exception(e);
      } catch (int x) {
        thrown = x;
      } catch (...) {
      }
      CHECK(thrown == 17);
      expect_released(rec, 1, "unknown exception");
    }
  }

  TEST_CASE("two ranks throw: run rethrows one of them and every released rank names that one") {
    constexpr int p = 8;
    recorder rec(p);
    auto e = run_catching(p, rec.wrap([](comm& c) {
      if (c.rank() == 2 || c.rank() == 5) throw std::runtime_error("boom from rank " + std::to_string(c.rank()));
      c.barrier();
    }));
    const std::string msg = message_of(e);
    REQUIRE((msg == "boom from rank 2" || msg == "boom from rank 5"));
    const int origin = msg.back() - '0';
    for (int r = 0; r < p; ++r) {
      if (r == 2 || r == 5) continue;
      CAPTURE(r);
      CHECK(rec.seen[r].kind == "remote_failure");
      CHECK(rec.seen[r].origin == origin);
    }
  }

  TEST_CASE("a rank that throws instead of receiving a large message releases its sender with remote_failure") {
    recorder rec(2);
    auto e = run_catching(2, rec.wrap([](comm& c) {
      if (c.rank() == 0) {
        std::vector<std::uint64_t> big(100000, 7);  // by descriptor: the sender waits for the receiver
        c.send(1, big);
      } else {
        std::this_thread::sleep_for(20ms);
        throw std::runtime_error("receiver gave up");
      }
    }));
    CHECK(message_of(e) == "receiver gave up");
    expect_released(rec, 1, "receiver gave up");
  }

  TEST_CASE("a rank that throws while an eager message waits for it: run rethrows that exception") {
    recorder rec(2);
    std::atomic<bool> sent{false};
    auto e = run_catching(2, rec.wrap([&](comm& c) {
      if (c.rank() == 0) {
        std::uint64_t x = 1;
        c.send(1, std::span(&x, 1));  // inline: completes at once
        sent = true;
      } else {
        while (!sent) ranklab::yield();  // fail only after rank 0 is done (on a fiber: let it run)
        throw std::runtime_error("not now");
      }
    }));
    CHECK(is_plain_runtime_error(e));
    CHECK(message_of(e) == "not now");
    CHECK(rec.seen[0].kind == "ok");
  }

  TEST_CASE("a team can run after another team failed (failures are per team)") {
    CHECK_THROWS_AS(run(
                        3,
                        [](comm& c) {
                          if (c.rank() == 1) throw std::runtime_error("x");
                          c.barrier();
                        },
                        fast_detection()),
                    std::runtime_error);
    int sum = 0;
    std::mutex m;
    run(
        3,
        [&](comm& c) {
          std::vector<int> v{c.rank()};
          c.allreduce(v, ops::sum);
          std::lock_guard lock(m);
          sum += v[0];
        },
        fast_detection());
    CHECK(sum == 9);
  }

  // ---- deadlocks -------------------------------------------------------------------------------

  TEST_CASE("deadlock: every rank receives from its left neighbour, nobody sends -> deadlock_error on all ranks") {
    for (int p : {1, 2, 5, 16}) {
      CAPTURE(p);
      recorder rec(p);
      const auto t0 = std::chrono::steady_clock::now();
      auto e = run_catching(p, rec.wrap([](comm& c) {
        std::uint64_t x = 0;
        c.recv((c.rank() + c.size() - 1) % c.size(), std::span(&x, 1));
      }));
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      MESSAGE("p=", p, ": deadlock reported after ", seconds, " s (timeout 0.2 s)");
      CHECK(seconds < 30);  // a sanity bound only: "within about a second" on an idle machine
      REQUIRE(holds<deadlock_error>(e));
      const std::string what = message_of(e);
      CHECK(contains(what, "waits for a message from rank"));
      for (int r = 0; r < p; ++r) {
        CAPTURE(r);
        CHECK(contains(
            what, "rank " + std::to_string(r) + " waits for a message from rank " + std::to_string((r + p - 1) % p)));
        CHECK(rec.seen[r].kind == "deadlock_error");
      }
    }
  }

  TEST_CASE("deadlock: ranks that only poll request::test() on calls that cannot finish -> deadlock_error, no hang") {
    // Nobody sleeps here (rank 0 spins on test(); with p > 2 the others too), so the pollers
    // themselves must count as stuck and run the detector.
    for (int p : {2, 3}) {
      CAPTURE(p);
      recorder rec(p);
      auto e = run_catching(p, rec.wrap([](comm& c) {
        std::vector<int> v(4, c.rank());
        if (c.rank() == 1) return;  // never joins the allreduce
        request r = c.iallreduce(v, ops::sum, {"ring"});
        while (!r.test()) std::this_thread::yield();
      }));
      REQUIRE(holds<deadlock_error>(e));
      const std::string what = message_of(e);
      CHECK(contains(what, "(polling request::test)"));
      CHECK(contains(what, "rank 1 has returned"));
      for (int r = 0; r < p; ++r) {
        CAPTURE(r);
        if (r != 1) CHECK(rec.seen[r].kind == "deadlock_error");
      }
    }
  }

  TEST_CASE("deadlock: rank 0 returns early while the others wait for it -> deadlock_error naming rank 0") {
    constexpr int p = 4;
    recorder rec(p);
    auto e = run_catching(p, rec.wrap([](comm& c) {
      if (c.rank() == 0) return;
      std::uint64_t x = 0;
      c.recv(0, std::span(&x, 1));
    }));
    REQUIRE(holds<deadlock_error>(e));
    const std::string what = message_of(e);
    CHECK(contains(what, "rank 0 has returned"));
    for (int r = 1; r < p; ++r) {
      CHECK(contains(what, "rank " + std::to_string(r) + " waits for a message from rank 0"));
      CHECK(rec.seen[r].kind == "deadlock_error");
    }
    CHECK(rec.seen[0].kind == "ok");
  }

  TEST_CASE(
      "deadlock: rank 0 returns early while the others are in a barrier -> deadlock_error naming the collective") {
    constexpr int p = 5;
    recorder rec(p);
    auto e = run_catching(p, rec.wrap([](comm& c) {
      if (c.rank() == 0) return;
      c.barrier({"dissemination"});
    }));
    REQUIRE(holds<deadlock_error>(e));
    const std::string what = message_of(e);
    CHECK(contains(what, "rank 0 has returned"));
    CHECK(contains(what, "barrier"));
    CHECK(contains(what, "waits for a message from rank"));
    for (int r = 1; r < p; ++r) CHECK(rec.seen[r].kind == "deadlock_error");
  }

  TEST_CASE("deadlock: one rank calls a barrier more often than the others -> deadlock_error") {
    constexpr int p = 4;
    recorder rec(p);
    auto e = run_catching(p, rec.wrap([](comm& c) {
      c.barrier({"dissemination"});
      if (c.rank() == 2) c.barrier({"dissemination"});
    }));
    REQUIRE(holds<deadlock_error>(e));
    CHECK(contains(message_of(e), "rank 2 waits for a message from rank"));
    CHECK(contains(message_of(e), "collective #2"));
    CHECK(rec.seen[2].kind == "deadlock_error");
  }

  TEST_CASE("deadlock: rank 0 returns early while the others wait at a counter barrier's fence -> deadlock_error") {
    constexpr int p = 4;
    recorder rec(p);
    auto e = run_catching(p, rec.wrap([](comm& c) {
      c.barrier({"counter"});  // a fence everyone passes
      if (c.rank() == 0) return;
      c.barrier({"counter"});
    }));
    REQUIRE(holds<deadlock_error>(e));
    const std::string what = message_of(e);
    CHECK(contains(what, "rank 0 has returned"));
    for (int r = 1; r < p; ++r) {
      CHECK(contains(what, "rank " + std::to_string(r) + " waits at a fence for the other ranks in collective #2"));
      CHECK(rec.seen[r].kind == "deadlock_error");
    }
  }

  TEST_CASE("deadlock: a sender blocked on a full mailbox -> deadlock_error saying it waits for space") {
    constexpr int p = 3;
    recorder rec(p);
    auto e = run_catching(p, rec.wrap([](comm& c) {
      std::vector<std::byte> none;
      if (c.rank() == 0) {
        for (int i = 0; i < 100000; ++i) c.send(1, none);  // rank 1 never receives
      } else {
        c.recv(3 - c.rank(), none);  // ranks 1 and 2 wait for each other
      }
    }));
    REQUIRE(holds<deadlock_error>(e));
    const std::string what = message_of(e);
    CHECK(contains(what, "rank 0 waits for space in its mailbox to rank 1"));
    CHECK(contains(what, "rank 1 waits for a message from rank 2"));
    CHECK(contains(what, "rank 2 waits for a message from rank 1"));
  }

  TEST_CASE("deadlock: a large message nobody receives -> deadlock_error saying the sender waits for it to be taken") {
    constexpr int p = 2;
    recorder rec(p);
    auto e = run_catching(p, rec.wrap([](comm& c) {
      if (c.rank() == 0) {
        std::vector<std::uint64_t> big(10000, 1);
        c.send(1, big);
      } else {
        std::uint64_t x;
        c.recv(1, std::span(&x, 1));  // waits for itself
      }
    }));
    REQUIRE(holds<deadlock_error>(e));
    CHECK(contains(message_of(e), "rank 0 waits for rank 1 to take its message"));
    CHECK(contains(message_of(e), "rank 1 waits for a message from rank 1"));
  }

  TEST_CASE("deadlock: a large send to oneself as a half round -> deadlock_error (descriptors wait for the receiver)") {
    recorder rec(1);
    auto e = run_catching(1, rec.wrap([](comm& c) {
      std::vector<std::uint64_t> big(1000, 1);
      c.send(0, big);
    }));
    REQUIRE(holds<deadlock_error>(e));
    CHECK(contains(message_of(e), "rank 0 waits for rank 0 to take its message"));
  }

  TEST_CASE("after a deadlock the ranks' errors say deadlock, and run rethrows a deadlock_error") {
    // Covered above per rank; here the error's fields.
    auto e = run_catching(2, [](comm& c) {
      std::uint64_t x;
      c.recv(1 - c.rank(), std::span(&x, 1));
    });
    try {
      std::rethrow_exception(e);
    } catch (const deadlock_error& d) {
      CHECK(d.operation() == "deadlock detection");
      CHECK(contains(d.cause(), "every live rank is blocked"));
    } catch (...) {
      FAIL("not a deadlock_error");
    }
  }

  // ---- collective mismatches -------------------------------------------------------------------

  // Runs fn on p ranks and checks that run() throws mismatch_error and every rank ended with an
  // error (mismatch_error where it detected it, remote_failure elsewhere). Returns the message.
  template <class F>
  std::string expect_mismatch(int p, F fn) {
    recorder rec(p);
    auto e = run_catching(p, rec.wrap(fn));
    INFO("run threw: ", message_of(e));
    CHECK(holds<mismatch_error>(e));
    for (int r = 0; r < p; ++r) {
      CAPTURE(r);
      INFO("rank ended with ", rec.seen[r].kind, ": ", rec.seen[r].what);
      CHECK((rec.seen[r].kind == "mismatch_error" || rec.seen[r].kind == "remote_failure" || rec.seen[r].kind == "ok"));
    }
    return message_of(e);
  }

  TEST_CASE(
      "mismatch: rank 0 broadcasts from root 0, the others from root 1 -> mismatch_error (small and large data)") {
    for (int p : {2, 3, 4, 5, 8}) {
      for (std::size_t n : {std::size_t{4}, std::size_t{10000}}) {
        CAPTURE(p);
        CAPTURE(n);
        const std::string what = expect_mismatch(p, [n](comm& c) {
          std::vector<std::int32_t> v(n, c.rank());
          c.bcast(v, c.rank() == 0 ? 0 : 1, {"binomial"});
        });
        CHECK(contains(what, "bcast"));
      }
    }
  }

  TEST_CASE("mismatch: rank 0 calls allreduce while the others call bcast -> mismatch_error naming both") {
    for (int p : {2, 4, 5}) {
      CAPTURE(p);
      const std::string what = expect_mismatch(p, [](comm& c) {
        std::vector<std::int32_t> v(10, c.rank()), out(10);
        if (c.rank() == 0)
          c.allreduce(v, out, ops::sum, {"recursive_doubling"});
        else
          c.bcast(v, 0, {"binomial"});
      });
      CHECK(contains(what, "allreduce"));
      CHECK(contains(what, "bcast"));
    }
  }

  TEST_CASE("mismatch: allreduce with different counts -> mismatch_error") {
    for (int p : {2, 3, 8}) {
      CAPTURE(p);
      const std::string what = expect_mismatch(p, [](comm& c) {
        const std::size_t n = c.rank() == c.size() - 1 ? 11 : 10;
        std::vector<std::int32_t> v(n, 1), out(n);
        c.allreduce(v, out, ops::sum, {"recursive_doubling"});
      });
      // The receiving rank describes its own call; the sender's count is not in the message
      // header, so the error says the counts (or type, operator, algorithm) differ.
      INFO("message: ", what);
      CHECK((contains(what, "count=10") || contains(what, "count=11")));
      CHECK(contains(what, "different counts"));
    }
  }

  TEST_CASE("mismatch: bcast with different counts on the root and the others -> mismatch_error") {
    expect_mismatch(4, [](comm& c) {
      std::vector<std::int32_t> v(c.rank() == 0 ? 100 : 50, 1);
      c.bcast(v, 0, {"binomial"});
    });
  }

  TEST_CASE("mismatch: allreduce with different operators (sum vs max) -> mismatch_error") {
    expect_mismatch(4, [](comm& c) {
      std::vector<std::int32_t> v(8, 1), out(8);
      c.allreduce(v, out, c.rank() == 1 ? ops::max : ops::sum, {"recursive_doubling"});
    });
  }

  TEST_CASE("mismatch: allreduce with different element types of the same size (int32 vs float) -> mismatch_error") {
    expect_mismatch(2, [](comm& c) {
      if (c.rank() == 0) {
        std::vector<std::int32_t> v(8, 1), out(8);
        c.allreduce(v, out, ops::sum, {"recursive_doubling"});
      } else {
        std::vector<float> v(8, 1), out(8);
        c.allreduce(v, out, ops::sum, {"recursive_doubling"});
      }
    });
  }

  TEST_CASE("mismatch: bcast with different algorithms requested explicitly -> mismatch_error") {
    const std::string what = expect_mismatch(4, [](comm& c) {
      std::vector<std::int32_t> v(16, c.rank());
      c.bcast(v, 0, {c.rank() == 0 ? "binomial" : "testonly_flat_failures"});
    });
    INFO("message: ", what);
    CHECK((contains(what, "algorithm=binomial") || contains(what, "algorithm=testonly_flat_failures")));
    CHECK(contains(what, "algorithm"));
    if (registry::find(collective::bcast, "circulant")) {
      expect_mismatch(5, [](comm& c) {
        std::vector<std::int32_t> v(100, c.rank());
        c.bcast(v, 2, {c.rank() == 3 ? "circulant" : "binomial"});
      });
    }
  }

  TEST_CASE("mismatch: barrier on some ranks, allreduce on others -> mismatch_error") {
    expect_mismatch(4, [](comm& c) {
      if (c.rank() % 2) {
        c.barrier({"dissemination"});
      } else {
        std::vector<std::int32_t> v(3, 1), out(3);
        c.allreduce(v, out, ops::sum, {"recursive_doubling"});
      }
    });
  }

  TEST_CASE(
      "mismatch: direct (shared-memory) algorithms of different collectives meet at fences -> mismatch_error, not "
      "wrong data") {
    // The fences are counters and carry no signature, so rank 0's bcast and the others'
    // allreduce pass them together; the direct reads check the owner's call signature.
    const std::string what = expect_mismatch(4, [](comm& c) {
      std::vector<std::int32_t> v(64, c.rank()), out(64);
      if (c.rank() == 0)
        c.bcast(v, 0, {"direct"});
      else
        c.allreduce(v, out, ops::sum, {"direct"});
    });
    INFO("message: ", what);
    CHECK(contains(what, "mismatch"));
  }

  TEST_CASE(
      "mismatch: a point-to-point message sent to a rank that only does a collective -> mismatch_error (undelivered "
      "message)") {
    const std::string what = expect_mismatch(2, [](comm& c) {
      if (c.rank() == 0) {
        std::uint64_t x = 1;
        c.send(1, std::span(&x, 1));
      }
      c.barrier({"dissemination"});
    });
    INFO("message: ", what);
    CHECK(contains(what, "rank 1"));                                      // the rank left holding the message
    CHECK((contains(what, "point-to-point") || contains(what, "0:#0")));  // sent by rank 0 outside any collective
  }

  TEST_CASE(
      "mismatch: ranks blocked in different collectives with nothing in flight -> mismatch_error from the detector") {
    // Rank 0 waits in a bcast from root 1, rank 1 in a bcast from root 0: nobody sends.
    const std::string what = expect_mismatch(2, [](comm& c) {
      std::vector<std::int32_t> v(4, 0);
      c.bcast(v, 1 - c.rank(), {"binomial"});
    });
    CHECK(contains(what, "different collective calls"));
  }

  TEST_CASE(
      "no false mismatch: the same call with algorithm auto on one rank and the name it resolves to on the others") {
    coll_args a;
    a.coll = collective::bcast;
    a.p = 4;
    a.count = 10;
    const std::string resolved(select_algorithm(a, sizeof(std::int32_t), "auto").name);
    std::vector<std::string> names(4);
    std::vector<int> right(4, 0);
    run(
        4,
        [&](comm& c) {
          std::vector<std::int32_t> v(10, c.rank() == 0 ? 5 : 0);
          if (c.rank() == 0)
            c.bcast(v, 0);
          else
            c.bcast(v, 0, {resolved});
          names[c.rank()] = std::string(c.last_algorithm()->name);
          right[c.rank()] = v == std::vector<std::int32_t>(10, 5);
        },
        fast_detection());
    for (int r = 0; r < 4; ++r) {
      CHECK(names[r] == resolved);
      CHECK(right[r] == 1);
    }
  }

}  // TEST_SUITE
