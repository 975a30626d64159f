// MPICH's collective algorithms added to ranklab (helper tag "mpich"), and one of Open MPI's:
// alltoall k_brucks, bcast and reduce knomial_segmented, allreduce k_bruck. Round counts
// against the sources' formulas (one-ported and with k-1 ports), peers against formulas
// written here independently, the equalities the sources claim (radix 2 is Bruck, one
// segment is the plain k-nomial tree), results against the sequential reference, and the
// two MPICH algorithms that ranklab already has under other names (alltoall scattered is
// linear in reverse round order; bcast circ_graph is Träff's schedule of bcast circulant).
// See docs/algorithms.md, "alltoall", "bcast", "reduce", "allreduce".
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "call_shapes.hpp"
#include "ranklab/check.hpp"
#include "ranklab/circulant.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/semantics.hpp"

using namespace ranklab;
using ranklab::testing::i32;
using ranklab::testing::matrix_of;
using ranklab::testing::matrix_pattern;

namespace {

const algorithm& find_algo(collective c, const char* name) {
  const algorithm* a = registry::find(c, name);
  REQUIRE(a != nullptr);
  return *a;
}

int mod(std::int64_t a, int p) { return static_cast<int>(((a % p) + p) % p); }

int log_k_ceil(int p, int k) {
  int l = 0;
  for (std::int64_t x = 1; x < p; x *= k) ++l;
  return l;
}

bool power_of(int p, int k) {
  if (p <= 1) return false;
  for (int x = p; x > 1; x /= k)
    if (x % k != 0) return false;
  return true;
}

std::string dump(const schedule_set& ss) {
  std::string s;
  for (const schedule& x : ss) s += x.describe() + "\n";
  return s;
}

coll_args args_of(collective c, int p, std::uint64_t count, int root = 0) {
  coll_args a;
  a.coll = c;
  a.p = p;
  a.count = count;
  a.root = root;
  if (c == collective::alltoallv) a.counts = matrix_of(matrix_pattern::random, p);
  return a;
}

// One call through the semantic verifier, and its structure.
bool verified(const algorithm& a, const coll_args& args) { return verify(build_all(a, args), args).ok; }

const std::vector<int> awkward_p = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 15, 16, 17, 25, 27, 31, 32, 33, 63, 64};

// ---- formulas, written independently of the builders ----------------------------------------

// Base-k digit i of t.
int digit(int t, int i, int k) {
  for (int l = 0; l < i; ++l) t /= k;
  return t % k;
}
// Bruck radix k one-ported: one round per (phase i, digit value j) with j k^i < p.
int bruck_rounds(int p, int k) {
  int n = 0;
  for (std::int64_t d = 1; d < p; d *= k)
    for (int j = 1; j < k; ++j)
      if (j * d < p) ++n;
  return n;
}

// The k-nomial tree's root fan-out: min(k-1, (p-1)/k^l) children at each level l < L.
std::int64_t root_children(int p, int k) {
  std::int64_t c = 0;
  for (std::int64_t u = 1; u < p; u *= k) c += std::min<std::int64_t>(k - 1, (p - 1) / u);
  return c;
}

}  // namespace

// ---- alltoall k_brucks ----------------------------------------------------------------------------

TEST_CASE("k_brucks: one round per digit value, peers r +- j k^i, the blocks with digit i == j") {
  const algorithm& a = find_algo(collective::alltoall, "k_brucks");
  CHECK(registry::find(collective::alltoallv, "k_brucks") != nullptr);
  for (int k : {2, 3, 4, 5, 8}) {
    for (int p : awkward_p) {
      const std::uint64_t n = 2;
      coll_args args = args_of(collective::alltoall, p, n);
      args.params.radix = k;
      const schedule_set ss = build_all(a, args);
      const int R = bruck_rounds(p, k);
      // one-ported: at most (k-1) ceil(log_k p), equality for p = k^L
      CHECK(R <= (k - 1) * log_k_ceil(p, k));
      if (power_of(p, k)) CHECK(R == (k - 1) * log_k_ceil(p, k));
      for (int r = 0; r < p; ++r) {
        INFO("k = " << k << ", p = " << p << ", rank " << r);
        const schedule& s = ss[static_cast<std::size_t>(r)];
        REQUIRE(s.communication_rounds() == static_cast<std::size_t>(R));
        // k-1 ports: the rounds fall into ceil(log_k p) phases of consecutive rounds whose
        // peers are j k^i away, one phase per digit position i.
        int i_round = 0, phases = 0, idx = 0;
        for (std::int64_t d = 1; d < p; d *= k, ++i_round) {
          ++phases;
          for (int j = 1; j < k && j * d < p; ++j, ++idx) {
            const ranklab::round& rd = s.rounds()[static_cast<std::size_t>(idx)];
            CHECK(rd.send_to == mod(r + j * d, p));
            CHECK(rd.recv_from == mod(r - j * d, p));
            int blocks = 0;
            for (int t = 1; t < p; ++t) blocks += digit(t, i_round, k) == j;
            CHECK(s.recv_count(rd) == n * static_cast<std::uint64_t>(blocks));
            CHECK(s.send_count(rd) == n * static_cast<std::uint64_t>(blocks));
          }
        }
        CHECK(phases == log_k_ceil(p, k));
      }
      CHECK(verify(ss, args).ok);
      // cost: R alpha + beta m (blocks moved in all)
      std::int64_t moves = 0;
      for (int t = 1; t < p; ++t)
        for (int i = 0; i < log_k_ceil(p, k); ++i) moves += digit(t, i, k) != 0;
      const cost_model m;
      CHECK(a.cost(args, 4, m) == doctest::Approx(R * m.alpha + m.beta * 8.0 * static_cast<double>(moves)));
    }
  }
}

TEST_CASE("k_brucks: default radix 2 (MPICH's), and radix 2 is ranklab's bruck schedule exactly") {
  const algorithm& a = find_algo(collective::alltoall, "k_brucks");
  for (collective c : {collective::alltoall, collective::alltoallv}) {
    for (int p : awkward_p) {
      INFO(name(c) << ", p = " << p);
      coll_args args = args_of(c, p, 3);
      const std::string def = dump(build_all(find_algo(c, "k_brucks"), args));
      args.params.radix = 2;
      CHECK(def == dump(build_all(find_algo(c, "k_brucks"), args)));
      CHECK(def == dump(build_all(find_algo(c, "bruck"), args)));
      CHECK(build_all(a, args_of(collective::alltoall, p, 1))[0].communication_rounds() ==
            static_cast<std::size_t>(testing::ceil_log2(p)));
    }
  }
}

TEST_CASE("k_brucks: radix >= p is the direct exchange r+j / r-j, radix 1 refused") {
  const algorithm& a = find_algo(collective::alltoall, "k_brucks");
  for (int p : {2, 5, 7, 12}) {
    coll_args args = args_of(collective::alltoall, p, 2);
    args.params.radix = p + 3;
    const schedule_set ss = build_all(a, args);
    for (int r = 0; r < p; ++r) {
      REQUIRE(ss[static_cast<std::size_t>(r)].communication_rounds() == static_cast<std::size_t>(p - 1));
      for (int j = 1; j < p; ++j) {
        const ranklab::round& rd = ss[static_cast<std::size_t>(r)].rounds()[static_cast<std::size_t>(j - 1)];
        CHECK(rd.send_to == mod(r + j, p));
        CHECK(rd.recv_from == mod(r - j, p));
      }
    }
    CHECK(verify(ss, args).ok);
  }
  coll_args bad = args_of(collective::alltoall, 5, 1);
  bad.params.radix = 1;
  CHECK_THROWS_AS(build_all(a, bad), usage_error);
}

TEST_CASE("k_brucks: results for p = 1..64, counts 0, 1, uneven and large, alltoallv irregular, radix 2..7") {
  const algorithm& a = find_algo(collective::alltoall, "k_brucks");
  const algorithm& av = find_algo(collective::alltoallv, "k_brucks");
  for (int p = 1; p <= 64; ++p) {
    for (int k : {2, 3, 4, 7}) {
      INFO("p = " << p << ", k = " << k);
      for (std::uint64_t n : {0, 1, 5}) {
        coll_args args = args_of(collective::alltoall, p, n);
        args.params.radix = k;
        CHECK(verified(a, args));
      }
      for (matrix_pattern pat : {matrix_pattern::random, matrix_pattern::zeros, matrix_pattern::one_sends}) {
        coll_args v = args_of(collective::alltoallv, p, 0);
        v.counts = matrix_of(pat, p, static_cast<std::uint64_t>(p));
        v.params.radix = k;
        CHECK(verified(av, v));
      }
    }
  }
  // Data through both executors against the sequential reference, large blocks included.
  for (int p : {1, 3, 8, 13, 27}) {
    for (int k : {3, 4}) {
      for (std::uint64_t n : {0, 1, 1000}) {
        call c = make_call(collective::alltoall, p, n, 0, i32, ops::sum, {"k_brucks", {.radix = k}});
        INFO("p = " << p << ", k = " << k << ", n = " << n);
        const check_result r = run_check(c, executor_kind::sequential);
        CHECK_MESSAGE(r.verified, r.difference);
      }
      call v = make_vcall(collective::alltoallv, p, matrix_of(matrix_pattern::random, p, 7), {}, 0, i32, ops::sum,
                          {"k_brucks", {.radix = k}});
      const check_result rv = run_check(v, executor_kind::threads);
      CHECK_MESSAGE(rv.verified, rv.difference);
    }
  }
}

// ---- alltoall scattered: not registered, it is linear with the rounds reversed -----------------

TEST_CASE("MPICH's scattered alltoall (send r-i, receive r+i, i = 1..p-1) is linear's rounds in reverse order") {
  // MPIR_Alltoall_intra_scattered posts, in batch order, receives from r+i and sends to r-i;
  // one-ported, step i is a round. Linear's round p-i is the same exchange.
  const algorithm& lin = find_algo(collective::alltoall, "linear");
  for (int p : awkward_p) {
    const schedule_set ss = build_all(lin, args_of(collective::alltoall, p, 1));
    for (int r = 0; r < p; ++r) {
      const schedule& s = ss[static_cast<std::size_t>(r)];
      REQUIRE(s.communication_rounds() == static_cast<std::size_t>(std::max(p - 1, 0)));
      for (int i = 1; i < p; ++i) {
        const ranklab::round& rd = s.rounds()[static_cast<std::size_t>(p - i - 1)];
        CHECK(rd.send_to == mod(r - i, p));
        CHECK(rd.recv_from == mod(r + i, p));
      }
    }
  }
  CHECK(registry::find(collective::alltoall, "scattered") == nullptr);
}

// ---- bcast: MPICH's circ_graph / circ_qvring is bcast circulant's schedule ---------------------

TEST_CASE("MPICH's circulant-graph bcast schedule for p = 17 (its source's example) is ranklab's") {
  // The table in MPICH's bcast_intra_circ_graph.c, rows k = 0..4, columns r = 0..16
  // (bracketed non-negative entries there written as plain numbers here).
  const int R[5][17] = {
      {-4, 0, -5, -4, -3, -5, -2, -5, -4, -3, -1, -5, -4, -3, -5, -2, -5},
      {-5, -4, 1, -5, -4, -3, -3, -2, -5, -4, -3, -1, -5, -4, -3, -3, -2},
      {-2, -2, -2, 2, 0, -4, -4, -3, -2, -2, -4, -3, -1, -1, -4, -4, -3},
      {-1, -3, -3, -2, -2, 3, 0, 1, 2, -5, -2, -2, -2, -2, -1, -1, -1},
      {-3, -1, -1, -1, -1, -1, -1, -1, -1, 4, 0, 1, 2, 0, 3, 0, 1},
  };
  const int S[5][17] = {
      {0, -5, -4, -3, -5, -2, -5, -4, -3, -1, -5, -4, -3, -5, -2, -5, -4},
      {1, -5, -4, -3, -3, -2, -5, -4, -3, -1, -5, -4, -3, -3, -2, -5, -4},
      {2, 0, -4, -4, -3, -2, -2, -4, -3, -1, -1, -4, -4, -3, -2, -2, -2},
      {3, 0, 1, 2, -5, -2, -2, -2, -2, -1, -1, -1, -1, -3, -3, -2, -2},
      {4, 0, 1, 2, 0, 3, 0, 1, -3, -1, -1, -1, -1, -1, -1, -1, -1},
  };
  const circulant::skips sk(17);
  REQUIRE(sk.q == 5);
  const std::int64_t skips17[6] = {1, 2, 3, 5, 9, 17};
  for (int k = 0; k <= 5; ++k) CHECK(sk[k] == skips17[k]);
  for (int r = 0; r < 17; ++r) {
    std::vector<int> recv(5), send(5);
    circulant::schedules(sk, r, recv, send);
    for (int k = 0; k < 5; ++k) {
      INFO("r = " << r << ", k = " << k);
      CHECK(send[static_cast<std::size_t>(k)] == S[k][r]);
      if (r != 0) CHECK(recv[static_cast<std::size_t>(k)] == R[k][r]);  // the root receives nothing
    }
  }
}

TEST_CASE("bcast circulant with MPICH's chunking: n = ceil(m / chunk) blocks, n - 1 + q rounds") {
  const algorithm& a = find_algo(collective::bcast, "circulant");
  for (int p : {2, 5, 17, 33, 64}) {
    for (std::uint64_t chunk : {1, 4, 16}) {
      const std::uint64_t m = 50;
      coll_args args = args_of(collective::bcast, p, m, p / 3);
      args.params.blocks = static_cast<int>((m + chunk - 1) / chunk);
      const schedule_set ss = build_all(a, args);
      std::size_t most = 0;
      for (const schedule& s : ss) most = std::max(most, s.communication_rounds());
      CHECK(most == static_cast<std::size_t>(args.params.blocks - 1 + testing::ceil_log2(p)));
      CHECK(verify(ss, args).ok);
    }
  }
}

// ---- bcast and reduce knomial_segmented --------------------------------------------------------

namespace {
std::size_t rounds_of(const schedule_set& ss) {
  std::size_t most = 0;
  for (const schedule& s : ss) most = std::max(most, s.communication_rounds());
  return most;
}

// Rounds with k-1 ports: per round a rank sends one segment to all children of one level (a
// k-nomial group) and receives one; groups farthest first, segment after segment, each as early
// as possible. Simulated here for the formula S L.
std::int64_t ported_rounds(int p, int k, std::int64_t segments) {
  if (p <= 1) return 0;
  std::vector<std::int64_t> power = {1};
  while (power.back() < p) power.push_back(power.back() * k);
  const int L = static_cast<int>(power.size()) - 1;
  auto low = [&](std::int64_t v) {
    if (v == 0) return L;
    int j = 0;
    while (v / power[static_cast<std::size_t>(j)] % k == 0) ++j;
    return j;
  };
  // arrival[v][i]; ranks in increasing order have their parents first.
  std::vector<std::vector<std::int64_t>> arrival(static_cast<std::size_t>(p));
  arrival[0].assign(static_cast<std::size_t>(segments), -1);
  std::int64_t last = 0;
  for (std::int64_t v = 0; v < p; ++v) {
    std::int64_t busy = -1;
    for (std::int64_t i = 0; i < segments; ++i)
      for (int l = low(v) - 1; l >= 0; --l) {
        if (v + power[static_cast<std::size_t>(l)] >= p) continue;  // no child at this level
        busy = std::max(busy + 1, arrival[static_cast<std::size_t>(v)][static_cast<std::size_t>(i)] + 1);
        for (std::int64_t j = 1; j < k && v + j * power[static_cast<std::size_t>(l)] < p; ++j) {
          auto& a = arrival[static_cast<std::size_t>(v + j * power[static_cast<std::size_t>(l)])];
          a.push_back(busy);
        }
        last = std::max(last, busy + 1);
      }
  }
  return last;
}
}  // namespace

TEST_CASE("knomial_segmented: S C rounds one-ported (T = C: one segment is the root's fan-out), S L with k-1 ports") {
  const algorithm& b = find_algo(collective::bcast, "knomial_segmented");
  const algorithm& r = find_algo(collective::reduce, "knomial_segmented");
  const algorithm& plain_b = find_algo(collective::bcast, "knomial");
  for (int k : {2, 3, 4, 5}) {
    for (int p : awkward_p) {
      for (std::uint64_t seg : {1, 2, 3, 7}) {
        const std::uint64_t n = 20;
        coll_args args = args_of(collective::bcast, p, n, p / 2);
        args.params.radix = k;
        args.params.segment = seg;
        const std::int64_t S = static_cast<std::int64_t>((n + seg - 1) / seg);
        coll_args one = args;
        one.params.segment = 0;
        const auto T = static_cast<std::int64_t>(rounds_of(build_all(plain_b, one)));
        const std::int64_t C = p > 1 ? root_children(p, k) : 0;
        INFO("k = " << k << ", p = " << p << ", S = " << S << ", T = " << T << ", C = " << C);
        CHECK(T == C);
        const std::int64_t want = p > 1 ? S * C : 0;
        const schedule_set sb = build_all(b, args);
        CHECK(static_cast<std::int64_t>(rounds_of(sb)) == want);
        CHECK(verify(sb, args).ok);
        coll_args ra = args;
        ra.coll = collective::reduce;
        const schedule_set sr = build_all(r, ra);
        CHECK(static_cast<std::int64_t>(rounds_of(sr)) == want);
        CHECK(verify(sr, ra).ok);
        // k-1 ports: L per segment
        CHECK(ported_rounds(p, k, S) == S * log_k_ceil(p, k));
        // cost: rounds (alpha + beta m/S), the reduce with gamma too
        const cost_model m;
        const double piece = static_cast<double>(std::min<std::uint64_t>(seg, n) * 8);
        CHECK(b.cost(args, 8, m) == doctest::Approx(static_cast<double>(want) * (m.alpha + m.beta * piece)));
        CHECK(r.cost(ra, 8, m) == doctest::Approx(static_cast<double>(want) * (m.alpha + (m.beta + m.gamma) * piece)));
      }
    }
  }
}

TEST_CASE("knomial_segmented: one segment is knomial's schedule exactly (bcast and reduce)") {
  for (collective c : {collective::bcast, collective::reduce}) {
    const algorithm& seg = find_algo(c, "knomial_segmented");
    const algorithm& plain = find_algo(c, "knomial");
    for (int k : {2, 3, 4}) {
      for (int p : awkward_p) {
        for (std::uint64_t n : {0, 1, 9}) {
          INFO(name(c) << ", k = " << k << ", p = " << p << ", n = " << n);
          coll_args args = args_of(c, p, n, p - 1);
          args.params.radix = k;
          args.params.segment = 1000;  // >= count: one segment
          CHECK(dump(build_all(seg, args)) == dump(build_all(plain, args)));
        }
      }
    }
  }
}

TEST_CASE("knomial_segmented: default one segment (knomial), and one-ported no segmentation is cheaper") {
  const algorithm& b = find_algo(collective::bcast, "knomial_segmented");
  const algorithm& r = find_algo(collective::reduce, "knomial_segmented");
  const cost_model m;
  for (int p : awkward_p) {
    for (int k : {0, 2, 3, 4}) {
      for (collective c : {collective::bcast, collective::reduce}) {
        coll_args args = args_of(c, p, 1 << 16, p / 2);
        args.params.radix = k;
        INFO(name(c) << ", p = " << p << ", k = " << k);
        const algorithm& seg = c == collective::bcast ? b : r;
        const algorithm& plain = find_algo(c, "knomial");
        CHECK(dump(build_all(seg, args)) == dump(build_all(plain, args)));
        for (std::uint64_t size : {1024, 4096, 16384}) {
          args.params.segment = size;
          CHECK(seg.cost(args, 8, m) >= plain.cost(args, 8, m) * (1 - 1e-12));
        }
      }
    }
  }
  coll_args bad = args_of(collective::bcast, 5, 4);
  bad.params.radix = 1;
  CHECK_THROWS_AS(build_all(b, bad), usage_error);
  CHECK(r.needs_commutative);
}

TEST_CASE("knomial_segmented: results for p = 1..64, every third root, counts 0, 1, uneven, large") {
  const algorithm& b = find_algo(collective::bcast, "knomial_segmented");
  const algorithm& r = find_algo(collective::reduce, "knomial_segmented");
  for (int p = 1; p <= 64; ++p) {
    for (int root = 0; root < p; root += 3) {
      for (int k : {2, 3, 4}) {
        for (std::uint64_t n : {0, 1, 11}) {
          for (std::uint64_t seg : {0, 1, 4}) {
            INFO("p = " << p << ", root = " << root << ", k = " << k << ", n = " << n << ", seg = " << seg);
            coll_args args = args_of(collective::bcast, p, n, root);
            args.params.radix = k;
            args.params.segment = seg;
            CHECK(verified(b, args));
            args.coll = collective::reduce;
            CHECK(verified(r, args));
          }
        }
      }
    }
  }
  for (int p : {1, 2, 7, 20, 33}) {
    for (std::uint64_t n : {0, 3, 5000}) {
      const int root = p / 2;
      call cb =
          make_call(collective::bcast, p, n, root, i32, ops::sum, {"knomial_segmented", {.radix = 3, .segment = 64}});
      call cr =
          make_call(collective::reduce, p, n, root, i32, ops::sum, {"knomial_segmented", {.radix = 3, .segment = 64}});
      INFO("p = " << p << ", n = " << n);
      for (const call& c : {cb, cr}) {
        const check_result res = run_check(c, executor_kind::threads);
        CHECK_MESSAGE(res.verified, res.difference);
      }
    }
  }
}

// ---- allreduce k_bruck (Open MPI: allgather_reduce over allgather k_bruck) ---------------------

TEST_CASE("allreduce k_bruck: Bruck radix-k rounds, fixed order, radix 2 is allgather_reduce exactly") {
  const algorithm& a = find_algo(collective::allreduce, "k_bruck");
  CHECK(a.fixed_order);
  CHECK_FALSE(a.needs_commutative);
  for (int p : awkward_p) {
    for (std::uint64_t n : {0, 1, 6}) {
      coll_args args = args_of(collective::allreduce, p, n);
      INFO("p = " << p << ", n = " << n);
      CHECK(dump(build_all(a, args)) == dump(build_all(find_algo(collective::allreduce, "allgather_reduce"), args)));
      for (int k : {2, 3, 4, 8}) {
        args.params.radix = k;
        args.commutative = false;
        args.in_place = false;
        const schedule_set ss = build_all(a, args);
        CHECK(rounds_of(ss) == static_cast<std::size_t>(bruck_rounds(p, k)));
        CHECK(verify(ss, args).ok);
        args.in_place = true;
        CHECK(verified(a, args));
        const cost_model m;
        const double vec = static_cast<double>(n * 8);
        CHECK(a.cost(args, 8, m) ==
              doctest::Approx(bruck_rounds(p, k) * m.alpha + m.beta * vec * (p - 1) + m.gamma * vec * (p - 1)));
      }
    }
  }
  for (int p : {1, 5, 9, 16}) {
    call c = make_call(collective::allreduce, p, 7, 0, datatype_of<matrix2x2>(), matrix2x2_product(),
                       {"k_bruck", {.radix = 3}});
    const check_result res = run_check(c, executor_kind::threads);
    CHECK_MESSAGE(res.verified, res.difference);
    c.args.in_place = true;
    const check_result in = run_check(c, executor_kind::sequential);
    CHECK_MESSAGE(in.verified, in.difference);
  }
}
