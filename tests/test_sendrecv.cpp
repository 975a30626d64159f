// One-ported send-receive rounds on the thread executor: rings, shifts by k and random
// permutations for p in {1, 2, 3, 5, 8, 16, 64}, send/recv half rounds, sendrecv to self,
// no_rank peers, the returned size, receive buffers that are too small (size_mismatch_error
// naming both ranks, the sender released), peers out of range (usage_error), and a 64-rank
// ring of 1,000 rounds on this 2-core machine (correctness only; the benchmark times it).
// Every expectation is computed independently of the runtime from (sender, round, index).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ranklab/ranklab.hpp"

namespace {

// Every rank counted `want` right messages and right sizes; `context` says which run.
void expect_every_rank(const std::vector<int>& good, const std::vector<int>& good_size, int want,
                       const std::string& context, const std::vector<std::string>& problems = {}) {
  for (std::size_t r = 0; r < good.size(); ++r) {
    INFO(context, " rank ", r, ": ", r < problems.size() ? problems[r] : "");
    CHECK(good[r] == want);       // the data
    CHECK(good_size[r] == want);  // the returned element count
  }
}

using namespace ranklab;

team_options plain_options() {
  team_options o;  // not from_environment: the suites must not depend on the caller's shell
  return o;
}

// The value element i of the message rank `from` sends in round `round` carries.
std::uint64_t value(int from, int round, std::size_t i) {
  return (static_cast<std::uint64_t>(from) << 40) ^ (static_cast<std::uint64_t>(round) << 20) ^ (i * 2654435761u);
}

std::vector<std::uint64_t> message(int from, int round, std::size_t n) {
  std::vector<std::uint64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = value(from, round, i);
  return v;
}

// First index where `got` differs from what `from` sent in `round`, or -1.
long first_wrong(std::span<const std::uint64_t> got, int from, int round) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != value(from, round, i)) return static_cast<long>(i);
  return -1;
}

int mod(long a, int p) { return static_cast<int>(((a % p) + p) % p); }

// Runs `rounds` rounds of "send to r+k, receive from r-k" with n elements and counts the
// rounds each rank saw correctly.
void check_shift(int p, int k, std::size_t n, int rounds) {
  std::vector<int> good(p, 0), good_size(p, 0);
  std::vector<std::string> problems(p);
  run(
      p,
      [&](comm& c) {
        const int r = c.rank();
        const int to = mod(r + k, p), from = mod(r - k, p);
        std::vector<std::uint64_t> in(n);
        for (int t = 0; t < rounds; ++t) {
          const auto out = message(r, t, n);
          std::fill(in.begin(), in.end(), ~0ull);
          const std::size_t got = c.sendrecv(to, out, from, in);
          const long bad = first_wrong(in, from, t);
          good_size[r] += got == n;
          if (bad < 0) ++good[r];
          if ((got != n || bad >= 0) && problems[r].empty())
            problems[r] = "round " + std::to_string(t) + ": got " + std::to_string(got) + " elements, first wrong " +
                          std::to_string(bad);
        }
      },
      plain_options());
  expect_every_rank(good, good_size, rounds,
                    "p=" + std::to_string(p) + " k=" + std::to_string(k) + " n=" + std::to_string(n), problems);
}

}  // namespace

TEST_SUITE("sendrecv") {
  TEST_CASE("ring and shifts by k deliver the right data for p in {1,2,3,5,8,16,64}") {
    for (int p : {1, 2, 3, 5, 8, 16, 64}) {
      std::vector<int> shifts = {1, p - 1, p / 2, 2, p + 3, -1};
      std::sort(shifts.begin(), shifts.end());
      shifts.erase(std::unique(shifts.begin(), shifts.end()), shifts.end());
      const int rounds = p >= 64 ? 10 : 50;
      for (int k : shifts) {
        // 1 element (eager), 300 (2400 bytes: above the 2048-byte eager limit, by descriptor)
        for (std::size_t n : {std::size_t{1}, std::size_t{300}}) check_shift(p, k, n, rounds);
      }
      // One large message size per p, a few rounds.
      check_shift(p, 1, 20000, 3);
    }
  }

  TEST_CASE("random permutations (same seed on all ranks) with varying sizes for p in {1,2,3,5,8,16,64}") {
    for (int p : {1, 2, 3, 5, 8, 16, 64}) {
      const int rounds = p >= 64 ? 100 : 500;
      // The same sequence of permutations on every rank, computed up front.
      std::mt19937_64 rng(12345 + p);
      std::vector<std::vector<int>> perm(rounds, std::vector<int>(p));
      for (auto& pi : perm) {
        std::iota(pi.begin(), pi.end(), 0);
        std::shuffle(pi.begin(), pi.end(), rng);
      }
      // Message length of (sender, round): spans 0 bytes, eager and descriptor messages.
      auto length = [](int from, int t) -> std::size_t {
        const std::size_t sizes[] = {0, 1, 7, 255, 256, 257, 511, 513, 3000};
        return sizes[static_cast<std::size_t>(from * 31 + t * 17) % 9];
      };
      std::vector<int> good(p, 0), good_size(p, 0);
      run(
          p,
          [&](comm& c) {
            const int r = c.rank();
            std::vector<std::uint64_t> in(4000);
            for (int t = 0; t < rounds; ++t) {
              const auto& pi = perm[t];
              const int to = pi[r];
              const int from = static_cast<int>(std::find(pi.begin(), pi.end(), r) - pi.begin());
              const auto out = message(r, t, length(r, t));
              const std::size_t got = c.sendrecv(to, out, from, in);
              good_size[r] += got == length(from, t);
              good[r] += first_wrong(std::span(in).first(length(from, t)), from, t) < 0;
            }
          },
          plain_options());
      expect_every_rank(good, good_size, rounds, "p=" + std::to_string(p));
    }
  }

  TEST_CASE("send and recv half rounds: a pipeline along the ranks") {
    for (int p : {1, 2, 3, 5, 8, 16}) {
      for (std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{1000}}) {
        std::vector<int> ok(p, 0), ok_size(p, 0);
        run(
            p,
            [&](comm& c) {
              const int r = c.rank();
              for (int t = 0; t < 10; ++t) {
                std::vector<std::uint64_t> data = message(0, t, n);
                if (r > 0) {
                  std::vector<std::uint64_t> got(n, 0);
                  const std::size_t m = c.recv(r - 1, got);
                  ok_size[r] += m == n;
                  ok[r] += got == data;
                } else {
                  ++ok[r];
                  ++ok_size[r];
                }
                if (r + 1 < p) c.send(r + 1, data);
              }
            },
            plain_options());
        expect_every_rank(ok, ok_size, 10, "p=" + std::to_string(p) + " n=" + std::to_string(n));
      }
    }
  }

  TEST_CASE("sendrecv to self, eager and by descriptor") {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{256}, std::size_t{257}, std::size_t{100000}}) {
      for (int p : {1, 3}) {
        std::vector<int> ok(p, 0), ok_size(p, 0);
        run(
            p,
            [&](comm& c) {
              const auto out = message(c.rank(), 7, n);
              std::vector<std::uint64_t> in(n + 3, 0);
              const std::size_t got = c.sendrecv(c.rank(), out, c.rank(), in);
              ok_size[c.rank()] = got == n;
              ok[c.rank()] = first_wrong(std::span(in).first(n), c.rank(), 7) < 0;
            },
            plain_options());
        expect_every_rank(ok, ok_size, 1, "n=" + std::to_string(n) + " p=" + std::to_string(p));
      }
    }
  }

  TEST_CASE("eager send to self then recv from self as two half rounds") {
    std::vector<std::uint64_t> got(10, 0);
    std::size_t n = 0;
    run(
        1,
        [&](comm& c) {
          c.send(0, message(0, 1, 10));
          n = c.recv(0, got);
        },
        plain_options());
    CHECK(n == 10);
    CHECK(got == message(0, 1, 10));
  }

  TEST_CASE("no_rank peers: both missing is a no-op returning 0, one missing is a half round") {
    std::vector<std::size_t> results(4, 99);
    std::vector<std::uint64_t> received(4, 0);
    run(
        4,
        [&](comm& c) {
          const int r = c.rank();
          std::uint64_t x = 42 + r, y = 0;
          results[r] = c.sendrecv(no_rank, std::span(&x, 1), no_rank, std::span(&y, 1));
          // Even ranks only send to r+1, odd ranks only receive from r-1.
          if (r % 2 == 0) {
            CHECK(c.sendrecv(r + 1, std::span(&x, 1), no_rank, std::span(&y, 0)) == 0);
          } else {
            CHECK(c.sendrecv(no_rank, std::span(&x, 0), r - 1, std::span(&y, 1)) == 1);
            received[r] = y;
          }
        },
        plain_options());
    for (int r = 0; r < 4; ++r) CHECK(results[r] == 0);
    CHECK(received[1] == 42);
    CHECK(received[3] == 44);
  }

  TEST_CASE("the returned size is what was sent, in elements (typed) and bytes (sendrecv_bytes)") {
    // Rank 0 sends messages of several lengths into a larger buffer at rank 1.
    const std::vector<std::size_t> lengths = {0, 1, 3, 255, 256, 257, 2000, 9000};
    std::vector<std::size_t> got_elems, got_bytes;
    bool contents_ok = true;
    run(
        2,
        [&](comm& c) {
          for (std::size_t i = 0; i < lengths.size(); ++i) {
            const auto out = message(0, static_cast<int>(i), lengths[i]);
            if (c.rank() == 0) {
              c.send(1, out);
              c.sendrecv_bytes(1, std::as_bytes(std::span(out)), no_rank, {});
            } else {
              std::vector<std::uint64_t> in(10000, 0);
              got_elems.push_back(c.recv(0, in));
              contents_ok &= first_wrong(std::span(in).first(lengths[i]), 0, static_cast<int>(i)) < 0;
              got_bytes.push_back(c.sendrecv_bytes(no_rank, {}, 0, std::as_writable_bytes(std::span(in))));
            }
          }
        },
        plain_options());
    REQUIRE(got_elems.size() == lengths.size());
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      CHECK(got_elems[i] == lengths[i]);
      CHECK(got_bytes[i] == lengths[i] * sizeof(std::uint64_t));
    }
    CHECK(contents_ok);
  }

  TEST_CASE("sendrecv with different element types on both sides counts received elements of the receive type") {
    std::size_t got = 0;
    std::vector<std::uint16_t> in(20, 0);
    run(
        2,
        [&](comm& c) {
          if (c.rank() == 0) {
            const std::vector<std::uint64_t> out = {0x0004000300020001ull, 0x0008000700060005ull};
            c.send(1, out);
          } else {
            got = c.recv(0, in);
          }
        },
        plain_options());
    CHECK(got == 8);
    for (int i = 0; i < 8; ++i) CHECK(in[i] == i + 1);
  }

  TEST_CASE("a receive buffer that is too small raises size_mismatch_error naming both ranks, the sender is released") {
    // Eager (80 bytes) and descriptor (80,000 bytes) messages into a 16-byte buffer.
    for (std::size_t n : {std::size_t{10}, std::size_t{10000}}) {
      CAPTURE(n);
      std::atomic<int> sender_done{0};      // the sender's send returned normally
      std::atomic<int> sender_released{0};  // or it was released with remote_failure from rank 1
      std::string what;
      int thrown_sender = -2, thrown_rank = -2;
      try {
        run(
            2,
            [&](comm& c) {
              if (c.rank() == 0) {
                try {
                  c.send(1, message(0, 0, n));
                  sender_done = 1;
                } catch (const remote_failure& e) {
                  if (e.origin_rank() == 1) sender_released = 1;
                  throw;
                }
              } else {
                std::vector<std::uint64_t> small(2);
                c.recv(0, small);
              }
            },
            plain_options());
        FAIL("run returned without an error");
      } catch (const size_mismatch_error& e) {
        what = e.what();
        thrown_sender = e.sender();
        thrown_rank = e.rank();
      }
      CHECK(thrown_sender == 0);
      CHECK(thrown_rank == 1);
      CHECK(what.find("rank 0") != std::string::npos);
      CHECK(what.find("rank 1") != std::string::npos);
      CHECK(what.find(std::to_string(n * 8)) != std::string::npos);  // the message size
      CHECK(what.find("16") != std::string::npos);                   // the capacity
      CHECK(sender_done + sender_released == 1);
    }
  }

  TEST_CASE("a sendrecv exchange with a too-small buffer on one side fails cleanly on both") {
    // Rank 1's buffer is too small for rank 0's 5,000-element message; rank 1 also sends a
    // large message to rank 0 (both by descriptor), so rank 1 must still release rank 0 and
    // withdraw its own message before unwinding.
    std::vector<std::string> seen(2);
    CHECK_THROWS_AS(run(
                        2,
                        [&](comm& c) {
                          const int other = 1 - c.rank();
                          const auto out = message(c.rank(), 0, 5000);
                          std::vector<std::uint64_t> in(c.rank() == 1 ? 100 : 5000);
                          try {
                            c.sendrecv(other, out, other, in);
                            seen[c.rank()] = "completed";
                          } catch (const size_mismatch_error&) {
                            seen[c.rank()] = "size_mismatch_error";
                            throw;
                          } catch (const remote_failure& e) {
                            seen[c.rank()] = "remote_failure from " + std::to_string(e.origin_rank());
                            throw;
                          }
                        },
                        plain_options()),
                    size_mismatch_error);
    CHECK(seen[1] == "size_mismatch_error");
    CHECK((seen[0] == "completed" || seen[0] == "remote_failure from 1"));
  }

  TEST_CASE("peers out of range raise usage_error before anything is sent") {
    for (int bad : {-2, 4, 100}) {
      CAPTURE(bad);
      std::vector<std::string> dest_what(4), source_what(4);
      run(
          4,
          [&](comm& c) {
            std::uint64_t x = 1, y = 0;
            try {
              c.sendrecv(bad, std::span(&x, 1), no_rank, std::span(&y, 1));
            } catch (const usage_error& e) {
              dest_what[c.rank()] = e.what();
            }
            try {
              c.sendrecv(no_rank, std::span(&x, 1), bad, std::span(&y, 1));
            } catch (const usage_error& e) {
              source_what[c.rank()] = e.what();
            }
            // The team is still usable afterwards: nothing was sent.
            const int p = c.size();
            c.sendrecv((c.rank() + 1) % p, std::span(&x, 1), (c.rank() + p - 1) % p, std::span(&y, 1));
            CHECK(y == 1);
          },
          plain_options());
      for (int r = 0; r < 4; ++r) {
        CHECK(dest_what[r].find(std::to_string(bad)) != std::string::npos);
        CHECK(dest_what[r].find("destination") != std::string::npos);
        CHECK(source_what[r].find(std::to_string(bad)) != std::string::npos);
        CHECK(source_what[r].find("source") != std::string::npos);
      }
    }
  }

  TEST_CASE("oversubscription: 64 ranks pass tokens around a ring for 1000 rounds") {
    constexpr int p = 64, rounds = 1000;
    std::vector<std::uint64_t> final_token(p);
    run(
        p,
        [&](comm& c) {
          const int r = c.rank();
          std::uint64_t token = static_cast<std::uint64_t>(r) * 1000000, got = 0;
          for (int t = 0; t < rounds; ++t) {
            c.sendrecv((r + 1) % p, std::span(&token, 1), (r + p - 1) % p, std::span(&got, 1));
            token = got + 1;
          }
          final_token[r] = token;
        },
        plain_options());
    for (int r = 0; r < p; ++r) {
      // After t rounds rank r holds the token that started at rank r - t, incremented t times.
      const std::uint64_t origin = static_cast<std::uint64_t>(mod(r - rounds, p));
      CHECK(final_token[r] == origin * 1000000 + rounds);
    }
  }

  TEST_CASE("oversubscription: 64 ranks, ring of large (descriptor) messages") {
    constexpr int p = 64, rounds = 30;
    constexpr std::size_t n = 1000;  // 8000 bytes
    std::vector<int> good(p, 0);
    run(
        p,
        [&](comm& c) {
          const int r = c.rank();
          std::vector<std::uint64_t> in(n);
          for (int t = 0; t < rounds; ++t) {
            const auto out = message(r, t, n);
            c.sendrecv((r + 1) % p, out, (r + p - 1) % p, in);
            good[r] += first_wrong(in, (r + p - 1) % p, t) < 0;
          }
        },
        plain_options());
    for (int r = 0; r < p; ++r) CHECK(good[r] == rounds);
  }

}  // TEST_SUITE
