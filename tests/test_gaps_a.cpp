// Algorithms that Open MPI, MPICH and SimGrid SMPI ship and ranklab lacked (helper tag
// "gaps_a"): barrier linear, k_dissemination and recexch; reduce_scatter(_block)
// recursive_doubling and reduce_scatterv; allgather(v) gather_bcast. Round counts against
// the sources' formulas (one-ported, and the k-ported structure of the radix-k barriers),
// radix 2 against dissemination / recursive_doubling, peers against formulas written out
// here, costs against the schedules, results against the sequential reference (run_check)
// and the verifier's sweep for p = 1..64 (count 0, irregular counts, displacements with
// gaps, non-commutative operators). None of these collectives has an in-place form in
// ranklab (coll_args::in_place is allreduce, scan and exscan only), so there is no in-place
// case to test.
// See docs/algorithms.md, "barrier", "reduce_scatter", "allgather".
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "collective_checks.hpp"
#include "ranklab/semantics.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

const algorithm& find_algo(collective c, const char* n) {
  const algorithm* a = registry::find(c, n);
  REQUIRE_MESSAGE(a != nullptr, name(c), "/", n);
  return *a;
}

coll_args barrier_args(int p, int radix = 0) {
  coll_args a;
  a.coll = collective::barrier;
  a.p = p;
  a.params.radix = radix;
  return a;
}

// Equal blocks of `count` (reduce_scatter_block, allgather) or irregular ones with zeros
// (reduce_scatter, allgatherv: 3, 0, 2, 4, 1, ...).
coll_args block_args(collective c, int p, std::uint64_t count, bool commutative = true) {
  coll_args a;
  a.coll = c;
  a.p = p;
  a.count = count;
  a.commutative = commutative;
  if (c == collective::reduce_scatter || c == collective::allgatherv)
    for (int j = 0; j < p; ++j) a.counts.push_back(static_cast<std::uint64_t>((j * 7 + 3) % 5));
  return a;
}

std::string dump(const schedule& s) { return s.describe(); }

// Ranks a rank has heard from, transitively, by the end of its schedule (a message of round
// i carries what its sender knew at the start of round i); returns the pairs missing.
int unheard_pairs(const schedule_set& set) {
  const int p = static_cast<int>(set.size());
  std::vector<std::vector<char>> heard(p, std::vector<char>(p, 0));
  for (int r = 0; r < p; ++r) heard[r][r] = 1;
  std::size_t rounds = 0;
  for (const schedule& s : set) rounds = std::max(rounds, s.rounds().size());
  for (std::size_t i = 0; i < rounds; ++i) {
    auto next = heard;
    for (int r = 0; r < p; ++r) {
      if (i >= set[r].rounds().size()) continue;
      const int from = set[r].rounds()[i].recv_from;
      if (from == no_rank) continue;
      for (int j = 0; j < p; ++j) next[r][j] = next[r][j] || heard[from][j];
    }
    heard = std::move(next);
  }
  int missing = 0;
  for (int r = 0; r < p; ++r)
    for (int j = 0; j < p; ++j) missing += heard[r][j] ? 0 : 1;
  return missing;
}

const cost_model alpha_only{1.0, 0.0, 0.0};
const int radices[] = {2, 3, 4, 5, 8};

}  // namespace

// ---- registry ---------------------------------------------------------------------------------

TEST_CASE("gaps_a: registered where they belong, with honest preconditions") {
  for (const char* n : {"linear", "k_dissemination", "recexch"}) {
    const algorithm& a = find_algo(collective::barrier, n);
    CHECK(a.one_ported);
    CHECK_FALSE(a.needs_power_of_two);
  }
  for (collective c : {collective::reduce_scatter, collective::reduce_scatter_block})
    for (const char* n : {"recursive_doubling", "reduce_scatterv"}) {
      INFO(name(c), "/", n);
      const algorithm& a = find_algo(c, n);
      CHECK_FALSE(a.needs_commutative);  // rank-ordered: checked with matrix products below
      CHECK_FALSE(a.needs_power_of_two);
      CHECK_FALSE(a.fixed_order);  // tree associations, not the left fold
      CHECK(a.one_ported);
    }
  CHECK_FALSE(find_algo(collective::reduce_scatter, "reduce_scatterv").composition.empty());
  for (collective c : {collective::allgather, collective::allgatherv}) {
    const algorithm& a = find_algo(c, "gather_bcast");
    CHECK_FALSE(a.composition.empty());
    CHECK_FALSE(a.needs_power_of_two);
  }
}

// ---- barrier linear ---------------------------------------------------------------------------

TEST_CASE("barrier linear: 2(p-1) rounds, rank j reports in round j-1 and is released in round p+j-2") {
  const algorithm& a = find_algo(collective::barrier, "linear");
  for (int p = 1; p <= 64; ++p) {
    INFO("p = " << p);
    const coll_args args = barrier_args(p);
    const schedule_set ss = build_all(a, args);
    const verify_report rep = verify(ss, args);
    CHECK(rep.ok);
    CHECK(rep.rounds == static_cast<std::size_t>(2 * (p - 1)));
    CHECK(rep.messages == static_cast<std::uint64_t>(2 * (p - 1)));
    CHECK(a.cost(args, 8, alpha_only) == doctest::Approx(2.0 * (p - 1)));
    CHECK(unheard_pairs(ss) == 0);
    const auto r0 = ss[0].rounds();
    for (int j = 1; j < p; ++j) {
      CHECK(r0[static_cast<std::size_t>(j - 1)].recv_from == j);
      CHECK(r0[static_cast<std::size_t>(j - 1)].send_to == no_rank);
      CHECK(r0[static_cast<std::size_t>(p + j - 2)].send_to == j);
      CHECK(r0[static_cast<std::size_t>(p + j - 2)].recv_from == no_rank);
      const auto rj = ss[static_cast<std::size_t>(j)].rounds();
      REQUIRE(rj.size() == static_cast<std::size_t>(p + j - 1));  // leaves once released
      for (std::size_t i = 0; i < rj.size(); ++i) {
        const bool reports = i == static_cast<std::size_t>(j - 1), released = i + 1 == rj.size();
        CHECK(rj[i].send_to == (reports ? 0 : no_rank));
        CHECK(rj[i].recv_from == (released ? 0 : no_rank));
      }
    }
  }
}

// ---- barrier k_dissemination ------------------------------------------------------------------

namespace {
// Phases: distances d = 1, k, k^2, ... below p (ceil(log_k p) of them: the k-ported rounds);
// one-ported, phase d has min(k-1, floor((p-1)/d)) rounds, one per partner r + j d < r + p.
int phases_of(int p, int k) {
  int n = 0;
  for (long long d = 1; d < p; d *= k) ++n;
  return n;
}
int k_diss_rounds(int p, int k) {
  int n = 0;
  for (long long d = 1; d < p; d *= k) n += static_cast<int>(std::min<long long>(k - 1, (p - 1) / d));
  return n;
}
bool power_of(int p, int k) {
  if (p < 2) return false;
  while (p % k == 0) p /= k;
  return p == 1;
}
}  // namespace

TEST_CASE("barrier k_dissemination: peers r + j k^i, one-ported rounds per phase, ceil(log_k p) phases") {
  const algorithm& a = find_algo(collective::barrier, "k_dissemination");
  // spot values: p = 10, k = 3: phases d = 1, 3, 9 (3 = ceil(log_3 10) k-ported rounds);
  // one-ported 2 + 2 + 1 = 5 (9 + 9 >= 10 is left out)
  CHECK(phases_of(10, 3) == 3);
  CHECK(k_diss_rounds(10, 3) == 5);
  for (int k : radices)
    for (int p = 1; p <= 64; ++p) {
      INFO("k = " << k << ", p = " << p);
      const coll_args args = barrier_args(p, k);
      const schedule_set ss = build_all(a, args);
      const verify_report rep = verify(ss, args);
      CHECK(rep.ok);
      const int R = k_diss_rounds(p, k);
      CHECK(rep.rounds == static_cast<std::size_t>(R));
      CHECK(R <= (k - 1) * phases_of(p, k));
      if (power_of(p, k)) CHECK(R == (k - 1) * phases_of(p, k));
      CHECK(a.cost(args, 8, alpha_only) == doctest::Approx(static_cast<double>(R)));
      CHECK(unheard_pairs(ss) == 0);
      for (int r = 0; r < p; ++r) {
        const auto rounds = ss[static_cast<std::size_t>(r)].rounds();
        REQUIRE(rounds.size() == static_cast<std::size_t>(R));
        std::size_t i = 0;
        for (long long d = 1; d < p; d *= k)
          for (long long j = 1; j < k && j * d < p; ++j, ++i) {
            CHECK(rounds[i].send_to == static_cast<int>((r + j * d) % p));
            CHECK(rounds[i].recv_from == static_cast<int>(((r - j * d) % p + p) % p));
          }
      }
    }
}

TEST_CASE("barrier k_dissemination: radix 2 is dissemination, default radix 4, radix >= p is direct, radix 1 refused") {
  const algorithm& a = find_algo(collective::barrier, "k_dissemination");
  const algorithm& d = find_algo(collective::barrier, "dissemination");
  for (int p = 1; p <= 64; ++p) {
    INFO("p = " << p);
    const schedule_set two = build_all(a, barrier_args(p, 2)), ref = build_all(d, barrier_args(p));
    for (int r = 0; r < p; ++r) CHECK(dump(two[static_cast<std::size_t>(r)]) == dump(ref[static_cast<std::size_t>(r)]));
    const schedule_set def = build_all(a, barrier_args(p, 0)), four = build_all(a, barrier_args(p, 4));
    for (int r = 0; r < p; ++r) CHECK(dump(def[static_cast<std::size_t>(r)]) == dump(four[static_cast<std::size_t>(r)]));
    CHECK(a.cost(barrier_args(p, 2), 8, cost_model{}) == doctest::Approx(d.cost(barrier_args(p), 8, cost_model{})));
  }
  const schedule_set direct = build_all(a, barrier_args(7, 7));
  CHECK(direct[0].rounds().size() == 6);
  for (int j = 1; j < 7; ++j) CHECK(direct[0].rounds()[static_cast<std::size_t>(j - 1)].send_to == j);
  CHECK_THROWS_AS(build_all(a, barrier_args(4, 1)), usage_error);
}

// ---- barrier recexch ----------------------------------------------------------------------------

namespace {
// MPICH's recursive-exchange plan, written out: the radix lowered to p (2 for p <= 2),
// p' = the largest power of k <= p, rem = p - p', T = floor(rem k / (k-1)); among the first
// T ranks the last of each set of k consecutive ranks takes part, the others send to it (an
// incomplete last set to rank T); ranks >= T take part. f: the most senders of a participant.
struct recexch_expect {
  int k, q = 1, L = 0, rem = 0, T = 0, f = 0;
  std::vector<int> parent;  // where a non-participant reports, -1 for a participant
  std::vector<int> real;    // participant v's rank
  recexch_expect(int p, int radix) : k(radix) {
    if (p < k) k = std::max(p, 2);
    while (q * k <= p) q *= k, ++L;
    rem = p - q;
    T = rem * k / (k - 1);
    std::vector<int> senders(static_cast<std::size_t>(p), 0);
    for (int r = 0; r < p; ++r) {
      int to = -1;
      if (r < T && r % k != k - 1) to = std::min(r - r % k + k - 1, T);
      parent.push_back(to);
      if (to < 0) real.push_back(r);
      else f = std::max(f, ++senders[static_cast<std::size_t>(to)]);
    }
  }
  int one_ported() const { return (k - 1) * L + 2 * f; }
  int k_ported() const { return L + (f > 0 ? 2 : 0); }
};
}  // namespace

TEST_CASE("barrier recexch: (k-1) log_k p' + 2f rounds one-ported, log_k p' (+2) k-ported, digit peers") {
  const algorithm& a = find_algo(collective::barrier, "recexch");
  // spot values: p = 15, k = 4: p' = 4, T = 14, sets {0..3}, {4..7}, {8..11}, {12, 13} -> 14
  const recexch_expect e(15, 4);
  CHECK(e.q == 4);
  CHECK(e.parent[12] == 14);
  CHECK(e.f == 3);
  CHECK(e.one_ported() == 9);
  CHECK(e.k_ported() == 3);
  for (int k : radices)
    for (int p = 1; p <= 64; ++p) {
      INFO("k = " << k << ", p = " << p);
      const recexch_expect x(p, k);
      const coll_args args = barrier_args(p, k);
      const schedule_set ss = build_all(a, args);
      const verify_report rep = verify(ss, args);
      CHECK(rep.ok);
      CHECK(rep.rounds == static_cast<std::size_t>(x.one_ported()));
      CHECK(a.cost(args, 8, alpha_only) == doctest::Approx(static_cast<double>(x.one_ported())));
      CHECK(unheard_pairs(ss) == 0);
      // The k-ported structure: f arrival rounds (non-participant -> its participant), then
      // L phases of k-1 rounds among participants, then f release rounds (the reverse): with
      // k-1 ports each group of rounds is one round, L + 2 (or L) in all.
      for (int r = 0; r < p; ++r) {
        const auto rounds = ss[static_cast<std::size_t>(r)].rounds();
        const int up = x.parent[static_cast<std::size_t>(r)];
        int v = -1;
        for (int u = 0; u < x.q; ++u)
          if (x.real[static_cast<std::size_t>(u)] == r) v = u;
        CHECK((v >= 0) == (up < 0));
        int sent_up = 0, heard_back = 0;
        for (int t = 0; t < x.f; ++t) {
          const ranklab::round& in = rounds[static_cast<std::size_t>(t)];
          const ranklab::round& out = rounds[static_cast<std::size_t>(x.f + (x.k - 1) * x.L + t)];
          if (up >= 0) {
            sent_up += in.send_to == up ? 1 : 0;
            heard_back += out.recv_from == up ? 1 : 0;
            CHECK(in.recv_from == no_rank);
            CHECK(out.send_to == no_rank);
          } else {
            if (in.recv_from != no_rank) CHECK(x.parent[static_cast<std::size_t>(in.recv_from)] == r);
            if (out.send_to != no_rank) CHECK(x.parent[static_cast<std::size_t>(out.send_to)] == r);
            CHECK(in.send_to == no_rank);
          }
        }
        if (up >= 0) {
          CHECK(sent_up == 1);
          CHECK(heard_back == 1);
        }
        for (int i = 0, pw = 1; i < x.L; ++i, pw *= x.k)
          for (int j = 1; j < x.k; ++j) {
            const ranklab::round& rd = rounds[static_cast<std::size_t>(x.f + i * (x.k - 1) + j - 1)];
            if (v < 0) {
              CHECK_FALSE(rd.communicates());
              continue;
            }
            const int d = v / pw % x.k;
            const int to = v + ((d + j) % x.k - d) * pw, from = v + ((d - j + x.k) % x.k - d) * pw;
            CHECK(rd.send_to == x.real[static_cast<std::size_t>(to)]);
            CHECK(rd.recv_from == x.real[static_cast<std::size_t>(from)]);
          }
      }
    }
}

TEST_CASE("barrier recexch: radix 2 is the recursive_doubling barrier, round for round; radix 1 refused") {
  const algorithm& a = find_algo(collective::barrier, "recexch");
  const algorithm& rd = find_algo(collective::barrier, "recursive_doubling");
  for (int p = 1; p <= 64; ++p) {
    INFO("p = " << p);
    const schedule_set two = build_all(a, barrier_args(p, 2)), ref = build_all(rd, barrier_args(p));
    for (int r = 0; r < p; ++r) CHECK(dump(two[static_cast<std::size_t>(r)]) == dump(ref[static_cast<std::size_t>(r)]));
    CHECK(a.cost(barrier_args(p, 2), 8, cost_model{}) == doctest::Approx(rd.cost(barrier_args(p), 8, cost_model{})));
  }
  CHECK_THROWS_AS(build_all(a, barrier_args(5, 1)), usage_error);
}

TEST_CASE("barriers: separate on the thread executor with radix 3 and 5") {
  for (const char* n : {"k_dissemination", "recexch"})
    for (int k : {3, 5})
      for (int p : {1, 2, 3, 6, 7, 10, 13}) {
        algo_params prm;
        prm.radix = k;
        INFO(n << " k = " << k << " p = " << p);
        expect_verified(make_call(collective::barrier, p, 0, 0, i32, ops::sum, {n, prm}), executor_kind::threads, 5);
      }
}

// ---- reduce_scatter recursive_doubling ----------------------------------------------------------

namespace {
// MPICH's rounds: step i (distance 2^i < p) is one exchange, plus, when the last pair's
// partner group exists only in part (c = p mod 2^(i+1) - 2^i > 0 of its 2^i ranks), the
// doublings a broadcast from c ranks to 2^i takes.
int rsrd_rounds(int p) {
  int n = 0;
  for (long long m = 1; m < p; m *= 2) {
    ++n;
    const long long c = p % (2 * m) - m;
    if (c > 0)
      for (long long have = c; have < m; have *= 2) ++n;
  }
  return n;
}
}  // namespace

TEST_CASE("reduce_scatter recursive_doubling: rounds, peers r XOR 2^i, volumes M - 2^i blocks") {
  // spot values: p = 2^k: log2 p; p = 6: steps 1, 2, 4; step 2: c = 6 mod 8 - 4 = 2 of 4,
  // one doubling: 4 rounds; p = 13: step 4: c = 5 of 8: 1 doubling; step 2: c = 1 of 4: 2
  CHECK(rsrd_rounds(8) == 3);
  CHECK(rsrd_rounds(6) == 4);
  CHECK(rsrd_rounds(13) == 4 + 2 + 1);
  for (collective c : {collective::reduce_scatter_block, collective::reduce_scatter}) {
    const algorithm& a = find_algo(c, "recursive_doubling");
    for (int p = 1; p <= 64; ++p) {
      INFO(name(c) << " p = " << p);
      const coll_args args = block_args(c, p, 3, /*commutative=*/false);
      const schedule_set ss = build_all(a, args);
      const verify_report rep = verify(ss, args);
      CHECK(rep.ok);
      CHECK(rep.rounds == static_cast<std::size_t>(rsrd_rounds(p)));
      CHECK(a.cost(args, 8, alpha_only) == doctest::Approx(static_cast<double>(rsrd_rounds(p))));
      std::vector<std::uint64_t> at(static_cast<std::size_t>(p) + 1, 0);
      for (int j = 0; j < p; ++j) at[j + 1] = at[j] + (c == collective::reduce_scatter ? args.counts[j] : 3);
      auto outside = [&](int g, int m) { return at[p] - (at[std::min(g + m, p)] - at[g]); };
      for (int r = 0; r < p; ++r) {
        const schedule& s = ss[static_cast<std::size_t>(r)];
        std::size_t i = 0;
        for (int m = 1; m < p; m *= 2) {
          const ranklab::round& rd = s.rounds()[i];
          const int peer = r ^ m;
          if (peer < p) {
            CHECK(rd.send_to == peer);
            CHECK(rd.recv_from == peer);
            CHECK(s.send_count(rd) == outside(r & ~(m - 1), m));
            CHECK(s.recv_count(rd) == outside(peer & ~(m - 1), m));
          } else {
            CHECK_FALSE(rd.communicates());
          }
          // the relay rounds: only inside the last pair's lower group, each rank without a
          // partner receives once, from a lower rank of its group that has the data
          const long long cc = p % (2 * m) - m;
          int relays = 0;
          if (cc > 0)
            for (long long have = cc; have < m; have *= 2) ++relays;
          const int g = r & ~(m - 1);
          const bool lower_of_last = (g & m) == 0 && g + m < p && g + 2 * m > p;
          int got = 0;
          for (int t = 1; t <= relays; ++t) {
            const ranklab::round& x = s.rounds()[i + static_cast<std::size_t>(t)];
            if (!lower_of_last) {
              CHECK_FALSE(x.communicates());
              continue;
            }
            if (x.recv_from != no_rank) {
              ++got;
              CHECK(x.recv_from < r);
              CHECK(x.recv_from >= g);
              CHECK(s.recv_count(x) == outside(g + m, m));
            }
            if (x.send_to != no_rank) CHECK(x.send_to < g + m);
          }
          CHECK(got == (lower_of_last && peer >= p ? 1 : 0));
          i += 1 + static_cast<std::size_t>(relays);
        }
      }
    }
  }
}

TEST_CASE("reduce_scatter recursive_doubling: p = 2^k cost M (log2 p - (p-1)/p)(beta + gamma) and elements sent") {
  const algorithm& a = find_algo(collective::reduce_scatter_block, "recursive_doubling");
  for (int p : {1, 2, 4, 8, 16, 32, 64}) {
    INFO("p = " << p);
    const std::uint64_t b = 5;
    const coll_args args = block_args(collective::reduce_scatter_block, p, b);
    const int L = ceil_log2(p);
    const double M = static_cast<double>(b * p * 8);
    CHECK(a.cost(args, 8, cost_model{0.0, 1.0, 0.0}) == doctest::Approx(M * (L - (p - 1.0) / p)));
    CHECK(a.cost(args, 8, cost_model{0.0, 0.0, 1.0}) == doctest::Approx(M * (L - (p - 1.0) / p)));
    const verify_report rep = verify(build_all(a, args), args);
    std::uint64_t sent = 0;
    for (int m = 1; m < p; m *= 2) sent += b * static_cast<std::uint64_t>(p - m);
    CHECK(rep.elements == sent * static_cast<std::uint64_t>(p));
  }
}

// ---- reduce_scatter reduce_scatterv -------------------------------------------------------------

TEST_CASE("reduce_scatterv: 2 ceil(log2 p) rounds, reduce binomial to 0 then scatter(v) binomial, peer for peer") {
  for (collective c : {collective::reduce_scatter, collective::reduce_scatter_block}) {
    const algorithm& a = find_algo(c, "reduce_scatterv");
    for (int p = 1; p <= 64; ++p) {
      INFO(name(c) << " p = " << p);
      const coll_args args = block_args(c, p, 3, /*commutative=*/false);
      const schedule_set ss = build_all(a, args);
      const verify_report rep = verify(ss, args);
      CHECK(rep.ok);
      const int L = ceil_log2(p);
      CHECK(rep.rounds == static_cast<std::size_t>(2 * L));
      CHECK(a.cost(args, 8, alpha_only) == doctest::Approx(2.0 * L));
      // The binomial tree written out: reduce round k, rank r with lowest set bit 2^k sends
      // to r - 2^k; scatter round j (mask 2^(L-1-j)) rank v with v % 2mask == 0 sends to
      // v + mask (if < p).
      for (int r = 0; r < p; ++r) {
        const auto rounds = ss[static_cast<std::size_t>(r)].rounds();
        for (int k = 0; k < L; ++k) {
          const int m = 1 << k;
          int to = no_rank, from = no_rank;
          if (r % (2 * m) == m) to = r - m;
          if (r % (2 * m) == 0 && r + m < p) from = r + m;
          CHECK(rounds[static_cast<std::size_t>(k)].send_to == to);
          CHECK(rounds[static_cast<std::size_t>(k)].recv_from == from);
        }
        for (int j = 0; j < L; ++j) {
          const int m = 1 << (L - 1 - j);
          int to = no_rank, from = no_rank;
          if (r % (2 * m) == 0 && r + m < p) to = r + m;
          if (r % (2 * m) == m) from = r - m;
          const std::size_t at = static_cast<std::size_t>(L + j);
          CHECK((at < rounds.size() ? rounds[at].send_to : no_rank) == to);
          CHECK((at < rounds.size() ? rounds[at].recv_from : no_rank) == from);
        }
      }
    }
  }
  // The reduce phase is what reduce binomial does at root 0 (both trees are MPICH's).
  for (int p : {2, 3, 7, 8, 13, 33}) {
    coll_args r;
    r.coll = collective::reduce;
    r.p = p;
    r.count = 4;
    const schedule_set bin = build_all(find_algo(collective::reduce, "binomial"), r);
    const schedule_set ino = build_all(find_algo(collective::reduce, "inorder_binomial"), r);
    for (int k = 0; k < p; ++k)
      for (std::size_t i = 0; i < std::min(bin[k].rounds().size(), ino[k].rounds().size()); ++i) {
        CHECK(bin[k].rounds()[i].send_to == ino[k].rounds()[i].send_to);
        CHECK(bin[k].rounds()[i].recv_from == ino[k].rounds()[i].recv_from);
      }
  }
}

TEST_CASE("reduce_scatterv: cost is the reduce's plus the scatter's") {
  const cost_model m{};
  for (int p : {1, 2, 5, 8, 17, 64}) {
    const coll_args args = block_args(collective::reduce_scatter_block, p, 10);
    coll_args r;
    r.coll = collective::reduce;
    r.p = p;
    r.count = 10 * static_cast<std::uint64_t>(p);
    coll_args s;
    s.coll = collective::scatter;
    s.p = p;
    s.count = 10;
    CHECK(find_algo(collective::reduce_scatter_block, "reduce_scatterv").cost(args, 8, m) ==
          doctest::Approx(find_algo(collective::reduce, "inorder_binomial").cost(r, 8, m) +
                          find_algo(collective::scatter, "binomial").cost(s, 8, m)));
  }
}

// ---- allgather gather_bcast ---------------------------------------------------------------------

TEST_CASE("gather_bcast: 2 ceil(log2 p) rounds, binomial gather to 0 then doubling bcast from 0, peer for peer") {
  for (collective c : {collective::allgather, collective::allgatherv}) {
    const algorithm& a = find_algo(c, "gather_bcast");
    for (int p = 1; p <= 64; ++p) {
      INFO(name(c) << " p = " << p);
      const coll_args args = block_args(c, p, 2);
      const schedule_set ss = build_all(a, args);
      const verify_report rep = verify(ss, args);
      CHECK(rep.ok);
      const int L = ceil_log2(p);
      CHECK(rep.rounds == static_cast<std::size_t>(2 * L));
      CHECK(a.cost(args, 8, alpha_only) == doctest::Approx(2.0 * L));
      std::uint64_t total = 0;
      for (int j = 0; j < p; ++j) total += c == collective::allgatherv ? args.counts[j] : 2;
      for (int r = 0; r < p; ++r) {
        const schedule& s = ss[static_cast<std::size_t>(r)];
        const auto rounds = s.rounds();
        REQUIRE(rounds.size() >= static_cast<std::size_t>(2 * L));
        for (int k = 0; k < L; ++k) {  // gather: r with lowest set bit 2^k sends its subtree
          const int m = 1 << k;
          const ranklab::round& rd = rounds[static_cast<std::size_t>(k)];
          CHECK(rd.send_to == (r % (2 * m) == m ? r - m : no_rank));
          CHECK(rd.recv_from == (r % (2 * m) == 0 && r + m < p ? r + m : no_rank));
        }
        for (int k = 0; k < L; ++k) {  // bcast: in round k ranks < 2^k send to r + 2^k
          const int m = 1 << k;
          const ranklab::round& rd = rounds[static_cast<std::size_t>(L + k)];
          CHECK(rd.send_to == (r < m && r + m < p ? r + m : no_rank));
          CHECK(rd.recv_from == (r >= m && r < 2 * m ? r - m : no_rank));
          if (rd.recv_from != no_rank) CHECK(s.recv_count(rd) == total);  // the whole result
        }
      }
    }
  }
}

TEST_CASE("gather_bcast: allgatherv with reversed blocks and gaps leaves the gaps alone") {
  const algorithm& a = find_algo(collective::allgatherv, "gather_bcast");
  for (int p : {1, 2, 3, 5, 8, 13, 31, 64}) {
    INFO("p = " << p);
    for (count_pattern pat : {count_pattern::cycling, count_pattern::random, count_pattern::zeros}) {
      const std::vector<std::uint64_t> counts = counts_of(pat, p);
      const call cl = make_vcall(collective::allgatherv, p, counts, reversed_with_gaps(counts), 0, i32, ops::sum,
                                 {"gather_bcast"});
      CHECK(verify(build_all(a, prepared(cl)), prepared(cl)).ok);
      expect_verified(cl, executor_kind::sequential);
    }
  }
}

// ---- results against the sequential reference, and the verifier's sweep ------------------------

TEST_CASE("gaps_a: results against the sequential reference, p = 1..64, count 0, irregular, non-commutative") {
  for (int p = 1; p <= 64; ++p) {
    const executor_kind ex = p <= 9 ? executor_kind::threads : executor_kind::sequential;
    for (const char* n : {"recursive_doubling", "reduce_scatterv"}) {
      for (std::uint64_t count : {0, 1, 5}) {
        expect_verified(make_call(collective::reduce_scatter_block, p, count, 0, i32, ops::sum, {n}), ex);
        expect_verified(make_call(collective::reduce_scatter_block, p, count, 0, matrix_product.type,
                                  matrix_product.reduction, {n}),
                        ex);
      }
      for (count_pattern pat : {count_pattern::cycling, count_pattern::random, count_pattern::zeros,
                                count_pattern::one_rank}) {
        const std::vector<std::uint64_t> counts = counts_of(pat, p, p / 2);
        expect_verified(make_vcall(collective::reduce_scatter, p, counts, {}, 0, i32, ops::sum, {n}), ex);
        expect_verified(make_vcall(collective::reduce_scatter, p, counts, {}, 0, matrix_product.type,
                                   matrix_product.reduction, {n}),
                        ex);
      }
    }
    for (std::uint64_t count : {0, 1, 3})
      expect_verified(make_call(collective::allgather, p, count, 0, i32, ops::sum, {"gather_bcast"}), ex);
    for (count_pattern pat : {count_pattern::cycling, count_pattern::random, count_pattern::increasing})
      expect_verified(make_vcall(collective::allgatherv, p, counts_of(pat, p), {}, 0, i32, ops::sum, {"gather_bcast"}), ex);
    for (const char* n : {"linear", "k_dissemination", "recexch"})
      for (int k : {0, 2, 3, 7}) {
        algo_params prm;
        prm.radix = k;
        expect_verified(make_call(collective::barrier, p, 0, 0, i32, ops::sum, {n, prm}), executor_kind::sequential);
      }
  }
}

TEST_CASE("gaps_a: the verifier's sweep (ranklab verify) passes for p = 1..64") {
  const std::pair<collective, const char*> entries[] = {
      {collective::barrier, "linear"},
      {collective::barrier, "k_dissemination"},
      {collective::barrier, "recexch"},
      {collective::reduce_scatter, "recursive_doubling"},
      {collective::reduce_scatter_block, "recursive_doubling"},
      {collective::reduce_scatter, "reduce_scatterv"},
      {collective::reduce_scatter_block, "reduce_scatterv"},
      {collective::allgather, "gather_bcast"},
      {collective::allgatherv, "gather_bcast"},
  };
  for (const auto& [c, n] : entries)
    for (int p = 1; p <= 64; ++p) {
      INFO(name(c) << "/" << n << " p = " << p);
      const verify_summary v = verify_algorithm(find_algo(c, n), p);
      CHECK(v.calls > 0);
      CHECK_MESSAGE(v.ok(), (v.failures.empty() || v.failures[0].problems.empty() ? "" : v.failures[0].problems[0]));
    }
}
