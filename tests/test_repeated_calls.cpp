// Runs of blocking calls on a thread team, where a rank with nothing else to advance runs a
// call whose rounds are messages and local steps through the executor's quick path
// (thread_executor.cpp, run_quick) and hands over to the general round interpreter
// wherever a message does not fit it: a full express lane (the sender queues, the receiver
// finds the message in the queue), a message of another call or another collective, a peer
// that fails. Every call's result is checked against values computed here, call by call.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <functional>
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

// Element k of rank r's contribution to call i: distinct across calls, ranks and positions.
std::int32_t value(int i, int r, std::size_t k) {
  return static_cast<std::int32_t>(i * 7919 + r * 104729 + static_cast<int>(k) * 31);
}

team_options threads() {
  team_options o;
  o.execution = execution_mode::threads;
  return o;
}

}  // namespace

TEST_SUITE("repeated calls") {
  TEST_CASE("a root that runs hundreds of calls ahead: every bcast delivers its own call's data, in order") {
    // The late receiver lets the root fill the express lane (128 lines) and then the queue:
    // its calls leave the quick path for the general one and come back, and the receiver
    // finds messages in the lane and in the queue. 8 B is one line, 200 B four, 1 KiB 17.
    for (std::size_t count : {std::size_t{2}, std::size_t{50}, std::size_t{256}}) {
      for (int p : {2, 3}) {
        CAPTURE(count);
        CAPTURE(p);
        constexpr int calls = 600;
        std::vector<int> wrong(static_cast<std::size_t>(p), 0);
        run(
            p,
            [&](comm& c) {
              if (c.rank() != 0) std::this_thread::sleep_for(20ms);
              std::vector<std::int32_t> buf(count);
              for (int i = 0; i < calls; ++i) {
                if (c.rank() == 0)
                  for (std::size_t k = 0; k < count; ++k) buf[k] = value(i, 0, k);
                c.bcast(buf, 0, {"binomial"});
                for (std::size_t k = 0; k < count; ++k) wrong[c.rank()] += buf[k] != value(i, 0, k);
              }
            },
            threads());
        for (int r = 0; r < p; ++r) CHECK(wrong[r] == 0);
      }
    }
  }

  TEST_CASE("a late root of a run of gathers finds the senders' messages in the lane and in the queue") {
    constexpr int p = 3, calls = 500;
    constexpr std::size_t count = 3;
    int wrong = 0;
    run(
        p,
        [&](comm& c) {
          if (c.rank() == 1) std::this_thread::sleep_for(20ms);
          std::vector<std::int32_t> in(count), out(count * p);
          for (int i = 0; i < calls; ++i) {
            for (std::size_t k = 0; k < count; ++k) in[k] = value(i, c.rank(), k);
            c.gather(in, out, 1, {"linear"});
            if (c.rank() == 1)
              for (int r = 0; r < p; ++r)
                for (std::size_t k = 0; k < count; ++k) wrong += out[r * count + k] != value(i, r, k);
          }
        },
        threads());
    CHECK(wrong == 0);
  }

  TEST_CASE("repeated allreduce and allgather interleaved with sendrecv and other collectives stay exact") {
    // Calls of different collectives and sizes in turn, on the same buffers and not: each
    // prepared call is a quick one, and the messages of one are never taken for another's.
    for (int p : {2, 4, 5}) {
      CAPTURE(p);
      std::vector<int> wrong(static_cast<std::size_t>(p), 0);
      run(
          p,
          [&](comm& c) {
            const int me = c.rank();
            std::vector<std::int32_t> in(4), sum(4), all(4 * static_cast<std::size_t>(p));
            for (int i = 0; i < 300; ++i) {
              for (std::size_t k = 0; k < in.size(); ++k) in[k] = value(i, me, k);
              c.allreduce(in, sum, ops::sum);
              for (std::size_t k = 0; k < in.size(); ++k) {
                std::int32_t want = 0;
                for (int r = 0; r < p; ++r) want += value(i, r, k);
                wrong[me] += sum[k] != want;
              }
              if (i % 3 == 0) {
                const int right = (me + 1) % p, left = (me + p - 1) % p;
                std::int32_t got = -1;
                c.sendrecv(right, std::span(&in[0], 1), left, std::span(&got, 1));
                wrong[me] += got != value(i, left, 0);
              }
              c.allgather(in, all);
              for (int r = 0; r < p; ++r)
                for (std::size_t k = 0; k < in.size(); ++k) wrong[me] += all[r * in.size() + k] != value(i, r, k);
              if (i % 5 == 0) c.barrier();
            }
          },
          threads());
      for (int r = 0; r < p; ++r) CHECK(wrong[r] == 0);
    }
  }

  TEST_CASE("repeated calls through the general entry point (comm::run_collective) with a late peer stay exact") {
    // The way ranklab bench times calls: the same `call` on the same buffers, so that every
    // call after the first repeats the prepared one. The rank that is late at the start and
    // now and then makes the others' repeated quick calls stop at a message that has not
    // come (in any round of a call of several, p = 3) and go on in the general interpreter.
    for (collective coll : {collective::bcast, collective::gather, collective::scatter, collective::allreduce,
                            collective::scan, collective::allgather}) {
      for (int p : {2, 3}) {
        CAPTURE(name(coll));
        CAPTURE(p);
        constexpr std::uint64_t count = 2;
        const call c = make_call(coll, p, count, p - 1, datatype_of<std::int32_t>());
        std::vector<int> wrong(static_cast<std::size_t>(p), 0);
        run(
            p,
            [&](comm& cm) {
              const int me = cm.rank();
              const buffer_extent ext = buffer_extents(c.args, me);
              std::vector<std::int32_t> in(ext.in), out(ext.out);
              if (me == 1) std::this_thread::sleep_for(10ms);
              for (int i = 0; i < 300; ++i) {
                if (me == 1 && i % 50 == 25) std::this_thread::sleep_for(1ms);
                for (std::size_t k = 0; k < in.size(); ++k) in[k] = value(i, me, k);
                if (coll == collective::bcast && me == p - 1)
                  for (std::size_t k = 0; k < out.size(); ++k) out[k] = value(i, me, k);
                cm.run_collective(c, in.data(), out.data());
                for (std::size_t k = 0; k < out.size(); ++k) {
                  std::int32_t want = 0;
                  switch (coll) {
                    case collective::bcast:
                      want = value(i, p - 1, k);
                      break;
                    case collective::gather:
                    case collective::allgather:
                      want = value(i, static_cast<int>(k / count), k % count);
                      break;
                    case collective::scatter:
                      want = value(i, p - 1, me * count + k);
                      break;
                    case collective::allreduce:
                    case collective::scan:
                      for (int r = 0; r <= (coll == collective::scan ? me : p - 1); ++r) want += value(i, r, k);
                      break;
                    default:
                      break;
                  }
                  wrong[me] += out[k] != want;
                }
              }
            },
            threads());
        for (int r = 0; r < p; ++r) CHECK(wrong[r] == 0);
      }
    }
  }

  TEST_CASE("a user's operator that throws in a repeated call fails the team, even where the rank catches it") {
    // A user's operator may throw, so its repeated calls keep the general way, whose failure
    // handling fails the team at once: a rank that catches the operator's error and goes on
    // finds the team failed with it, and so does every other rank.
    const op refuses = make_op<std::int32_t>(
        [](std::int32_t a, std::int32_t b) {
          if (a == -7 || b == -7) throw std::runtime_error("the operator refuses -7");
          return a + b;
        },
        true);
    for (int p : {2, 3}) {
      CAPTURE(p);
      std::vector<std::string> caught(static_cast<std::size_t>(p)), after(static_cast<std::size_t>(p));
      error_of([&] {
        run(
            p,
            [&](comm& c) {
              std::vector<std::int32_t> in(2, 1), out(2);
              try {
                for (int i = 0; i < 500; ++i) {
                  if (c.rank() == 0 && i == 300) in[0] = -7;
                  c.allreduce(in, out, refuses, {"recursive_doubling"});
                  if (out[0] != p) throw std::logic_error("wrong sum");
                }
              } catch (const std::exception& e) {
                caught[c.rank()] = e.what();
              }
              try {
                c.barrier();
              } catch (const std::exception& e) {
                after[c.rank()] = e.what();
                throw;
              }
            },
            threads());
      });
      for (int r = 0; r < p; ++r) {
        CAPTURE(r);
        CHECK(contains(caught[r], "the operator refuses -7"));
        CHECK(contains(after[r], "the operator refuses -7"));
      }
    }
  }

  TEST_CASE("a rank that throws in the middle of a run of repeated calls releases the others") {
    for (int p : {2, 3}) {
      CAPTURE(p);
      std::vector<std::string> seen(static_cast<std::size_t>(p));
      const std::string error = error_of([&] {
        run(
            p,
            [&](comm& c) {
              std::vector<std::int32_t> in(2, 1), out(2);
              try {
                for (int i = 0; i < 1000; ++i) {
                  if (c.rank() == p - 1 && i == 400) throw std::runtime_error("rank stops at call 400");
                  c.allreduce(in, out, ops::sum, {"recursive_doubling"});
                }
              } catch (const std::exception& e) {
                seen[c.rank()] = e.what();
                throw;
              }
            },
            threads());
      });
      CHECK(contains(error, "rank stops at call 400"));
      for (int r = 0; r < p - 1; ++r) {
        CAPTURE(r);
        CHECK(contains(seen[r], "rank stops at call 400"));
      }
    }
  }
}

TEST_SUITE("repeated calls: the exchange's quick receive") {
  // The repeat test compares the requested algorithm's name a word at a time
  // (detail::same_text); std::string's == is the reference.
  TEST_CASE("algorithm names of every length up to 40 are told apart at every position") {
    for (std::size_t n = 0; n <= 40; ++n) {
      CAPTURE(n);
      std::string a(n, 'x');
      for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<char>('a' + i % 26);
      CHECK(detail::same_text(a, std::string(a)));
      for (std::size_t i = 0; i < n; ++i) {
        std::string b = a;
        b[i] = '_';
        CAPTURE(i);
        CHECK(detail::same_text(a, b) == (a == b));
      }
      CHECK_FALSE(detail::same_text(a, a + "y"));
      if (n > 0) CHECK_FALSE(detail::same_text(a, a.substr(0, n - 1)));
    }
  }

  // A message that fits one line in an exchange is checked on arrival against its head
  // (collective, size, call number) and its signature in two compares: a peer that leaves a
  // run of repeated exchanges for another call of the same message size must still be
  // caught, whichever part differs.
  TEST_CASE("a run of repeated exchanges ended by a mismatched call: mismatch_error at both ranks") {
    struct ending {
      const char* what;
      std::function<void(comm&)> rank1;
    };
    const std::vector<ending> endings = {
        {"another collective of the same size",
         [](comm& c) {
           std::vector<std::int32_t> in(1, 1), out(2);
           c.allgather(in, out, {"recursive_doubling"});
         }},
        {"the same collective, a different size",
         [](comm& c) {
           std::vector<std::int32_t> in(4, 1), out(4);
           c.alltoall(in, out, {"pairwise"});
         }},
        {"the same collective and size, another element type",
         [](comm& c) {
           std::vector<float> in(2, 1.0f), out(2);
           c.alltoall(in, out, {"pairwise"});
         }},
    };
    for (const ending& end : endings) {
      CAPTURE(end.what);
      std::vector<std::string> seen(2);
      const std::string error = error_of([&] {
        run(
            2,
            [&](comm& c) {
              try {
                std::vector<std::int32_t> in(2), out(2);
                for (int i = 0; i < 200; ++i) {
                  for (std::size_t k = 0; k < 2; ++k) in[k] = value(i, c.rank(), k);
                  c.alltoall(in, out, {"pairwise"});
                  for (std::size_t k = 0; k < 2; ++k) REQUIRE(out[k] == value(i, static_cast<int>(k), c.rank()));
                }
                if (c.rank() == 0) {
                  std::vector<std::int32_t> in0(2, 1), out0(2);
                  c.alltoall(in0, out0, {"pairwise"});
                } else {
                  end.rank1(c);
                }
              } catch (const std::exception& e) {
                seen[c.rank()] = e.what();
                throw;
              }
            },
            threads());
      });
      CHECK(contains(error, "mismatch"));
      for (const std::string& s : seen) CHECK(contains(s, "mismatch"));
    }
  }
}
