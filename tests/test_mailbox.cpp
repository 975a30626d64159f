// The message path between ranks (runtime/detail/mailbox.hpp, comm::sendrecv): the
// express lane (up to 2080 bytes in one to 35 cache lines), eager (inline) and descriptor messages
// (in the express lane up to 64 KiB, in the queue above), sizes exactly at and around the eager limit and 0 bytes, the
// eager limit option and its cap, many messages queued to one peer (the mailbox fills up: the sender falls back to a
// descriptor or waits), many senders to one receiver, and multi-threaded stress with random permutations and checksums.
//
// The mailbox is private to the library, so these tests go through comm. Which path a
// message took is observable in one place: a send() half round to oneself completes when
// the message travels inline and can never complete when it travels by descriptor (the
// sender waits for a receiver that is itself) -- the deadlock detector reports that.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "ranklab/ranklab.hpp"

namespace {

using namespace ranklab;
using namespace std::chrono_literals;

team_options with_eager_limit(std::size_t limit) {
  team_options o;
  o.eager_limit = limit;
  return o;
}

// Byte i of the message (from, seq): a pattern that differs between messages and positions.
std::byte pattern(int from, std::uint64_t seq, std::size_t i) {
  std::uint64_t x = (static_cast<std::uint64_t>(from) * 0x9E3779B97F4A7C15ull) ^ (seq * 0xBF58476D1CE4E5B9ull) ^
                    (i * 0x94D049BB133111EBull);
  x ^= x >> 31;
  return static_cast<std::byte>(x & 0xff);
}

std::vector<std::byte> make_message(int from, std::uint64_t seq, std::size_t bytes) {
  std::vector<std::byte> m(bytes);
  for (std::size_t i = 0; i < bytes; ++i) m[i] = pattern(from, seq, i);
  return m;
}

bool is_message(std::span<const std::byte> got, int from, std::uint64_t seq) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != pattern(from, seq, i)) return false;
  return true;
}

// A 64-bit checksum of a byte range (FNV-1a), for the stress tests.
std::uint64_t checksum(std::uint64_t h, std::span<const std::byte> data) {
  for (std::byte b : data) {
    h ^= static_cast<std::uint64_t>(b);
    h *= 1099511628211ull;
  }
  return h ^ data.size();
}

// Sizes that straddle the message path's boundaries for eager limit `limit`: 0 bytes, the
// 64-byte chunk, the limit itself, the 4096-byte maximum.
std::vector<std::size_t> boundary_sizes(std::size_t limit) {
  std::vector<std::size_t> s = {0, 1, 40, 41, 63, 64, 65, 127, 128, 129, 4095, 4096, 4097, 8192, 65536, 1 << 20};
  for (std::size_t d : {limit, limit + 1}) s.push_back(d);
  if (limit > 0) s.push_back(limit - 1);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

// Can rank 0 of a 1-rank team send `bytes` to itself as a half round and then receive it?
// True exactly when the message travels inline; by descriptor it deadlocks (reported).
bool self_send_completes(std::size_t bytes, std::size_t eager_limit) {
  team_options o = with_eager_limit(eager_limit);
  o.deadlock_timeout = 100ms;
  bool right_size = false, right_data = false;
  try {
    run(
        1,
        [&](comm& c) {
          const auto m = make_message(0, bytes, bytes);
          c.send(0, m);
          std::vector<std::byte> in(bytes);
          right_size = c.recv(0, in) == bytes;
          right_data = is_message(in, 0, bytes);
        },
        o);
  } catch (const deadlock_error& e) {
    const std::string what = e.what();
    CHECK(what.find("rank 0 waits for rank 0 to take its message") != std::string::npos);
    return false;
  }
  CHECK(right_size);  // recv() returns the bytes received
  CHECK(right_data);
  return true;
}

// Rounds along random permutations: in round t rank r sends size[t][r] bytes to perm[t][r].
// The same permutations and sizes on every rank, drawn up front.
struct permutation_rounds {
  int p = 0;
  std::vector<std::vector<int>> perm;
  std::vector<std::vector<std::size_t>> size;

  int sender_to(int t, int r) const {
    const auto& pi = perm[t];
    return static_cast<int>(std::find(pi.begin(), pi.end(), r) - pi.begin());
  }
};

template <class DrawSize>
permutation_rounds make_permutation_rounds(int p, int rounds, std::uint64_t seed, DrawSize draw) {
  std::mt19937_64 rng(seed);
  permutation_rounds pr{p, std::vector<std::vector<int>>(rounds, std::vector<int>(p)),
                        std::vector<std::vector<std::size_t>>(rounds, std::vector<std::size_t>(p))};
  for (int t = 0; t < rounds; ++t) {
    std::iota(pr.perm[t].begin(), pr.perm[t].end(), 0);
    std::shuffle(pr.perm[t].begin(), pr.perm[t].end(), rng);
    for (auto& s : pr.size[t]) s = draw(rng);
  }
  return pr;
}

// Runs the rounds, `exchange(c, to, out, from, in)` moving one round's message and returning
// the size received, and checks every rank's sizes and the checksum of what it received
// against one computed without the runtime.
template <class Exchange>
void check_permutation_rounds(const permutation_rounds& pr, std::size_t max_size, const team_options& options,
                              Exchange exchange) {
  const int p = pr.p, rounds = static_cast<int>(pr.perm.size());
  constexpr std::uint64_t basis = 1469598103934665603ull;
  std::vector<std::uint64_t> expected(p, basis), actual(p, 0);
  for (int t = 0; t < rounds; ++t)
    for (int from = 0; from < p; ++from)
      expected[pr.perm[t][from]] = checksum(expected[pr.perm[t][from]], make_message(from, t, pr.size[t][from]));
  std::vector<int> wrong_size(p, 0);
  run(
      p,
      [&](comm& c) {
        const int r = c.rank();
        std::uint64_t h = basis;
        std::vector<std::byte> in(max_size);
        for (int t = 0; t < rounds; ++t) {
          const int from = pr.sender_to(t, r);
          const std::size_t got = exchange(c, pr.perm[t][r], make_message(r, t, pr.size[t][r]), from, in);
          wrong_size[r] += got != pr.size[t][from];
          h = checksum(h, std::span(in).first(pr.size[t][from]));
        }
        actual[r] = h;
      },
      options);
  for (int r = 0; r < p; ++r) {
    CAPTURE(r);
    CHECK(wrong_size[r] == 0);
    CHECK(actual[r] == expected[r]);
  }
}

}  // namespace

TEST_SUITE("mailbox") {
  TEST_CASE("team options: the eager limit defaults to 2048 and is capped at max_eager_limit = 4096") {
    CHECK(team_options{}.eager_limit == 2048);
    CHECK(max_eager_limit == 4096);
    CHECK(team(2, with_eager_limit(100)).options().eager_limit == 100);
    CHECK(team(2, with_eager_limit(4096)).options().eager_limit == 4096);
    CHECK(team(2, with_eager_limit(4097)).options().eager_limit == 4096);
    CHECK(team(2, with_eager_limit(1 << 30)).options().eager_limit == 4096);
    CHECK(team(2, with_eager_limit(0)).options().eager_limit == 0);
  }

  TEST_CASE("messages up to the eager limit travel inline, larger ones by descriptor (self send as a half round)") {
    // (eager limit requested, largest inline size in effect)
    const std::pair<std::size_t, std::size_t> cases[] = {{2048, 2048}, {0, 0},       {64, 64},
                                                         {100, 100},   {4096, 4096}, {100000, 4096}};
    for (auto [requested, effective] : cases) {
      CAPTURE(requested);
      CHECK(self_send_completes(effective, requested));
      CHECK_FALSE(self_send_completes(effective + 1, requested));
      if (effective > 0) CHECK(self_send_completes(effective - 1, requested));
    }
    // 0 bytes always fit.
    CHECK(self_send_completes(0, 0));
  }

  TEST_CASE("exchanges at, below and above the eager limit deliver every byte (eager limits 0, 64, 2048, 4096)") {
    for (std::size_t limit : {std::size_t{0}, std::size_t{64}, std::size_t{2048}, std::size_t{4096}}) {
      for (std::size_t bytes : boundary_sizes(limit)) {
        CAPTURE(limit);
        CAPTURE(bytes);
        std::atomic<int> good_size{0}, good_data{0};
        run(
            2,
            [&](comm& c) {
              const int other = 1 - c.rank();
              const auto out = make_message(c.rank(), bytes, bytes);
              std::vector<std::byte> in(bytes, std::byte{0});
              const std::size_t got = c.sendrecv(other, out, other, in);
              good_size += got == bytes;
              good_data += is_message(in, other, bytes);
            },
            with_eager_limit(limit));
        CHECK(good_data == 2);
        CHECK(good_size == 2);
      }
    }
  }

  TEST_CASE("one-directional half rounds at the boundary sizes, into exact and larger buffers") {
    for (std::size_t bytes : boundary_sizes(2048)) {
      CAPTURE(bytes);
      std::size_t got_exact = 0, got_larger = 0;
      bool ok_exact = false, ok_larger = false;
      run(
          2,
          [&](comm& c) {
            const auto m = make_message(0, bytes, bytes);
            if (c.rank() == 0) {
              c.send(1, m);
              c.send(1, m);
            } else {
              std::vector<std::byte> exact(bytes), larger(bytes + 100, std::byte{0x5a});
              got_exact = c.recv(0, exact);
              ok_exact = is_message(exact, 0, bytes);
              got_larger = c.recv(0, larger);
              ok_larger = is_message(std::span(larger).first(bytes), 0, bytes) &&
                          std::all_of(larger.begin() + static_cast<long>(bytes), larger.end(),
                                      [](std::byte b) { return b == std::byte{0x5a}; });  // untouched tail
            }
          },
          team_options{});
      CHECK(got_exact == bytes);
      CHECK(got_larger == bytes);
      CHECK(ok_exact);
      CHECK(ok_larger);
    }
  }

  TEST_CASE("a 16 MiB message by descriptor arrives intact") {
    const std::size_t bytes = std::size_t{16} << 20;
    bool size_ok = false, data_ok = false;
    run(
        2,
        [&](comm& c) {
          if (c.rank() == 0) {
            c.send(1, make_message(0, 1, bytes));
          } else {
            std::vector<std::byte> in(bytes);
            size_ok = c.recv(0, in) == bytes;
            data_ok = is_message(in, 0, 1);
          }
        },
        team_options{});
    CHECK(data_ok);
    CHECK(size_ok);
  }

  TEST_CASE("many messages queued to one peer: the mailbox fills, the sender falls back or waits, order is kept") {
    // 2,000 messages of mixed sizes; the receiver starts late so the mailbox (128 chunks of 64
    // bytes) runs full, and 100-byte or 2048-byte messages no longer fit inline.
    // Up to the eager limit, 0..2080 bytes take the express lane (in one to 35 lines) while it
    // has room, the rest the queue; above it, descriptors take a line of the lane while it has
    // room, the queue otherwise: the receiver must still see them in the order sent.
    const std::size_t sizes[] = {0,  8,   40,  100,  1000, 2048, 2049, 3000, 41,   64,
                                 65, 100, 101, 1024, 1060, 1061, 520,  2080, 2081, 4096};
    constexpr std::size_t kinds = std::size(sizes);
    constexpr int messages = 2000;
    for (std::size_t limit : {std::size_t{2048}, std::size_t{4096}}) {
      CAPTURE(limit);
      int in_order = 0, right_size = 0;
      run(
          2,
          [&](comm& c) {
            if (c.rank() == 0) {
              for (int i = 0; i < messages; ++i) c.send(1, make_message(0, i, sizes[i % kinds]));
            } else {
              std::this_thread::sleep_for(20ms);  // let the queue fill (correctness does not depend on it)
              std::vector<std::byte> in(4096);
              for (int i = 0; i < messages; ++i) {
                const std::size_t got = c.recv(0, in);
                right_size += got == sizes[i % kinds];
                in_order += is_message(std::span(in).first(sizes[i % kinds]), 0, i);
              }
            }
          },
          with_eager_limit(limit));
      CHECK(in_order == messages);
      CHECK(right_size == messages);
    }
  }

  TEST_CASE("a receiver that takes nothing yet leaves the sender the express lane and the queue") {
    // A small message that finds the express lane full waits for it only while the receiver
    // is taking messages; here the receiver takes none until the sender has posted all of
    // them, which fits the lane (128 lines) and the queue (128 chunks) together. Were the
    // sender held back for the lane, it would never finish: the deadline below ends the
    // test instead of hanging it.
    constexpr int messages = 250;
    std::atomic<bool> all_posted{false};
    bool receiver_saw_all_posted = false;
    int in_order = 0;
    run(
        2,
        [&](comm& c) {
          if (c.rank() == 0) {
            for (int i = 0; i < messages; ++i) c.send(1, make_message(0, i, 8));
            all_posted.store(true, std::memory_order_release);
          } else {
            const auto deadline = std::chrono::steady_clock::now() + 60s;
            while (!all_posted.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < deadline)
              std::this_thread::sleep_for(1ms);
            receiver_saw_all_posted = all_posted.load(std::memory_order_acquire);
            std::vector<std::byte> in(8);
            for (int i = 0; i < messages; ++i) {
              c.recv(0, in);
              in_order += is_message(in, 0, i);
            }
          }
        },
        team_options{});
    CHECK(receiver_saw_all_posted);
    CHECK(in_order == messages);
  }

  TEST_CASE("descriptors met before their call are set aside intact, and their senders released (2 KiB..64 KiB)") {
    // Above the eager limit, messages up to 64 KiB travel as a descriptor line in the
    // express lane, which the receiver must empty before it can read the next message: a
    // receiver waiting for the last of several broadcasts copies the earlier ones aside as
    // it passes them. The root waits for every broadcast in turn, so it finishes only if each
    // was released; the contents show every copy went to the right call.
    for (const std::size_t bytes : {std::size_t{2049}, std::size_t{4096}, std::size_t{65536}}) {
      CAPTURE(bytes);
      constexpr int calls = 6;
      int intact = 0;
      run(2, [&](comm& c) {
        std::vector<std::vector<std::byte>> bufs;
        for (int i = 0; i < calls; ++i)
          bufs.push_back(c.rank() == 0 ? make_message(0, i, bytes) : std::vector<std::byte>(bytes));
        std::vector<request> reqs;
        for (int i = 0; i < calls; ++i) reqs.push_back(c.ibcast(bufs[i], 0, {"linear"}));
        if (c.rank() == 0) {
          for (auto& r : reqs) r.wait();
        } else {
          for (int i = calls - 1; i >= 0; --i) reqs[i].wait();
          for (int i = 0; i < calls; ++i) intact += is_message(bufs[i], 0, i);
        }
      });
      CHECK(intact == calls);
    }
  }

  TEST_CASE("many zero-byte messages queued to one peer") {
    constexpr int messages = 5000;
    int received = 0;
    run(
        2,
        [&](comm& c) {
          std::vector<std::byte> none;
          if (c.rank() == 0) {
            for (int i = 0; i < messages; ++i) c.send(1, none);
          } else {
            std::this_thread::sleep_for(10ms);
            for (int i = 0; i < messages; ++i) received += c.recv(0, none) == 0;
          }
        },
        team_options{});
    CHECK(received == messages);
  }

  TEST_CASE("many senders to one receiver, interleaved per sender, for p in {2, 3, 5, 9, 17}") {
    for (int p : {2, 3, 5, 9, 17}) {
      CAPTURE(p);
      constexpr int per_sender = 200;
      std::vector<int> good(p, 0), good_size(p, 0);
      run(
          p,
          [&](comm& c) {
            const int r = c.rank();
            if (r != 0) {
              for (int i = 0; i < per_sender; ++i)
                c.send(0, make_message(r, i, static_cast<std::size_t>((i * 37 + r) % 3000)));
            } else {
              std::vector<std::byte> in(3000);
              for (int i = 0; i < per_sender; ++i)
                for (int from = 1; from < p; ++from) {
                  const std::size_t want = static_cast<std::size_t>((i * 37 + from) % 3000);
                  const std::size_t got = c.recv(from, in);
                  good_size[from] += got == want;
                  good[from] += is_message(std::span(in).first(want), from, i);
                }
            }
          },
          team_options{});
      for (int from = 1; from < p; ++from) {
        CHECK(good[from] == per_sender);
        CHECK(good_size[from] == per_sender);
      }
    }
  }

  TEST_CASE("stress: 16 ranks, 3000 rounds of random permutations with random sizes, checksums agree") {
    const std::size_t choices[] = {0, 1, 64, 2047, 2048, 2049, 4096, 4097, 10000};
    const permutation_rounds pr = make_permutation_rounds(16, 3000, 2024, [&](std::mt19937_64& rng) {
      return rng() % 2 ? choices[rng() % 9] : static_cast<std::size_t>(rng() % 6000);
    });
    check_permutation_rounds(pr, 10000, team_options{},
                             [](comm& c, int to, const std::vector<std::byte>& out, int from,
                                std::vector<std::byte>& in) { return c.sendrecv(to, out, from, in); });
  }

  TEST_CASE("stress: 16 ranks, 2000 rounds of send-then-recv half rounds along random permutations (inline sizes)") {
    // Half rounds: every rank first sends (up to 4096 bytes, eager limit 4096) and then
    // receives. Consecutive messages on one mailbox can exceed its room, so some fall back to
    // descriptors and the senders wait -- that must not deadlock.
    const permutation_rounds pr = make_permutation_rounds(16, 2000, 77, [](std::mt19937_64& rng) {
      return rng() % 3 == 0 ? std::size_t{4096} : static_cast<std::size_t>(rng() % 4097);
    });
    check_permutation_rounds(
        pr, 4096, with_eager_limit(4096),
        [](comm& c, int to, const std::vector<std::byte>& out, int from, std::vector<std::byte>& in) {
          c.send(to, out);
          return c.recv(from, in);
        });
  }

  TEST_CASE("stress: 2-rank ping-pong of 20,000 rounds alternating eager and descriptor messages") {
    constexpr int rounds = 20000;
    std::vector<int> good(2, 0), good_size(2, 0);
    run(
        2,
        [&](comm& c) {
          const int other = 1 - c.rank();
          std::vector<std::byte> in(3000);
          for (int t = 0; t < rounds; ++t) {
            const std::size_t n = t % 2 ? 8 : 3000;
            const auto out = make_message(c.rank(), t, n);
            const std::size_t got = c.sendrecv(other, out, other, in);
            good_size[c.rank()] += got == n;
            good[c.rank()] += is_message(std::span(in).first(n), other, t);
          }
        },
        team_options{});
    CHECK(good[0] == rounds);
    CHECK(good[1] == rounds);
    CHECK(good_size[0] == rounds);
    CHECK(good_size[1] == rounds);
  }

}  // TEST_SUITE
