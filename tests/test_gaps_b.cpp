// MPICH and Open MPI algorithms ranklab lacked (helper tag "gaps_b"): allreduce
// k_reduce_scatter_allgather (MPICH's radix-k Rabenseifner), allgather(v) recexch_halving
// (MPICH's distance-halving recursive exchange), reduce binary (Open MPI's pipelined binary
// tree), allreduce tree (MPICH's pipelined k-ary tree reduce + bcast) and bcast chain_fanout
// (Open MPI's chain with fanout > 1). Round counts against the formulas (one-ported, and the
// k-port counts through the phase structure), peers against independent formulas, the
// equalities the sources imply (radix 2 = rabenseifner's rounds, p' <= k = recexch, fanout 1
// = chain), results against the sequential reference for p = 1..64 with count 0, irregular
// and large counts, in place, non-zero roots and non-commutative operators where accepted.
// See docs/algorithms.md.
#include <doctest/doctest.h>

#include <algorithm>
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

coll_args args_of(collective c, int p, std::uint64_t count, int radix = 0, std::uint64_t segment = 0, int root = 0) {
  coll_args a;
  a.coll = c;
  a.p = p;
  a.root = root;
  a.count = count;
  a.params.radix = radix;
  a.params.segment = segment;
  if (c == collective::allgatherv)
    for (int j = 0; j < p; ++j) a.counts.push_back((static_cast<std::uint64_t>(j) * 7 + 3) % 5 + count);
  return a;
}

std::string dump(const schedule_set& ss) {
  std::string s;
  for (const schedule& x : ss) s += x.describe() + "\n";
  return s;
}

// MPICH's recursive-exchange folding, written out from MPII_Recexchalgo_get_neighbors: the
// radix lowered to p (2 for p <= 2), p' the largest power of k <= p, T = rem k/(k-1), sets
// of k consecutive ranks below T, an incomplete last set sending to rank T.
struct recexch_rules {
  int k, q = 1, L = 0, rem = 0, T = 0, f = 0;
  std::vector<int> sendto;
  recexch_rules(int p, int radix) : k(radix) {
    if (p < k) k = p > 2 ? p : 2;
    while (q * k <= p) {
      q *= k;
      ++L;
    }
    rem = p - q;
    T = rem * k / (k - 1);
    std::vector<int> n(static_cast<std::size_t>(p), 0);
    for (int r = 0; r < p; ++r) {
      int to = -1;
      if (r < T && r % k != k - 1) to = std::min(r + (k - 1 - r % k), T);
      sendto.push_back(to);
      if (to >= 0) f = std::max(f, ++n[static_cast<std::size_t>(to)]);
    }
  }
  int real(int v) const {  // the v-th participant
    for (int r = 0, n = 0; r < static_cast<int>(sendto.size()); ++r)
      if (sendto[static_cast<std::size_t>(r)] < 0 && n++ == v) return r;
    return -1;
  }
  int participant(int r) const {
    for (int v = 0; v < q; ++v)
      if (real(v) == r) return v;
    return -1;
  }
  int digit(int v, int i) const {
    for (; i > 0; --i) v /= k;
    return v % k;
  }
  int with_digit(int v, int i, int d) const {
    int pw = 1;
    for (int j = 0; j < i; ++j) pw *= k;
    return v + (d - digit(v, i)) * pw;
  }
};

int ilog2_ceil(int p) {
  int l = 0;
  while ((1 << l) < p) ++l;
  return l;
}

check_result check_call(collective c, int p, std::uint64_t count, const char* name, algo_params prm, int root = 0,
                        bool in_place = false, bool matrices = false) {
  call cl = matrices ? make_call(c, p, count, root, datatype_of<matrix2x2>(), matrix2x2_product(), {name, prm})
                     : make_call(c, p, count, root, datatype_of<std::int32_t>(), ops::sum, {name, prm});
  cl.args.in_place = in_place;
  return run_check(cl, executor_kind::sequential);
}

}  // namespace

// ---- allreduce k_reduce_scatter_allgather ----------------------------------------------

TEST_CASE("k_reduce_scatter_allgather: registered, rank-ordered, any p") {
  const algorithm& a = find_algo(collective::allreduce, "k_reduce_scatter_allgather");
  CHECK_FALSE(a.needs_commutative);
  CHECK_FALSE(a.needs_power_of_two);
  CHECK_FALSE(a.fixed_order);
  CHECK(a.one_ported);
}

TEST_CASE("k_reduce_scatter_allgather: 2(k-1) log_k p' + 2f rounds one-ported; phases digit 0..L-1 then L-1..0 (2L (+2) with k-1 ports)") {
  const algorithm& al = find_algo(collective::allreduce, "k_reduce_scatter_allgather");
  for (int k : {2, 3, 4, 5, 8})
    for (int p = 1; p <= 64; ++p) {
      const recexch_rules x(p, k);
      INFO("k = " << k << ", p = " << p);
      const coll_args a = args_of(collective::allreduce, p, 11, k);
      const schedule_set ss = build_all(al, a);
      const verify_report rep = verify(ss, a);
      CHECK(rep.ok);
      CHECK(rep.rounds == static_cast<std::size_t>(2 * (x.k - 1) * x.L + 2 * x.f));
      CHECK(al.cost(a, 8, cost_model{1.0, 0.0, 0.0}) == doctest::Approx(static_cast<double>(rep.rounds)));
      // k-1 ports: the k-1 rounds of a phase are one step, the fold and the unfold one each.
      const int multiport = 2 * x.L + (x.rem > 0 ? 2 : 0);
      CHECK(multiport == 2 * x.L + (x.f > 0 ? 2 : 0));
      for (int r = 0; r < p; ++r) {
        const auto rounds = ss[static_cast<std::size_t>(r)].rounds();
        const int v = x.participant(r);
        CHECK((v >= 0) == (x.sendto[static_cast<std::size_t>(r)] < 0));
        if (v < 0) continue;  // folded-away ranks: the next test case
        for (int phase = 0; phase < 2 * x.L; ++phase) {
          const int i = phase < x.L ? phase : 2 * x.L - 1 - phase;  // digit changed in this phase
          for (int j = 1; j < x.k; ++j) {
            const ranklab::round& rd = rounds[static_cast<std::size_t>(x.f + phase * (x.k - 1) + j - 1)];
            const int d = x.digit(v, i);
            CHECK(rd.send_to == x.real(x.with_digit(v, i, (d + j) % x.k)));
            CHECK(rd.recv_from == x.real(x.with_digit(v, i, (d - j + x.k) % x.k)));
          }
        }
      }
    }
}

TEST_CASE("k_reduce_scatter_allgather: the folded-away ranks send once in the fold and receive once in the unfold") {
  for (int k : {2, 3, 4})
    for (int p : {3, 5, 6, 7, 10, 13, 15, 17, 31, 33, 63}) {
      const recexch_rules x(p, k);
      const coll_args a = args_of(collective::allreduce, p, 9, k);
      const schedule_set ss = build_all(find_algo(collective::allreduce, "k_reduce_scatter_allgather"), a);
      for (int r = 0; r < p; ++r) {
        const int to = x.sendto[static_cast<std::size_t>(r)];
        if (to < 0) continue;
        INFO("k = " << k << ", p = " << p << ", rank " << r);
        int sends = 0, recvs = 0;
        for (const ranklab::round& rd : ss[static_cast<std::size_t>(r)].rounds()) {
          if (rd.send_to != no_rank) {
            CHECK(rd.send_to == to);
            ++sends;
          }
          if (rd.recv_from != no_rank) {
            CHECK(rd.recv_from == to);
            ++recvs;
          }
        }
        CHECK(sends == 1);
        CHECK(recvs == 1);
      }
    }
}

TEST_CASE("k_reduce_scatter_allgather: radix 2 has rabenseifner's rounds, messages and cost (2 log2 p' (+2))") {
  const cost_model d{};
  for (int p = 1; p <= 64; ++p) {
    INFO("p = " << p);
    const coll_args a = args_of(collective::allreduce, p, 100, 2);
    const algorithm& mine = find_algo(collective::allreduce, "k_reduce_scatter_allgather");
    const algorithm& rab = find_algo(collective::allreduce, "rabenseifner");
    const verify_report m = verify(build_all(mine, a), a), r = verify(build_all(rab, a), a);
    CHECK(m.ok);
    CHECK(m.rounds == r.rounds);
    CHECK(m.messages == r.messages);
    const int pp = 1 << (ilog2_ceil(p + 1) - 1);  // largest power of two <= p
    CHECK(m.rounds == static_cast<std::size_t>(2 * ilog2_ceil(pp) + (pp < p ? 2 : 0)));
    CHECK(mine.cost(a, 8, d) == doctest::Approx(rab.cost(a, 8, d)));
  }
}

TEST_CASE("k_reduce_scatter_allgather: reduce-scatter phase i sends n/k^(i+1), the allgather mirrors it") {
  for (int k : {2, 3, 4}) {
    const int p = k * k * k;
    const std::uint64_t n = static_cast<std::uint64_t>(p) * 2;
    const coll_args a = args_of(collective::allreduce, p, n, k);
    const schedule_set ss = build_all(find_algo(collective::allreduce, "k_reduce_scatter_allgather"), a);
    for (int r = 0; r < p; ++r) {
      const schedule& s = ss[static_cast<std::size_t>(r)];
      for (int phase = 0; phase < 6; ++phase) {
        const int i = phase < 3 ? phase : 5 - phase;
        int pw = k;
        for (int q = 0; q < i; ++q) pw *= k;
        for (int j = 1; j < k; ++j) {
          const ranklab::round& rd = s.rounds()[static_cast<std::size_t>(phase * (k - 1) + j - 1)];
          CHECK(s.send_count(rd) == n / static_cast<std::uint64_t>(pw));
          CHECK(s.recv_count(rd) == n / static_cast<std::uint64_t>(pw));
          CHECK(s.send_regions(rd).size() == 1);  // digit-reversed blocks: one contiguous share
        }
      }
    }
  }
}

TEST_CASE("k_reduce_scatter_allgather: results against the reference, p = 1..64, counts 0, 1, 7, 1000, in place, non-commutative") {
  for (int k : {0, 2, 3, 4})
    for (int p = 1; p <= 64; ++p)
      for (std::uint64_t count : {0u, 1u, 7u, 1000u}) {
        if (count == 1000 && p % 7 != 1 && p != 64) continue;
        for (bool in_place : {false, true}) {
          INFO("k = " << k << ", p = " << p << ", count " << count << (in_place ? ", in place" : ""));
          algo_params prm;
          prm.radix = k;
          const check_result res =
              check_call(collective::allreduce, p, count, "k_reduce_scatter_allgather", prm, 0, in_place);
          CHECK(res.verified);
          CHECK(res.difference == "");
        }
      }
  for (int k : {2, 3, 5})
    for (int p : {1, 2, 3, 5, 9, 13, 16, 17, 27, 31, 64}) {
      INFO("matrix product, k = " << k << ", p = " << p);
      algo_params prm;
      prm.radix = k;
      const check_result res = check_call(collective::allreduce, p, 5, "k_reduce_scatter_allgather", prm, 0, true, true);
      CHECK(res.verified);
      CHECK(res.difference == "");
    }
}

// ---- allgather(v) recexch_halving --------------------------------------------------------

TEST_CASE("recexch_halving: (k-1) log_k p' + [L >= 2] + 2f rounds; swap with the digit-reversed participant, then digit L-1-j") {
  const algorithm& al = find_algo(collective::allgather, "recexch_halving");
  CHECK(registry::find(collective::allgatherv, "recexch_halving") != nullptr);
  for (int k : {2, 3, 4, 8})
    for (int p = 1; p <= 64; ++p) {
      const recexch_rules x(p, k);
      INFO("k = " << k << ", p = " << p);
      const int swap = x.L >= 2 ? 1 : 0;
      for (collective c : {collective::allgather, collective::allgatherv}) {
        const coll_args a = args_of(c, p, 3, k);
        const verify_report rep = verify(build_all(find_algo(c, "recexch_halving"), a), a);
        CHECK(rep.ok);
        CHECK(rep.rounds == static_cast<std::size_t>((x.k - 1) * x.L + swap + 2 * x.f));
        CHECK(find_algo(c, "recexch_halving").cost(a, 8, cost_model{1.0, 0.0, 0.0}) ==
              doctest::Approx(static_cast<double>(rep.rounds)));
      }
      // k-1 ports (MPICH): L + swap (+2 when folded)
      const coll_args a = args_of(collective::allgather, p, 3, k);
      const schedule_set ss = build_all(al, a);
      for (int r = 0; r < p; ++r) {
        const int v = x.participant(r);
        if (v < 0) continue;
        const auto rounds = ss[static_cast<std::size_t>(r)].rounds();
        int rev = 0;
        for (int i = 0; i < x.L; ++i) rev = rev * x.k + x.digit(v, i);
        if (swap) {
          const ranklab::round& rd = rounds[static_cast<std::size_t>(x.f)];
          CHECK(rd.send_to == (rev == v ? no_rank : x.real(rev)));
          CHECK(rd.recv_from == (rev == v ? no_rank : x.real(rev)));
        }
        for (int j = 0; j < x.L; ++j)
          for (int t = 1; t < x.k; ++t) {
            const int i = x.L - 1 - j, d = x.digit(v, i);
            const ranklab::round& rd = rounds[static_cast<std::size_t>(x.f + swap + j * (x.k - 1) + t - 1)];
            CHECK(rd.send_to == x.real(x.with_digit(v, i, (d + t) % x.k)));
            CHECK(rd.recv_from == x.real(x.with_digit(v, i, (d - t + x.k) % x.k)));
          }
      }
    }
}

TEST_CASE("recexch_halving: every rank receives each other block once; p' = k^j: groups of k^j blocks in step j") {
  for (int k : {2, 3, 4})
    for (int p = 1; p <= 64; ++p) {
      INFO("k = " << k << ", p = " << p);
      const std::uint64_t b = 3;
      const coll_args a = args_of(collective::allgather, p, b, k);
      const schedule_set ss = build_all(find_algo(collective::allgather, "recexch_halving"), a);
      const recexch_rules x(p, k);
      for (int r = 0; r < p; ++r) {
        const schedule& s = ss[static_cast<std::size_t>(r)];
        std::uint64_t got = 0;
        for (const ranklab::round& rd : s.rounds()) got += s.recv_count(rd);
        CHECK(got == b * static_cast<std::uint64_t>(p - 1));
        if (x.rem != 0 || x.L < 2) continue;
        const int swap = 1;
        for (int j = 0, n = 1; j < x.L; ++j, n *= x.k)
          for (int t = 1; t < x.k; ++t) {
            const ranklab::round& rd = s.rounds()[static_cast<std::size_t>(swap + j * (x.k - 1) + t - 1)];
            // the group of k^j, less the receiver's own block when it lies in it
            CHECK((s.send_count(rd) == b * static_cast<std::uint64_t>(n) ||
                   s.send_count(rd) == b * static_cast<std::uint64_t>(n - 1)));
          }
      }
    }
}

TEST_CASE("recexch_halving: p' <= k (one phase) is recexch's schedule; beyond, it is not") {
  for (int k : {2, 3, 4, 8})
    for (int p = 1; p <= 64; ++p) {
      const recexch_rules x(p, k);
      INFO("k = " << k << ", p = " << p);
      const coll_args a = args_of(collective::allgather, p, 2, k);
      const std::string h = dump(build_all(find_algo(collective::allgather, "recexch_halving"), a));
      const std::string d = dump(build_all(find_algo(collective::allgather, "recexch"), a));
      if (x.L <= 1)
        CHECK(h == d);
      else
        CHECK(h != d);
    }
}

TEST_CASE("recexch_halving: results against the reference, allgather and irregular allgatherv, p = 1..64") {
  for (int k : {0, 2, 3, 5})
    for (int p = 1; p <= 64; ++p) {
      algo_params prm;
      prm.radix = k;
      for (std::uint64_t count : {0u, 1u, 5u}) {
        INFO("k = " << k << ", p = " << p << ", count " << count);
        const check_result res = check_call(collective::allgather, p, count, "recexch_halving", prm);
        CHECK(res.verified);
        CHECK(res.difference == "");
      }
      std::vector<std::uint64_t> counts, displs;
      std::uint64_t at = 0;
      for (int j = 0; j < p; ++j) counts.push_back(static_cast<std::uint64_t>((j * 5 + 2) % 4));
      for (int j = p - 1; j >= 0; --j) {  // blocks in reverse order, with gaps
        displs.insert(displs.begin(), at);
        at += counts[static_cast<std::size_t>(j)] + 1;
      }
      INFO("allgatherv, k = " << k << ", p = " << p);
      const call cl = make_vcall(collective::allgatherv, p, counts, displs, 0, datatype_of<std::int32_t>(), ops::sum,
                                 {"recexch_halving", prm});
      const check_result res = run_check(cl, executor_kind::sequential);
      CHECK(res.verified);
      CHECK(res.difference == "");
    }
}

// ---- reduce binary -----------------------------------------------------------------------

// Rounds of one segment down Open MPI's level-order binary tree, one-ported: the largest sum
// along a root path of 1 + child index (children v + 2^l, v + 2^(l+1) at level l).
int bintree_depth_rounds(int p) {
  std::vector<int> at(static_cast<std::size_t>(p), 0);
  int best = 0;
  for (int v = 0; v < p; ++v) {
    int l = 0;
    while ((2 << l) - 1 <= v) ++l;  // level of v: [2^l - 1, 2^(l+1) - 1)
    for (int c = 0; c < 2; ++c) {
      const long long ch = v + (1LL << l) * (c + 1);
      if (ch < p) {
        at[static_cast<std::size_t>(ch)] = at[static_cast<std::size_t>(v)] + 1 + c;
        best = std::max(best, at[static_cast<std::size_t>(ch)]);
      }
    }
  }
  return best;
}

TEST_CASE("reduce binary: commutative only; the rounds of bcast pipelined_binary_tree, D + 2(S-1) (p >= 3), S at p = 2") {
  const algorithm& al = find_algo(collective::reduce, "binary");
  CHECK(al.needs_commutative);
  const algorithm& bc = find_algo(collective::bcast, "pipelined_binary_tree");
  for (int p = 1; p <= 64; ++p)
    for (std::uint64_t seg : {1u, 4u, 10u, 100u}) {
      const std::uint64_t count = 40;
      const std::int64_t S = static_cast<std::int64_t>((count + seg - 1) / seg);
      INFO("p = " << p << ", segment " << seg);
      const coll_args a = args_of(collective::reduce, p, count, 0, seg, p / 3);
      const verify_report rep = verify(build_all(al, a), a);
      CHECK(rep.ok);
      coll_args b = a;
      b.coll = collective::bcast;
      CHECK(rep.rounds == verify(build_all(bc, b), b).rounds);
      const std::int64_t expect = p == 1 ? 0 : p == 2 ? S : bintree_depth_rounds(p) + 2 * (S - 1);
      CHECK(rep.rounds == static_cast<std::size_t>(expect));
      CHECK(al.cost(a, 8, cost_model{1.0, 0.0, 0.0}) == doctest::Approx(static_cast<double>(expect)));
    }
}

TEST_CASE("reduce binary: each rank sends every segment to its parent once, after both children's partials") {
  const int p = 23, root = 5;
  const std::uint64_t count = 30, seg = 4;
  const coll_args a = args_of(collective::reduce, p, count, 0, seg, root);
  const schedule_set ss = build_all(find_algo(collective::reduce, "binary"), a);
  for (int r = 0; r < p; ++r) {
    const int v = (r - root + p) % p;
    int l = 0;
    while ((2 << l) - 1 <= v) ++l;
    std::vector<int> kids;
    for (int c = 0; c < 2; ++c)
      if (v + (1 << l) * (c + 1) < p) kids.push_back((v + (1 << l) * (c + 1) + root) % p);
    const schedule& s = ss[static_cast<std::size_t>(r)];
    std::vector<int> seen(8, 0);  // per segment: partials received so far
    int sent = 0;
    for (const ranklab::round& rd : s.rounds()) {
      if (rd.recv_from != no_rank) {
        CHECK(std::find(kids.begin(), kids.end(), rd.recv_from) != kids.end());
        CHECK(rd.recv_how != combine::copy);
        ++seen[s.recv_regions(rd)[0].offset / seg];
      }
      if (rd.send_to != no_rank) {
        CHECK(v != 0);
        CHECK(seen[s.send_regions(rd)[0].offset / seg] == static_cast<int>(kids.size()));
        ++sent;
      }
    }
    CHECK(sent == (v == 0 ? 0 : 8));
  }
}

TEST_CASE("reduce binary: results against the reference, p = 1..64, every kind of root, count 0, several segments") {
  for (int p = 1; p <= 64; ++p)
    for (int root : {0, p / 2, p - 1})
      for (auto [count, seg] : {std::pair<std::uint64_t, std::uint64_t>{0, 0}, {1, 0}, {13, 0}, {13, 3}, {1000, 64},
                                {5000, 0}}) {
        if (count >= 1000 && p % 5 != 3) continue;
        INFO("p = " << p << ", root " << root << ", count " << count << ", segment " << seg);
        algo_params prm;
        prm.segment = seg;
        const check_result res = check_call(collective::reduce, p, count, "binary", prm, root);
        CHECK(res.verified);
        CHECK(res.difference == "");
      }
}

// ---- allreduce tree ------------------------------------------------------------------------

TEST_CASE("allreduce tree: commutative only; 2R rounds, R = bcast kary's; D + k(S-1) for full k-ary trees") {
  const algorithm& al = find_algo(collective::allreduce, "tree");
  CHECK(al.needs_commutative);
  const algorithm& kary = find_algo(collective::bcast, "kary");
  for (int k : {2, 3, 4})
    for (int p = 1; p <= 64; ++p)
      for (std::uint64_t seg : {2u, 5u, 50u}) {
        INFO("k = " << k << ", p = " << p << ", segment " << seg);
        const std::uint64_t count = 50;
        const coll_args a = args_of(collective::allreduce, p, count, k, seg);
        const verify_report rep = verify(build_all(al, a), a);
        CHECK(rep.ok);
        coll_args b = args_of(collective::bcast, p, count, k, seg);
        const std::size_t R = verify(build_all(kary, b), b).rounds;
        CHECK(rep.rounds == 2 * R);
        CHECK(al.cost(a, 8, cost_model{0.5, 0.0, 0.0}) == doctest::Approx(static_cast<double>(R)));
        // full trees: p = 1 + k + k^2 + ... ; D = sum over the path of the child positions
        int full = 1, width = 1, depth = 0;
        while (full < p && k > 1) {
          width *= k;
          full += width;
          ++depth;
        }
        if (k > 1 && full == p && p > 1) {
          const std::int64_t S = static_cast<std::int64_t>((count + seg - 1) / seg);
          CHECK(R == static_cast<std::size_t>(depth * k + k * (S - 1)));
        }
      }
}

TEST_CASE("allreduce tree: the first half receives from children only and sends to the parent only, the second the reverse") {
  for (int k : {2, 3})
    for (int p : {7, 13, 40}) {
      const coll_args a = args_of(collective::allreduce, p, 24, k, 4);
      const schedule_set ss = build_all(find_algo(collective::allreduce, "tree"), a);
      const std::size_t R = verify(ss, a).rounds / 2;
      for (int v = 0; v < p; ++v) {
        const int parent = v == 0 ? no_rank : (v - 1) / k;
        const auto rounds = ss[static_cast<std::size_t>(v)].rounds();
        for (std::size_t t = 0; t < rounds.size(); ++t) {
          const ranklab::round& rd = rounds[t];
          const bool up = t < R;
          if (rd.send_to != no_rank) CHECK((up ? rd.send_to == parent : (rd.send_to - 1) / k == v));
          if (rd.recv_from != no_rank) CHECK((up ? (rd.recv_from - 1) / k == v : rd.recv_from == parent));
          if (rd.recv_from != no_rank) CHECK((up ? rd.recv_how != combine::copy : rd.recv_how == combine::copy));
        }
      }
    }
}

TEST_CASE("allreduce tree: results against the reference, p = 1..64, count 0, several segments, in place") {
  for (int k : {0, 2, 3})
    for (int p = 1; p <= 64; ++p)
      for (auto [count, seg] : {std::pair<std::uint64_t, std::uint64_t>{0, 0}, {1, 0}, {17, 4}, {2000, 0}, {3000, 128}})
        for (bool in_place : {false, true}) {
          if (count >= 2000 && p % 6 != 1) continue;
          INFO("k = " << k << ", p = " << p << ", count " << count << ", segment " << seg << (in_place ? ", in place" : ""));
          algo_params prm;
          prm.radix = k;
          prm.segment = seg;
          const check_result res = check_call(collective::allreduce, p, count, "tree", prm, 0, in_place);
          CHECK(res.verified);
          CHECK(res.difference == "");
        }
}

// ---- bcast chain_fanout ------------------------------------------------------------------

TEST_CASE("bcast chain: the existing algorithm takes no fanout (one chain), so chain_fanout is a new schedule") {
  for (int p : {6, 13, 33}) {
    const coll_args a = args_of(collective::bcast, p, 40, 3, 4);
    coll_args b = a;
    b.params.radix = 0;
    // bcast chain ignores the radix: the same schedule with and without it
    CHECK(dump(build_all(find_algo(collective::bcast, "chain"), a)) == dump(build_all(find_algo(collective::bcast, "chain"), b)));
    CHECK(dump(build_all(find_algo(collective::bcast, "chain_fanout"), a)) !=
          dump(build_all(find_algo(collective::bcast, "chain"), a)));
  }
}

TEST_CASE("chain_fanout: Open MPI's chains; root sends segment i to head c in round iF + c; rounds F(S-1) + max_c(c + len_c)") {
  const algorithm& al = find_algo(collective::bcast, "chain_fanout");
  for (int F : {0, 2, 3, 4, 7})
    for (int p = 1; p <= 64; ++p)
      for (std::uint64_t seg : {3u, 30u}) {
        const int f = std::min(F == 0 ? 4 : F, std::max(p - 1, 1));
        const std::uint64_t count = 30;
        const int S = static_cast<int>((count + seg - 1) / seg);
        const int root = p / 3;
        INFO("F = " << F << ", p = " << p << ", segment " << seg);
        const coll_args a = args_of(collective::bcast, p, count, F, seg, root);
        const schedule_set ss = build_all(al, a);
        const verify_report rep = verify(ss, a);
        CHECK(rep.ok);
        // Open MPI: ceil((p-1)/F) ranks in the first (p-1) mod F chains, one less in the others
        std::vector<int> len(static_cast<std::size_t>(f), (p - 1) / f);
        for (int c = 0; c < (p - 1) % f; ++c) ++len[static_cast<std::size_t>(c)];
        int expect = 0, head = 1;
        std::vector<int> heads;
        for (int c = 0; c < f && p > 1; ++c) {
          expect = std::max(expect, f * (S - 1) + c + len[static_cast<std::size_t>(c)]);
          heads.push_back(head);
          head += len[static_cast<std::size_t>(c)];
        }
        CHECK(rep.rounds == static_cast<std::size_t>(expect));
        CHECK(al.cost(a, 8, cost_model{1.0, 0.0, 0.0}) == doctest::Approx(static_cast<double>(expect)));
        if (p == 1) continue;
        const auto rounds = ss[static_cast<std::size_t>(root)].rounds();
        for (int i = 0; i < S; ++i)
          for (int c = 0; c < f; ++c)
            CHECK(rounds[static_cast<std::size_t>(i * f + c)].send_to == (heads[static_cast<std::size_t>(c)] + root) % p);
        // a chain rank receives from the previous one (the head from the root)
        for (int c = 0; c < f; ++c)
          for (int d = 0; d < len[static_cast<std::size_t>(c)]; ++d) {
            const int v = heads[static_cast<std::size_t>(c)] + d;
            const auto rr = ss[static_cast<std::size_t>((v + root) % p)].rounds();
            const ranklab::round& first = rr[static_cast<std::size_t>(c + d)];
            CHECK(first.recv_from == (d == 0 ? root : (v - 1 + root) % p));
          }
      }
}

TEST_CASE("chain_fanout: one chain (p = 2, fanout lowered to p-1 = 1) is bcast chain; fanout p-1 the segmented flat tree") {
  // A radix of 1 is refused for every algorithm (validate), so fanout 1 (Open MPI's
  // "pipeline") is ranklab's bcast chain by name; chain_fanout reaches it only at p = 2.
  for (std::uint64_t seg : {1u, 7u, 100u}) {
    const coll_args a = args_of(collective::bcast, 2, 50, 3, seg, 1);
    CHECK(dump(build_all(find_algo(collective::bcast, "chain_fanout"), a)) ==
          dump(build_all(find_algo(collective::bcast, "chain"), a)));
  }
  for (int p = 3; p <= 40; ++p)
    for (std::uint64_t seg : {1u, 7u, 100u}) {
      INFO("p = " << p << ", segment " << seg);
      const coll_args f = args_of(collective::bcast, p, 50, p - 1, seg, p / 2);
      const std::size_t S = (50 + seg - 1) / seg;
      const schedule_set ss = build_all(find_algo(collective::bcast, "chain_fanout"), f);
      CHECK(verify(ss, f).rounds == S * static_cast<std::size_t>(p - 1));
      for (int r = 0; r < p; ++r)  // every rank hears from the root only, and only the root sends
        for (const ranklab::round& rd : ss[static_cast<std::size_t>(r)].rounds()) {
          if (rd.recv_from != no_rank) CHECK(rd.recv_from == p / 2);
          if (rd.send_to != no_rank) CHECK(r == p / 2);
        }
    }
}

TEST_CASE("chain_fanout: results against the reference, p = 1..64, roots, count 0, several segments") {
  for (int F : {0, 2, 5})
    for (int p = 1; p <= 64; ++p)
      for (int root : {0, p - 1, p / 3})
        for (auto [count, seg] : {std::pair<std::uint64_t, std::uint64_t>{0, 0}, {1, 0}, {23, 4}, {20000, 0}}) {
          if (count == 20000 && p % 9 != 2) continue;
          INFO("F = " << F << ", p = " << p << ", root " << root << ", count " << count);
          algo_params prm;
          prm.radix = F;
          prm.segment = seg;
          const check_result res = check_call(collective::bcast, p, count, "chain_fanout", prm, root);
          CHECK(res.verified);
          CHECK(res.difference == "");
        }
}
