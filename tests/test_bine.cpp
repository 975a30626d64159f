// Bine trees and butterflies (D. De Sensi et al., "Bine Trees: Enhancing Collective
// Operations by Optimizing Communication Locality", SC 2025, arXiv 2508.17311): the eight
// algorithms named "bine". Written here independently of patterns/bine.hpp: rho(t), the
// s-bit negabinary pattern of a residue (by search), the tree peers (flip the low s-i bits)
// and receive steps, the butterfly peers r +- rho(k). Checked: the trees span the p ranks
// with depth ceil(log2 p), every tree edge is of modular length |rho(t)| for p a power of two
// (the paper's point), the total edge length against binomial trees (values worked out by
// hand), subtrees contiguous mod p, reduce / gather use the broadcast's tree backwards, the
// butterfly's rounds (2 log2 p for allreduce) and one contiguous region per allreduce
// message where Swing's are strided, results against the sequential reference for p = 1..64
// with non-zero roots, count 0, in place, and the verifier's sweep.
// See docs/algorithms.md.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "patterns/bine.hpp"
#include "patterns/swing.hpp"
#include "ranklab/call.hpp"
#include "ranklab/check.hpp"
#include "ranklab/executor.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/semantics.hpp"

using namespace ranklab;

namespace {

// rho(t) = sum_{i<=t} (-2)^i = 1, -1, 3, -5, 11, -21, ...
std::int64_t rho(int t) {
  std::int64_t sum = 0, pw = 1;
  for (int i = 0; i <= t; ++i) {
    sum += pw;
    pw *= -2;
  }
  return sum;
}

std::int64_t nb_value(std::uint32_t bits) {
  std::int64_t v = 0, pw = 1;
  for (int i = 0; i < 31; ++i, pw *= -2)
    if (bits & (1u << i)) v += pw;
  return v;
}

int md(std::int64_t a, int p) { return static_cast<int>(((a % p) + p) % p); }

// The s-bit pattern whose value is v mod 2^s, by search.
std::uint32_t nb_of(int v, int s) {
  const int q = 1 << s;
  for (std::uint32_t b = 0; b < static_cast<std::uint32_t>(q); ++b)
    if (md(nb_value(b), q) == md(v, q)) return b;
  FAIL("no pattern");
  return 0;
}

int log2_ceil(int p) {
  int l = 0;
  while ((1 << l) < p) ++l;
  return l;
}
bool pow2(int p) { return (p & (p - 1)) == 0; }

// The paper's tree on q = 2^s ranks: receive step and step-i peer of relative rank v.
int expected_recv_step(int v, int s) {
  if (v == 0) return -1;
  const std::uint32_t x = nb_of(v, s);
  for (int i = 0; i < s; ++i) {
    const std::uint32_t m = (1u << (s - i)) - 1;
    if ((x & m) == 0 || (x & m) == m) return i;
  }
  return s;
}
int expected_tree_peer(int v, int i, int s) { return md(nb_value(nb_of(v, s) ^ ((1u << (s - i)) - 1)), 1 << s); }
int butterfly_peer(int r, int k, int p) { return md(r % 2 == 0 ? r + rho(k) : r - rho(k), p); }

int mod_distance(int a, int b, int p) {
  const int d = md(a - b, p);
  return std::min(d, p - d);
}

const algorithm& bine(collective c) {
  const algorithm* a = registry::find(c, "bine");
  REQUIRE(a != nullptr);
  return *a;
}

coll_args args_of(collective c, int p, std::uint64_t count, int root = 0) {
  coll_args a;
  a.coll = c;
  a.p = p;
  a.count = count;
  a.root = root;
  if (c == collective::reduce_scatter || c == collective::allgatherv || c == collective::gatherv ||
      c == collective::scatterv)
    for (int j = 0; j < p; ++j) a.counts.push_back(count + static_cast<std::uint64_t>(j % 3));
  return a;
}

std::size_t rounds_of(const schedule_set& ss) {
  std::size_t n = 0;
  for (const schedule& s : ss) n = std::max(n, s.communication_rounds());
  return n;
}

// parent[r] = the rank r receives from (bcast, scatter) or sends to (reduce, gather), once;
// -1 for the root; the round of that message in at[r].
struct tree_seen {
  std::vector<int> parent, at;
};
tree_seen tree_of(const schedule_set& ss, bool downward) {
  const int p = static_cast<int>(ss.size());
  tree_seen t{std::vector<int>(static_cast<std::size_t>(p), -1), std::vector<int>(static_cast<std::size_t>(p), -1)};
  for (int r = 0; r < p; ++r) {
    const auto rounds = ss[static_cast<std::size_t>(r)].rounds();
    for (std::size_t i = 0; i < rounds.size(); ++i) {
      const int up = downward ? rounds[i].recv_from : rounds[i].send_to;
      if (up == no_rank) continue;
      CHECK(t.parent[static_cast<std::size_t>(r)] == -1);  // one parent
      t.parent[static_cast<std::size_t>(r)] = up;
      t.at[static_cast<std::size_t>(r)] = static_cast<int>(i);
    }
  }
  return t;
}

// Every rank reaches the root through parents, in rounds that grow towards the leaves
// (downward) or towards the root; returns the depth.
int check_spanning(const tree_seen& t, int root, bool downward) {
  const int p = static_cast<int>(t.parent.size());
  CHECK(t.parent[static_cast<std::size_t>(root)] == -1);
  int depth = 0;
  for (int r = 0; r < p; ++r) {
    int x = r, d = 0;
    while (x != root && d <= p) {
      const int up = t.parent[static_cast<std::size_t>(x)];
      REQUIRE(up >= 0);
      if (up != root) {
        if (downward)
          CHECK(t.at[static_cast<std::size_t>(up)] < t.at[static_cast<std::size_t>(x)]);
        else
          CHECK(t.at[static_cast<std::size_t>(up)] > t.at[static_cast<std::size_t>(x)]);
      }
      x = up;
      ++d;
    }
    REQUIRE(x == root);
    depth = std::max(depth, d);
  }
  return depth;
}

const std::vector<collective> all_colls = {collective::bcast,
                                           collective::reduce,
                                           collective::allreduce,
                                           collective::allgather,
                                           collective::allgatherv,
                                           collective::reduce_scatter,
                                           collective::reduce_scatter_block,
                                           collective::gather,
                                           collective::gatherv,
                                           collective::scatter,
                                           collective::scatterv,
                                           collective::alltoall};

}  // namespace

TEST_CASE("bine: rho and negabinary written out: 1, -1, 3, -5, 11; patterns of residues") {
  CHECK(rho(0) == 1);
  CHECK(rho(1) == -1);
  CHECK(rho(2) == 3);
  CHECK(rho(3) == -5);
  CHECK(rho(4) == 11);
  // all-ones patterns are rho(s-1); 3 bits: 0..7 as negabinary residues mod 8
  CHECK(nb_value(0b111) == rho(2));
  CHECK(nb_of(3, 3) == 0b111);
  CHECK(nb_of(6, 3) == 0b010);  // -2 = 6 mod 8
}

TEST_CASE("bine: registered for the eight collectives and their v-forms; reductions commutative only") {
  for (collective c : all_colls) {
    INFO(name(c));
    const algorithm& a = bine(c);
    CHECK(a.one_ported);
    CHECK_FALSE(a.needs_power_of_two);
    CHECK(a.needs_commutative == is_reduction(c));
  }
}

TEST_CASE("bine bcast / scatter: spanning trees of depth ceil(log2 p); peers and receive steps of the paper") {
  for (collective c : {collective::bcast, collective::scatter}) {
    for (int p = 1; p <= 64; ++p)
      for (int root : {0, p / 2, p - 1, (3 * p) / 5}) {
        INFO(name(c) << " p = " << p << ", root = " << root);
        const schedule_set ss = build_all(bine(c), args_of(c, p, 2, root));
        CHECK(rounds_of(ss) == static_cast<std::size_t>(log2_ceil(p)));
        const tree_seen t = tree_of(ss, /*downward=*/true);
        CHECK(check_spanning(t, root, true) <= log2_ceil(p));
        if (!pow2(p)) continue;
        const int s = log2_ceil(p);
        for (int r = 0; r < p; ++r) {
          const int v = md(r - root, p);
          const int got = expected_recv_step(v, s);
          const auto rounds = ss[static_cast<std::size_t>(r)].rounds();
          for (int i = 0; i < s; ++i) {
            const int peer = md(expected_tree_peer(v, i, s) + root, p);
            const bool has = static_cast<std::size_t>(i) < rounds.size();
            if (i == got) {
              REQUIRE(has);
              CHECK(rounds[static_cast<std::size_t>(i)].recv_from == peer);
            }
            if (i > got) {
              REQUIRE(has);
              CHECK(rounds[static_cast<std::size_t>(i)].send_to == peer);
            }
            if (i < got && has) CHECK_FALSE(rounds[static_cast<std::size_t>(i)].communicates());
          }
        }
      }
  }
}

TEST_CASE("bine trees: every edge has modular length |rho(t)|; step i of the broadcast is |rho(s-1-i)|") {
  std::set<std::int64_t> lengths;
  for (int t = 0; t < 12; ++t) lengths.insert(std::llabs(rho(t)));
  for (int p = 2; p <= 1024; p *= 2)
    for (int root : {0, 1, p / 2 + 1, p - 1}) {
      INFO("p = " << p << ", root = " << root);
      const int s = log2_ceil(p);
      const schedule_set ss = build_all(bine(collective::bcast), args_of(collective::bcast, p, 1, root % p));
      const tree_seen t = tree_of(ss, true);
      for (int r = 0; r < p; ++r) {
        if (r == root % p) continue;
        const int d = mod_distance(r, t.parent[static_cast<std::size_t>(r)], p);
        CHECK(lengths.count(d) == 1);
        CHECK(d == mod_distance(0, static_cast<int>(rho(s - 1 - t.at[static_cast<std::size_t>(r)])), p));
      }
    }
}

TEST_CASE("bine trees: total edge length sum_i 2^i |rho(s-1-i)|, shorter than the binomial tree's") {
  // Worked out by hand: p = 8: bine 1*3 + 2*1 + 4*1 = 9, binomial 1 + 2*2 + 4*4 = 21;
  // p = 16: bine 5 + 2*3 + 4*1 + 8*1 = 23, binomial 1 + 4 + 16 + 64 = 85.
  auto total = [](const char* algo, int p) {
    const schedule_set ss = build_all(*registry::find(collective::bcast, algo), args_of(collective::bcast, p, 1));
    const tree_seen t = tree_of(ss, true);
    long sum = 0;
    for (int r = 1; r < p; ++r) sum += mod_distance(r, t.parent[static_cast<std::size_t>(r)], p);
    return sum;
  };
  CHECK(total("bine", 8) == 9);
  CHECK(total("binomial", 8) == 21);
  CHECK(total("bine", 16) == 23);
  CHECK(total("binomial", 16) == 85);
  for (int p = 4; p <= 512; p *= 2) {
    const int s = log2_ceil(p);
    long expect = 0;
    for (int i = 0; i < s; ++i) expect += (1L << i) * mod_distance(0, static_cast<int>(rho(s - 1 - i)), p);
    CHECK(total("bine", p) == expect);
    CHECK(total("bine", p) < total("binomial", p));
  }
}

TEST_CASE("bine reduce / gather: the broadcast's tree backwards, depth ceil(log2 p); subtrees contiguous mod p") {
  for (int p = 1; p <= 64; ++p)
    for (int root : {0, p / 2, p - 1, (3 * p) / 5}) {
      INFO("p = " << p << ", root = " << root);
      const tree_seen down = tree_of(build_all(bine(collective::bcast), args_of(collective::bcast, p, 2, root)), true);
      for (collective c : {collective::reduce, collective::gather}) {
        const schedule_set ss = build_all(bine(c), args_of(c, p, 2, root));
        CHECK(rounds_of(ss) == static_cast<std::size_t>(log2_ceil(p)));
        const tree_seen up = tree_of(ss, false);
        CHECK(up.parent == down.parent);
        check_spanning(up, root, false);
      }
      // gather: a rank's message holds its subtree's blocks (2 elements each), and for p a
      // power of two the subtree is a contiguous range of ranks mod p
      const schedule_set g = build_all(bine(collective::gather), args_of(collective::gather, p, 2, root));
      std::vector<std::vector<int>> children(static_cast<std::size_t>(p));
      for (int r = 0; r < p; ++r)
        if (down.parent[static_cast<std::size_t>(r)] >= 0)
          children[static_cast<std::size_t>(down.parent[static_cast<std::size_t>(r)])].push_back(r);
      for (int r = 0; r < p; ++r) {
        if (r == root) continue;
        std::vector<int> sub{r};
        for (std::size_t i = 0; i < sub.size(); ++i)
          for (int ch : children[static_cast<std::size_t>(sub[i])]) sub.push_back(ch);
        const schedule& s = g[static_cast<std::size_t>(r)];
        std::uint64_t sent = 0;
        for (const auto& rd : s.rounds()) sent += s.send_count(rd);
        CHECK(sent == 2 * sub.size());
        if (!pow2(p)) continue;
        const std::set<int> in(sub.begin(), sub.end());
        bool contiguous = false;
        for (int a : in) {
          bool ok = true;
          for (std::size_t j = 0; j < in.size() && ok; ++j) ok = in.count(md(a + static_cast<int>(j), p)) == 1;
          contiguous = contiguous || ok;
        }
        CHECK(contiguous);
      }
    }
}

TEST_CASE(
    "bine allreduce: 2 log2 p rounds (2 log2 p' + 2 folded), peers r +- rho(k), one contiguous region a message") {
  for (int p = 1; p <= 64; ++p) {
    INFO("p = " << p);
    const int q = 1 << (p == 1 ? 0 : 31 - __builtin_clz(static_cast<unsigned>(p)));
    const int L = log2_ceil(q);
    const std::uint64_t n = 4 * static_cast<std::uint64_t>(q);
    const schedule_set ss = build_all(bine(collective::allreduce), args_of(collective::allreduce, p, n));
    CHECK(rounds_of(ss) == static_cast<std::size_t>(2 * L + (pow2(p) ? 0 : 2)));
    if (!pow2(p)) continue;
    const schedule_set sw =
        build_all(*registry::find(collective::allreduce, "swing_bandwidth"), args_of(collective::allreduce, p, n));
    bool swing_strided = false;
    for (int r = 0; r < p; ++r) {
      const schedule& s = ss[static_cast<std::size_t>(r)];
      const schedule& w = sw[static_cast<std::size_t>(r)];
      for (int i = 0; i < 2 * L; ++i) {
        const int k = i < L ? i : 2 * L - 1 - i;
        const auto& rd = s.rounds()[static_cast<std::size_t>(i)];
        CHECK(rd.send_to == butterfly_peer(r, k, p));
        CHECK(rd.recv_from == butterfly_peer(r, k, p));
        CHECK(rd.send_to == w.rounds()[static_cast<std::size_t>(i)].send_to);  // Swing's peers
        CHECK(s.send_count(rd) == n >> (k + 1));                               // half of what is held
        CHECK(s.send_regions(rd).size() == 1);                                 // contiguous
        CHECK(s.recv_regions(rd).size() == 1);
        swing_strided = swing_strided || w.send_regions(w.rounds()[static_cast<std::size_t>(i)]).size() > 1;
      }
    }
    if (p >= 8) CHECK(swing_strided);
  }
}

TEST_CASE("bine butterfly: nu is a bijection; the labels kept after step k are Swing's owned ranks B(r, k+1)") {
  for (int q = 1; q <= 1024; q *= 2) {
    INFO("q = " << q);
    const int s = log2_ceil(q);
    std::set<std::uint32_t> labels;
    for (int r = 0; r < q; ++r) labels.insert(detail::bine_nu(r, s));
    CHECK(labels.size() == static_cast<std::size_t>(q));
    CHECK(*labels.rbegin() == static_cast<std::uint32_t>(q - 1));
    for (int r = 0; r < q; ++r)
      for (int k = 0; k < s; ++k) {
        const std::vector<int> a = detail::bine_ranks_of(detail::bine_kept(r, k, s), q);
        const std::vector<int> b = detail::swing_owned(r, k + 1, q);
        CHECK(std::set<int>(a.begin(), a.end()) == std::set<int>(b.begin(), b.end()));
        CHECK(detail::bine_butterfly_consistent(r, k, q));
      }
  }
}

TEST_CASE("bine reduce_scatter, allgather, alltoall: butterfly rounds and peers; distance doubling and halving") {
  for (int p = 1; p <= 64; ++p) {
    INFO("p = " << p);
    const int q = 1 << (p == 1 ? 0 : 31 - __builtin_clz(static_cast<unsigned>(p)));
    const int L = log2_ceil(q), extra = pow2(p) ? 0 : 2;
    const schedule_set rs =
        build_all(bine(collective::reduce_scatter_block), args_of(collective::reduce_scatter_block, p, 3));
    const schedule_set ag = build_all(bine(collective::allgather), args_of(collective::allgather, p, 3));
    const schedule_set at = build_all(bine(collective::alltoall), args_of(collective::alltoall, p, 3));
    CHECK(rounds_of(rs) == static_cast<std::size_t>(L + extra));
    CHECK(rounds_of(ag) == static_cast<std::size_t>(L + extra));
    CHECK(rounds_of(at) == static_cast<std::size_t>(L + extra));
    if (!pow2(p)) continue;
    for (int r = 0; r < p; ++r)
      for (int k = 0; k < L; ++k) {
        const schedule& a = rs[static_cast<std::size_t>(r)];
        const schedule& b = ag[static_cast<std::size_t>(r)];
        const schedule& c = at[static_cast<std::size_t>(r)];
        const auto& ra = a.rounds()[static_cast<std::size_t>(k)];
        const auto& rb = b.rounds()[static_cast<std::size_t>(L - 1 - k)];
        const auto& rc = c.rounds()[static_cast<std::size_t>(k)];
        CHECK(ra.send_to == butterfly_peer(r, k, p));
        CHECK(rb.send_to == butterfly_peer(r, k, p));
        CHECK(rc.send_to == butterfly_peer(r, k, p));
        CHECK(a.send_count(ra) == 3u * static_cast<std::uint64_t>(p >> (k + 1)));  // blocks of half the ranks held
        CHECK(b.send_count(rb) == 3u * static_cast<std::uint64_t>(p >> (k + 1)));
        CHECK(c.send_count(rc) == 3u * static_cast<std::uint64_t>(p / 2));  // p/2 blocks every step
      }
  }
}

TEST_CASE("bine: results against the sequential reference, p = 1..64, non-zero roots, count 0, in place") {
  for (collective c : all_colls)
    for (int p = 1; p <= 64; ++p)
      for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{5}}) {
        std::vector<int> roots{p - 1};
        if (is_rooted(c)) roots = {p / 2, p - 1, (2 * p) / 3};
        for (int root : roots) {
          INFO(name(c) << " p = " << p << ", count = " << count << ", root = " << root);
          call cl;
          if (has_vector_counts(c)) {
            std::vector<std::uint64_t> counts;
            for (int j = 0; j < p; ++j) counts.push_back(count == 0 ? 0 : count + static_cast<std::uint64_t>(j % 3));
            cl = make_vcall(c, p, counts, {}, root, datatype_of<std::int32_t>(), ops::sum, {"bine"});
          } else {
            cl = make_call(c, p, count, root, datatype_of<std::int32_t>(), ops::sum, {"bine"});
          }
          for (bool in_place : {false, true}) {
            if (in_place && c != collective::allreduce) continue;
            cl.args.in_place = in_place;
            const check_result res = run_check(cl, executor_kind::sequential);
            CHECK(res.verified);
            CHECK(res.difference == "");
            REQUIRE(res.algo != nullptr);
            CHECK(res.algo->name == "bine");
          }
        }
      }
}

TEST_CASE("bine: the verifier's sweep (roots 0, p/2, p-1; counts 0, 1, uneven; in place) for p = 1..64") {
  verify_sweep sw;
  sw.every_root = false;
  for (collective c : all_colls)
    for (int p = 1; p <= 64; ++p) {
      INFO(name(c) << " p = " << p);
      const verify_summary v = verify_algorithm(bine(c), p, sw);
      CHECK(v.ok());
    }
}

TEST_CASE("bine: the cost functions count the schedules' rounds (alpha = 1, beta = gamma = 0)") {
  cost_model m;
  m.alpha = 1;
  m.beta = m.gamma = 0;
  for (collective c : all_colls)
    for (int p : {1, 2, 3, 5, 8, 12, 16, 31, 33, 64}) {
      INFO(name(c) << " p = " << p);
      const coll_args a = args_of(c, p, 4, p - 1);
      const algorithm& al = bine(c);
      CHECK(al.cost(a, 4, m) == doctest::Approx(static_cast<double>(rounds_of(build_all(al, a)))));
    }
}
