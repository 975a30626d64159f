// allreduce swing_bandwidth (D. De Sensi, T. Bonato, D. Saam, T. Hoefler, "Swing:
// Short-cutting Rings for Higher Bandwidth Allreduce", NSDI 2024): the round count
// (2 log2 p; 2 log2 p' + 2 when folded), every step's peer r +- rho(s) mod p with
// rho(s) = (1 - (-2)^(s+1))/3 written out here independently of the builder, the volume
// (half of the blocks still owned per step), the cost function against the paper's formula,
// and the verifier's verdict.
// Results against the reference: test_conformance.cpp. See docs/algorithms.md, "allreduce".
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ranklab/registry.hpp"
#include "ranklab/semantics.hpp"

using namespace ranklab;

namespace {

// rho(s) = (1 - (-2)^(s+1)) / 3: 1, -1, 3, -5, 11, -21, ...
std::int64_t rho(int s) {
  std::int64_t pw = 1;
  for (int i = 0; i <= s; ++i) pw *= -2;
  return (1 - pw) / 3;
}

int expected_peer(int r, int s, int p) {
  const std::int64_t q = r % 2 == 0 ? r + rho(s) : r - rho(s);
  return static_cast<int>(((q % p) + p) % p);
}

coll_args args_of(int p, std::uint64_t count) {
  coll_args a;
  a.coll = collective::allreduce;
  a.p = p;
  a.count = count;
  return a;
}

const algorithm& algo(const char* name) {
  const algorithm* a = registry::find(collective::allreduce, name);
  REQUIRE(a != nullptr);
  return *a;
}

int log2_of(int p) {
  int l = 0;
  while ((1 << l) < p) ++l;
  return l;
}

}  // namespace

TEST_CASE("swing: rho is 1, -1, 3, -5, 11, -21") {
  CHECK(rho(0) == 1);
  CHECK(rho(1) == -1);
  CHECK(rho(2) == 3);
  CHECK(rho(3) == -5);
  CHECK(rho(4) == 11);
  CHECK(rho(5) == -21);
}

TEST_CASE("swing_bandwidth: registered as commutative, any p") {
  const algorithm& a = algo("swing_bandwidth");
  CHECK(a.needs_commutative);
  CHECK_FALSE(a.needs_power_of_two);
  CHECK(a.one_ported);
  CHECK(meets_preconditions(a, args_of(6, 10)));
  coll_args nc = args_of(8, 10);
  nc.commutative = false;
  CHECK_FALSE(meets_preconditions(a, nc));
}

TEST_CASE("swing_bandwidth: 2 log2 p rounds, peers r +- rho(s) forwards then backwards, (p-1)/p m each way") {
  const algorithm& a = algo("swing_bandwidth");
  for (int p : {1, 2, 4, 8, 16, 32, 64, 128}) {
    const std::uint64_t block = 3, n = block * static_cast<std::uint64_t>(p);
    const schedule_set ss = build_all(a, args_of(p, n));
    REQUIRE(ss.size() == static_cast<std::size_t>(p));
    const int L = log2_of(p);
    for (int r = 0; r < p; ++r) {
      INFO("p = " << p << ", rank " << r);
      const schedule& s = ss[static_cast<std::size_t>(r)];
      CHECK(s.communication_rounds() == static_cast<std::size_t>(2 * L));
      const auto rounds = s.rounds();
      REQUIRE(rounds.size() >= static_cast<std::size_t>(2 * L));
      std::uint64_t sent = 0;
      for (int i = 0; i < 2 * L; ++i) {
        const int st = i < L ? i : 2 * L - 1 - i;  // reduce-scatter 0..L-1, allgather L-1..0
        const ranklab::round& rd = rounds[static_cast<std::size_t>(i)];
        CHECK(rd.send_to == expected_peer(r, st, p));
        CHECK(rd.recv_from == expected_peer(r, st, p));
        // step s moves half of the blocks still owned: p / 2^(s+1) blocks
        CHECK(s.send_count(rd) == block * static_cast<std::uint64_t>(p >> (st + 1)));
        sent += s.send_count(rd);
      }
      CHECK(sent == 2 * block * static_cast<std::uint64_t>(p - 1));
    }
    CHECK(verify(ss, args_of(p, n)).ok);
  }
}

TEST_CASE("swing_bandwidth: other p fold to p' and run the Swing steps among the survivors") {
  const algorithm& a = algo("swing_bandwidth");
  for (int p : {3, 5, 6, 7, 12, 13, 31, 33, 100}) {
    int q = 1;
    while (2 * q <= p) q *= 2;
    const int rem = p - q, L = log2_of(q);
    const std::uint64_t n = 5 * static_cast<std::uint64_t>(q) + 3;
    const schedule_set ss = build_all(a, args_of(p, n));
    for (int r = 0; r < p; ++r) {
      INFO("p = " << p << ", rank " << r);
      const schedule& s = ss[static_cast<std::size_t>(r)];
      // the fold round, 2 log2 p' Swing rounds, the unfold round (ranks >= 2 rem: idle in both)
      CHECK(s.communication_rounds() == static_cast<std::size_t>(2 * L + (r < 2 * rem ? 2 : 1)));
      const auto rounds = s.rounds();
      REQUIRE(rounds.size() >= static_cast<std::size_t>(2 * L + 1));
      const bool folded = r < 2 * rem && r % 2 == 0;  // 2i hands its vector to 2i+1
      const int v = r < 2 * rem ? r / 2 : r - rem;
      auto real = [&](int w) { return w < rem ? 2 * w + 1 : w + rem; };
      for (int i = 0; i < 2 * L; ++i) {
        const int st = i < L ? i : 2 * L - 1 - i;
        const ranklab::round& rd = rounds[static_cast<std::size_t>(i + 1)];
        if (folded) {
          CHECK_FALSE(rd.communicates());
        } else {
          CHECK(rd.send_to == real(expected_peer(v, st, q)));
          CHECK(rd.recv_from == real(expected_peer(v, st, q)));
        }
      }
    }
    const verify_report rep = verify(ss, args_of(p, n));
    CHECK(rep.ok);
    CHECK(rep.rounds == static_cast<std::size_t>(2 * L + 2));
  }
}

TEST_CASE("swing_bandwidth: cost function against the paper's formula") {
  const cost_model m{};
  for (int p : {1, 2, 3, 4, 8, 12, 64, 1000, 1024})
    for (std::uint64_t count : {0, 1, 1000, 1000000}) {
      INFO("p = " << p << ", count = " << count);
      int q = 1;
      while (2 * q <= p) q *= 2;
      const double bytes = static_cast<double>(count) * 8;
      const double L = log2_of(q);
      const double f = static_cast<double>(q - 1) / q;
      double want = 2 * L * m.alpha + 2 * f * m.beta * bytes + f * m.gamma * bytes;  // the paper, p = q
      if (q != p) want += 2 * m.alpha + (2 * m.beta + m.gamma) * bytes;             // fold and unfold
      CHECK(algo("swing_bandwidth").cost(args_of(p, count), 8, m) == doctest::Approx(want).epsilon(1e-12));
    }
}
