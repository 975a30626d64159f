// Recursive exchange with radix k (MPICH's recexch: MPIR_Allgather_intra_recexch,
// MPIR_Allreduce_intra_recexch, MPIR_Reduce_scatter_intra_recexch): round counts one-ported
// ((k-1) log_k p' + 2f) and with k-1 ports (log_k p' (+2)) for k = 2, 3, 4, 8 and p = 1..64,
// the fold written out from MPICH's rules (sets of k, the incomplete one sent to rank T),
// every exchange round's peers against the base-k digit formula, radix 2 against recursive
// doubling / halving, the cost functions against the schedules' rounds, results against
// the sequential reference and the verifier for awkward p.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <string>
#include <vector>

#include "ranklab/call.hpp"
#include "ranklab/check.hpp"
#include "ranklab/executor.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/semantics.hpp"

using namespace ranklab;

namespace {

const algorithm& find_algo(collective c, const char* name) {
  const algorithm* a = registry::find(c, name);
  REQUIRE(a != nullptr);
  return *a;
}

coll_args args_of(collective c, int p, std::uint64_t count, int radix) {
  coll_args a;
  a.coll = c;
  a.p = p;
  a.count = count;
  a.params.radix = radix;
  if (c == collective::reduce_scatter || c == collective::allgatherv) {
    for (int j = 0; j < p; ++j) a.counts.push_back(count + static_cast<std::uint64_t>(j % 3));
  }
  return a;
}

// MPICH's rules, written out here: the radix lowered to p, p' = largest power of k <= p.
struct expected_plan {
  int k, q = 1, L = 0, rem, T, f = 0;
  std::vector<int> sendto;  // the rank a folded-away rank sends to, -1 for a participant
  expected_plan(int p, int radix) : k(p < radix ? std::max(p, 2) : radix) {
    if (p < radix && p <= 2) k = 2;
    while (q * k <= p) {
      q *= k;
      ++L;
    }
    rem = p - q;
    T = rem * k / (k - 1);
    std::vector<int> senders(static_cast<std::size_t>(p), 0);
    for (int r = 0; r < p; ++r) {
      int to = -1;
      if (r < T && r % k != k - 1) {
        to = r + (k - 1 - r % k);
        if (to > T - 1) to = T;
      }
      sendto.push_back(to);
      if (to >= 0) f = std::max(f, ++senders[static_cast<std::size_t>(to)]);
    }
  }
  int one_ported() const { return (k - 1) * L + 2 * f; }
  int multi_ported() const { return L + (rem > 0 ? 2 : 0); }
  // Participants in order are the ranks that send nowhere; v-th of them.
  int real(int v) const {
    for (int r = 0, n = 0; r < static_cast<int>(sendto.size()); ++r)
      if (sendto[static_cast<std::size_t>(r)] < 0 && n++ == v) return r;
    return -1;
  }
};

const collective colls[] = {collective::allgather, collective::allreduce, collective::reduce_scatter_block};

}  // namespace

TEST_CASE("recexch: registered for allgather(v), allreduce, reduce_scatter(_block), rank-ordered, any p") {
  for (collective c : {collective::allgather, collective::allgatherv, collective::allreduce,
                       collective::reduce_scatter, collective::reduce_scatter_block}) {
    const algorithm& a = find_algo(c, "recexch");
    CHECK_FALSE(a.needs_commutative);
    CHECK_FALSE(a.needs_power_of_two);
    CHECK(a.one_ported);
  }
}

TEST_CASE("recexch: the fold takes min(k-1, T) rounds, (k-1) log_k p' + 2f rounds one-ported, log_k p' (+2) with k-1 ports") {
  // Independent spot values: p = 15, k = 4: p' = 4, rem = 11, T = 14, sets {0..3}, {4..7},
  // {8..11}, ranks 12, 13 -> 14: 3 fold rounds, 3 + 6 rounds one-ported, 1 + 2 multi-ported.
  const expected_plan e(15, 4);
  CHECK(e.q == 4);
  CHECK(e.T == 14);
  CHECK(e.f == 3);
  CHECK(e.sendto[12] == 14);
  CHECK(e.sendto[13] == 14);
  CHECK(e.one_ported() == 9);
  CHECK(e.multi_ported() == 3);
  for (int k : {2, 3, 4, 8})
    for (int p = 1; p <= 64; ++p) {
      const expected_plan x(p, k);
      CHECK(x.f == (x.rem == 0 ? 0 : std::min(x.k - 1, x.T)));
      for (collective c : colls) {
        INFO("k = " << k << ", p = " << p << ", " << name(c));
        const coll_args a = args_of(c, p, 5, k);
        const verify_report rep = verify(build_all(find_algo(c, "recexch"), a), a);
        CHECK(rep.ok);
        CHECK(rep.rounds == static_cast<std::size_t>(x.one_ported()));
      }
    }
}

TEST_CASE("recexch: radix 2 has the rounds of recursive doubling (allgather, allreduce) and halving (reduce_scatter)") {
  for (int p = 1; p <= 64; ++p) {
    INFO("p = " << p);
    for (auto [c, other] : {std::pair{collective::allgather, "recursive_doubling"},
                            std::pair{collective::allreduce, "recursive_doubling"},
                            std::pair{collective::reduce_scatter_block, "recursive_halving"}}) {
      const coll_args a = args_of(c, p, 4, 2);
      const verify_report mine = verify(build_all(find_algo(c, "recexch"), a), a);
      const verify_report theirs = verify(build_all(find_algo(c, other), a), a);
      CHECK(mine.rounds == theirs.rounds);
      CHECK(mine.messages == theirs.messages);
    }
    // allgather radix 2: the very schedule of recursive_doubling, round for round.
    const coll_args a = args_of(collective::allgather, p, 3, 2);
    const schedule_set mine = build_all(find_algo(collective::allgather, "recexch"), a);
    const schedule_set theirs = build_all(find_algo(collective::allgather, "recursive_doubling"), a);
    for (int r = 0; r < p; ++r) CHECK(mine[static_cast<std::size_t>(r)].describe() == theirs[static_cast<std::size_t>(r)].describe());
  }
}

TEST_CASE("recexch: phase i, round j: digit i of the participant's base-k rank moved by +j (send) and -j (receive)") {
  for (int k : {2, 3, 4, 8})
    for (int p : {k, k * k, k * k + 1, 2 * k * k - 1, 27, 64, 63, 65, 100}) {
      const expected_plan x(p, k);
      const int kk = x.k;
      const coll_args a = args_of(collective::allreduce, p, 3, k);
      const schedule_set ss = build_all(find_algo(collective::allreduce, "recexch"), a);
      for (int r = 0; r < p; ++r) {
        INFO("k = " << k << ", p = " << p << ", rank " << r);
        const auto rounds = ss[static_cast<std::size_t>(r)].rounds();
        const bool participant = x.sendto[static_cast<std::size_t>(r)] < 0;
        int v = -1;
        for (int u = 0; u < x.q; ++u)
          if (x.real(u) == r) v = u;
        CHECK(participant == (v >= 0));
        std::vector<int> digit(static_cast<std::size_t>(x.L));
        for (int i = 0, t = v; i < x.L; ++i, t /= kk) digit[static_cast<std::size_t>(i)] = t % kk;
        auto value = [&](const std::vector<int>& dg) {
          int n = 0;
          for (int i = x.L - 1; i >= 0; --i) n = n * kk + dg[static_cast<std::size_t>(i)];
          return n;
        };
        for (int i = 0; i < x.L; ++i)
          for (int j = 1; j < kk; ++j) {
            const std::size_t at = static_cast<std::size_t>(x.f + i * (kk - 1) + j - 1);
            REQUIRE(at < rounds.size());
            const ranklab::round& rd = rounds[at];
            if (!participant) {
              CHECK_FALSE(rd.communicates());
              continue;
            }
            std::vector<int> to = digit, from = digit;
            to[static_cast<std::size_t>(i)] = (digit[static_cast<std::size_t>(i)] + j) % kk;
            from[static_cast<std::size_t>(i)] = (digit[static_cast<std::size_t>(i)] - j + kk) % kk;
            CHECK(rd.send_to == x.real(value(to)));
            CHECK(rd.recv_from == x.real(value(from)));
          }
      }
    }
}

TEST_CASE("recexch: allgather phase i sends k^i participants' blocks, the data grows by k per phase") {
  for (int k : {3, 4}) {
    const int p = k * k * k;
    const coll_args a = args_of(collective::allgather, p, 2, k);
    const schedule_set ss = build_all(find_algo(collective::allgather, "recexch"), a);
    for (int r = 0; r < p; ++r) {
      const schedule& s = ss[static_cast<std::size_t>(r)];
      for (int i = 0, pw = 1; i < 3; ++i, pw *= k)
        for (int j = 1; j < k; ++j)
          CHECK(s.send_count(s.rounds()[static_cast<std::size_t>(i * (k - 1) + j - 1)]) == 2u * static_cast<unsigned>(pw));
    }
  }
}

TEST_CASE("recexch: reduce_scatter phase i sends p'/k^(i+1) blocks, the data shrinks by k per phase") {
  for (int k : {3, 4}) {
    const int p = k * k * k;
    const coll_args a = args_of(collective::reduce_scatter_block, p, 2, k);
    const schedule_set ss = build_all(find_algo(collective::reduce_scatter_block, "recexch"), a);
    for (int r = 0; r < p; ++r) {
      const schedule& s = ss[static_cast<std::size_t>(r)];
      for (int i = 0, pw = k; i < 3; ++i, pw *= k)
        for (int j = 1; j < k; ++j)
          CHECK(s.send_count(s.rounds()[static_cast<std::size_t>(i * (k - 1) + j - 1)]) ==
                2u * static_cast<unsigned>(p / pw));
    }
  }
}

TEST_CASE("recexch: cost with alpha = 1, beta = gamma = 0 is the schedule's round count") {
  const cost_model m{1.0, 0.0, 0.0};
  for (int k : {0, 2, 3, 4, 8})
    for (int p : {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 27, 31, 33, 63, 64})
      for (collective c : {collective::allgather, collective::allgatherv, collective::allreduce,
                           collective::reduce_scatter, collective::reduce_scatter_block}) {
        INFO("k = " << k << ", p = " << p << ", " << name(c));
        const algorithm& al = find_algo(c, "recexch");
        const coll_args a = args_of(c, p, 6, k);
        const verify_report rep = verify(build_all(al, a), a);
        CHECK(rep.ok);
        CHECK(al.cost(a, 8, m) == doctest::Approx(static_cast<double>(rep.rounds)));
      }
  // radix 2: the costs of recursive doubling / halving.
  const cost_model d{};
  for (int p : {1, 2, 3, 6, 8, 13, 64}) {
    CHECK(find_algo(collective::allgather, "recexch").cost(args_of(collective::allgather, p, 100, 2), 8, d) ==
          doctest::Approx(find_algo(collective::allgather, "recursive_doubling").cost(args_of(collective::allgather, p, 100, 2), 8, d)));
    CHECK(find_algo(collective::allreduce, "recexch").cost(args_of(collective::allreduce, p, 100, 2), 8, d) ==
          doctest::Approx(find_algo(collective::allreduce, "recursive_doubling").cost(args_of(collective::allreduce, p, 100, 2), 8, d)));
  }
}

TEST_CASE("recexch: results against the sequential reference, awkward p, radix 2, 3, 4, 8, non-commutative") {
  for (int k : {0, 2, 3, 4, 8})
    for (int p : {1, 2, 3, 5, 7, 9, 13, 15, 17, 31, 33, 64}) {
      for (collective c : colls) {
        INFO("k = " << k << ", p = " << p << ", " << name(c));
        algo_params prm;
        prm.radix = k;
        const call cl = make_call(c, p, 7, 0, datatype_of<std::int32_t>(), ops::sum, {"recexch", prm});
        const check_result res = run_check(cl, executor_kind::sequential);
        CHECK(res.verified);
        CHECK(res.difference == "");
      }
      // non-commutative: 2x2 matrix products in rank order
      INFO("k = " << k << ", p = " << p << ", matrix product");
      algo_params prm;
      prm.radix = k;
      for (collective c : {collective::allreduce, collective::reduce_scatter_block}) {
        const call cl = make_call(c, p, 3, 0, datatype_of<matrix2x2>(), matrix2x2_product(), {"recexch", prm});
        const check_result res = run_check(cl, executor_kind::sequential);
        CHECK(res.verified);
        CHECK(res.difference == "");
      }
    }
}

TEST_CASE("recexch: a radix below 2 is refused") {
  const coll_args a = args_of(collective::allreduce, 4, 3, 1);
  CHECK_THROWS_AS(build_all(find_algo(collective::allreduce, "recexch"), a), usage_error);
}

TEST_CASE("recexch: radix 2, 5, 8, non-commutative, in place (allreduce), uneven counts: the verifier") {
  for (int k : {2, 5, 8})
    for (int p = 1; p <= 40; ++p)
      for (collective c : colls)
        for (bool in_place : {false, true}) {
          if (in_place && c != collective::allreduce) continue;
          INFO("k = " << k << ", p = " << p << ", " << name(c) << (in_place ? ", in place" : ""));
          coll_args a = args_of(c, p, 3, k);
          a.commutative = false;
          a.in_place = in_place;
          const verify_report rep = verify(build_all(find_algo(c, "recexch"), a), a);
          CHECK(rep.ok);
        }
}

TEST_CASE("recursive_multiplying: round-robin fold, peers at distance k^i, p = k^L is recexch's schedule") {
  const algorithm& rm = find_algo(collective::allreduce, "recursive_multiplying");
  CHECK(rm.needs_commutative);
  for (int k : {2, 3, 4, 8})
    for (int p = 1; p <= 64; ++p) {
      INFO("k = " << k << ", p = " << p);
      int q = 1, L = 0;
      while (q * k <= p) {
        q *= k;
        ++L;
      }
      const int f = (p - 1) / q;  // senders of rank 0: q, 2q, ... < p
      const coll_args a = args_of(collective::allreduce, p, 4, k);
      const schedule_set ss = build_all(rm, a);
      const verify_report rep = verify(ss, a);
      CHECK(rep.ok);
      CHECK(rep.rounds == static_cast<std::size_t>((k - 1) * L + 2 * f));
      CHECK(rm.cost(a, 8, cost_model{1.0, 0.0, 0.0}) == doctest::Approx(static_cast<double>(rep.rounds)));
      for (int r = 0; r < p; ++r) {
        const auto rounds = ss[static_cast<std::size_t>(r)].rounds();
        if (r >= q) {  // sends in fold round r/q - 1 to r mod q
          CHECK(rounds[static_cast<std::size_t>(r / q - 1)].send_to == r % q);
          continue;
        }
        for (int i = 0, dist = 1; i < L; ++i, dist *= k)
          for (int j = 1; j < k; ++j) {
            const ranklab::round& rd = rounds[static_cast<std::size_t>(f + i * (k - 1) + j - 1)];
            const int base = r - r % (dist * k) + r % dist, d = r / dist % k;
            CHECK(rd.send_to == base + (d + j) % k * dist);
            CHECK(rd.recv_from == base + (d + k - j) % k * dist);
          }
      }
      if (q == p) {
        const schedule_set rx = build_all(find_algo(collective::allreduce, "recexch"), a);
        for (int r = 0; r < p; ++r)
          CHECK(ss[static_cast<std::size_t>(r)].describe() == rx[static_cast<std::size_t>(r)].describe());
      }
      for (bool in_place : {false, true}) {
        coll_args b = a;
        b.in_place = in_place;
        CHECK(verify(build_all(rm, b), b).ok);
      }
    }
  for (int k : {0, 2, 3, 4})
    for (int p : {1, 2, 3, 5, 7, 9, 13, 17, 31, 33, 64}) {
      INFO("k = " << k << ", p = " << p);
      algo_params prm;
      prm.radix = k;
      const check_result res =
          run_check(make_call(collective::allreduce, p, 7, 0, datatype_of<std::int32_t>(), ops::sum,
                              {"recursive_multiplying", prm}),
                    executor_kind::sequential);
      CHECK(res.verified);
      CHECK(res.difference == "");
    }
}

TEST_CASE("recexch: radix 2 allreduce is, schedule for schedule, recursive_doubling") {
  for (int p = 1; p <= 64; ++p) {
    INFO("p = " << p);
    for (bool in_place : {false, true}) {
      coll_args a = args_of(collective::allreduce, p, 3, 2);
      a.in_place = in_place;
      const schedule_set m = build_all(find_algo(collective::allreduce, "recexch"), a);
      const schedule_set t = build_all(find_algo(collective::allreduce, "recursive_doubling"), a);
      for (int r = 0; r < p; ++r) CHECK(m[static_cast<std::size_t>(r)].describe() == t[static_cast<std::size_t>(r)].describe());
    }
  }
}

TEST_CASE("recexch, recursive_multiplying: allreduce results bit-identical on every rank (doubles, inexact sums)") {
  for (const char* nm : {"recexch", "recursive_multiplying"})
    for (int k : {3, 4, 5, 8})
      for (int p : {3, 5, 7, 9, 13, 17, 27, 31, 33, 64}) {
        INFO(nm << ", k = " << k << ", p = " << p);
        const std::uint64_t n = 5;
        coll_args a = args_of(collective::allreduce, p, n, k);
        a.elem_size = sizeof(double);
        const schedule_set ss = build_all(find_algo(collective::allreduce, nm), a);
        std::vector<std::vector<double>> in(static_cast<std::size_t>(p)), out(static_cast<std::size_t>(p));
        std::vector<rank_buffers> bufs;
        for (int r = 0; r < p; ++r) {
          auto& v = in[static_cast<std::size_t>(r)];
          for (std::uint64_t i = 0; i < n; ++i) v.push_back(1.0 / (3.0 + r) + 1e-9 * static_cast<double>(i * 7 + r));
          out[static_cast<std::size_t>(r)].assign(n, 0.0);
          bufs.push_back({v.data(), out[static_cast<std::size_t>(r)].data()});
        }
        execute_sequential(ss, bufs, datatype_of<double>(), ops::sum);
        for (int r = 1; r < p; ++r)
          CHECK(std::memcmp(out[0].data(), out[static_cast<std::size_t>(r)].data(), n * sizeof(double)) == 0);
        for (std::uint64_t i = 0; i < n; ++i) {
          double want = 0;
          for (int r = 0; r < p; ++r) want += in[static_cast<std::size_t>(r)][i];
          CHECK(out[0][i] == doctest::Approx(want).epsilon(1e-12));
        }
      }
}
