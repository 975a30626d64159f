// Tree algorithms of Open MPI coll/base: bcast pipelined_binary_tree (the round count
// D + 2(S - 1) from an independent closed form of D, every rank receiving each segment once
// from its Open MPI parent, the cost function against the schedule's rounds, results against
// the sequential reference at awkward p and non-zero roots); bcast split_binary_tree (phase 1
// as pipelined_binary_tree's rounds, one exchange round, each rank's half from its parent
// and the other half from its partner in the other subtree); reduce inorder_binary (the peers
// of Open MPI's in-order binary tree as its builder computes them, the rounds of the one-ported
// greedy receive order, the non-commutative matrix product against the rank-order fold);
// gather linear_sync (2p - 1 rounds: a zero-byte go, the first segment, the rest, per rank in
// rank order; the cost; results against the reference).
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <set>
#include <vector>

#include "collective_checks.hpp"
#include "ranklab/check.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/semantics.hpp"

using namespace ranklab;
using ranklab::testing::expect_verified;

namespace {

const algorithm& find_algo(collective c, const char* name) {
  const algorithm* a = registry::find(c, name);
  REQUIRE(a != nullptr);
  return *a;
}

coll_args bcast_args(int p, std::uint64_t count, int root, std::uint64_t segment) {
  coll_args a;
  a.coll = collective::bcast;
  a.p = p;
  a.count = count;
  a.root = root;
  a.params.segment = segment;
  return a;
}

// Open MPI's parent in ompi_coll_base_topo_build_tree (fanout 2), written as the source
// computes it: level by summing powers of two, then step back by half the level's width.
int ompi_parent(int v) {
  if (v < 2) return 0;
  int level = 0, num = 0;
  while (num <= v) num += 1 << level++;
  --level;
  const int delta = 1 << level, slimit = (1 << level) - 1;
  int sp = v;
  while (sp >= slimit) sp -= delta / 2;
  return sp;
}

// D: rounds of one segment down Open MPI's binary tree, one child per round:
// max(h + maxpop(p - 2^h), 2h - 2), h = floor(log2 p).
int one_segment_rounds(int p) {
  if (p <= 1) return 0;
  const int h = std::bit_width(static_cast<unsigned>(p)) - 1;
  const unsigned q = static_cast<unsigned>(p) - (1u << h);
  const int w = std::bit_width(q);
  const int maxpop = std::has_single_bit(q + 1) ? w : w - 1;  // most one bits among 0..q
  return std::max(h + maxpop, 2 * h - 2);
}

std::size_t rank_rounds(const schedule_set& ss) {
  std::size_t r = 0;
  for (const schedule& s : ss) r = std::max(r, s.communication_rounds());
  return r;
}

}  // namespace

TEST_CASE("pipelined_binary_tree: D + 2(S - 1) rounds for p = 1..64, every root of some") {
  const algorithm& a = find_algo(collective::bcast, "pipelined_binary_tree");
  CHECK(one_segment_rounds(2) == 1);
  CHECK(one_segment_rounds(3) == 2);
  CHECK(one_segment_rounds(7) == 4);   // 0 -> 2 -> 6: 2 + 2
  CHECK(one_segment_rounds(8) == 4);   // 7 at level 3 from 3 (child 0): 1 + 1 + 1 ... and 6
  for (int p = 1; p <= 64; ++p)
    for (std::int64_t S : {1, 2, 5, 9}) {
      const std::uint64_t segment = 3, count = segment * static_cast<std::uint64_t>(S) - 1;
      for (int root : {0, p / 2, p - 1}) {
        INFO("p = " << p << ", S = " << S << ", root " << root);
        const coll_args args = bcast_args(p, count, root, segment);
        const schedule_set ss = build_all(a, args);
        const std::int64_t expected = p == 1 ? 0 : p == 2 ? S : one_segment_rounds(p) + 2 * (S - 1);
        CHECK(rank_rounds(ss) == static_cast<std::size_t>(expected));
        const verify_report rep = verify(ss, args);
        CHECK(rep.ok);
        // the cost function counts the same rounds of one segment each
        const cost_model m;
        CHECK(a.cost(args, 8, m) ==
              doctest::Approx(static_cast<double>(expected) * (m.alpha + m.beta * static_cast<double>(segment * 8))));
      }
    }
}

TEST_CASE("pipelined_binary_tree: each rank receives each segment exactly once, from its Open MPI parent") {
  const algorithm& a = find_algo(collective::bcast, "pipelined_binary_tree");
  for (int p : {2, 3, 5, 8, 13, 31, 33, 64})
    for (int root : {0, 1 % p, p - 1}) {
      const std::uint64_t segment = 2, count = 11;  // 6 segments, the last one of 1
      const schedule_set ss = build_all(a, bcast_args(p, count, root, segment));
      for (int r = 0; r < p; ++r) {
        INFO("p = " << p << ", root " << root << ", rank " << r);
        const schedule& s = ss[static_cast<std::size_t>(r)];
        const int v = (r - root + p) % p;
        std::multiset<std::uint64_t> got;
        int sends = 0;
        for (const ranklab::round& rd : s.rounds()) {
          if (rd.send_to != no_rank) ++sends;
          if (rd.recv_from == no_rank) continue;
          CHECK(rd.recv_from == (ompi_parent(v) + root) % p);
          for (const region& g : s.recv_regions(rd)) {
            CHECK(g.buffer == out_buffer);
            CHECK(g.count == std::min<std::uint64_t>(segment, count - g.offset));
            got.insert(g.offset);
          }
        }
        if (v == 0) {
          CHECK(got.empty());
        } else {
          CHECK(got == std::multiset<std::uint64_t>{0, 2, 4, 6, 8, 10});
        }
        // children v + 2^l and v + 2^(l+1) that exist, each sent every segment
        const int l = std::bit_width(static_cast<unsigned>(v) + 1) - 1;
        const int kids = (v + (1 << l) < p) + (v + (2 << l) < p);
        CHECK(sends == 6 * kids);
      }
    }
}

TEST_CASE("pipelined_binary_tree: default segment from the cost model, results against the reference") {
  const algorithm& a = find_algo(collective::bcast, "pipelined_binary_tree");
  // p = 64: D = 10, count 100000: S = round(sqrt(8 * 100000 / 1250)) = 25
  const schedule_set ss = build_all(a, bcast_args(64, 100000, 0, 0));
  CHECK(rank_rounds(ss) == static_cast<std::size_t>(10 + 2 * 24));
  for (int p : {1, 2, 3, 5, 7, 9, 16, 17, 31, 33, 64})
    for (int root : {0, p / 3, p - 1})
      for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{37}, std::uint64_t{1000}})
        for (std::uint64_t segment : {std::uint64_t{0}, std::uint64_t{4}})
          expect_verified(make_call(collective::bcast, p, n, root, datatype_of<std::int32_t>(), ops::sum,
                                    {"pipelined_binary_tree", {.segment = segment}}),
                          executor_kind::sequential);
}

TEST_CASE("split_binary_tree: D + 2(S - 1) + 1 rounds, each half down its subtree, then the partner's half") {
  const algorithm& a = find_algo(collective::bcast, "split_binary_tree");
  for (int p = 1; p <= 64; ++p)
    for (std::int64_t S : {1, 2, 5}) {
      const std::uint64_t segment = 3, half = segment * static_cast<std::uint64_t>(S), count = 2 * half;
      for (int root : {0, p / 2, p - 1}) {
        INFO("p = " << p << ", S = " << S << ", root " << root);
        const coll_args args = bcast_args(p, count, root, segment);
        const schedule_set ss = build_all(a, args);
        const std::int64_t r1 = p == 1 ? 0 : p == 2 ? S : one_segment_rounds(p) + 2 * (S - 1);
        CHECK(rank_rounds(ss) == static_cast<std::size_t>(p == 1 ? 0 : r1 + 1));
        CHECK(verify(ss, args).ok);
        const cost_model m;
        if (p > 1)
          CHECK(a.cost(args, 8, m) == doctest::Approx(static_cast<double>(r1) * (m.alpha + m.beta * static_cast<double>(segment * 8)) +
                                                      m.alpha + m.beta * static_cast<double>(half * 8)));
        for (int r = 0; r < p; ++r) {
          const schedule& s = ss[static_cast<std::size_t>(r)];
          const int v = (r - root + p) % p;
          // Open MPI: odd relative ranks carry the first half, even ones the second; the pair
          // of odd v is v + 1 (the root for v = p - 1)
          const std::uint64_t mine = v % 2 == 1 ? 0 : half;
          const int partner = v == 0 ? -1 : v % 2 == 1 ? (v + 1) % p : v - 1;
          std::multiset<std::uint64_t> from_parent;
          std::uint64_t from_partner = 0, total = 0;
          for (const ranklab::round& rd : s.rounds()) {
            if (rd.recv_from == no_rank) continue;
            const int w = (rd.recv_from - root + p) % p;
            for (const region& g : s.recv_regions(rd)) {
              total += g.count;
              if (w == ompi_parent(v) && g.count == segment && (w != 0 || partner != 0 || g.offset < half)) {
                CHECK(g.offset >= mine);
                CHECK(g.offset < mine + half);
                from_parent.insert(g.offset);
              } else {
                CHECK(w == partner);
                CHECK(g.count == half);
                CHECK(g.offset == half - mine);
                from_partner += g.count;
              }
            }
          }
          if (v == 0) {
            CHECK(total == 0);
          } else {
            CHECK(total == count);
            CHECK(from_partner == half);
            CHECK(from_parent.size() == static_cast<std::size_t>(S));
          }
        }
      }
    }
}

TEST_CASE("split_binary_tree: results against the reference, awkward p, non-zero roots, odd counts") {
  for (int p : {1, 2, 3, 4, 5, 7, 9, 16, 17, 31, 33, 64})
    for (int root : {0, p / 3, p - 1})
      for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{37}, std::uint64_t{1000}})
        for (std::uint64_t segment : {std::uint64_t{0}, std::uint64_t{4}})
          expect_verified(make_call(collective::bcast, p, n, root, datatype_of<std::int32_t>(), ops::sum,
                                    {"split_binary_tree", {.segment = segment}}),
                          executor_kind::sequential);
}

namespace {

// Open MPI's ompi_coll_base_topo_build_in_order_bintree for one rank, as the source walks it:
// {parent, left child, right child}, -1 where none.
struct io_node {
  int parent = -1, left = -1, right = -1;
};
io_node ompi_in_order(int size, int rank) {
  io_node me;
  int myrank = rank, parent = size - 1, delta = 0;
  while (true) {
    const int rightsize = size >> 1;
    int lchild = -1, rchild = -1;
    if (size - 1 > 0) {
      lchild = parent - 1;
      if (lchild > 0) rchild = rightsize - 1;
    }
    if (myrank == parent) {
      if (lchild >= 0) me.left = lchild + delta;
      if (rchild >= 0) me.right = rchild + delta;
      return me;
    }
    if (myrank > rchild) {
      if (myrank == lchild) me.parent = parent + delta;
      size = size - rightsize - 1;
      delta += rightsize;
      myrank -= rightsize;
      parent = size - 1;
    } else {
      if (myrank == rchild) me.parent = parent + delta;
      size = rightsize;
      parent = rchild;
    }
  }
}

coll_args reduce_args(int p, std::uint64_t count, int root, bool commutative) {
  coll_args a;
  a.coll = collective::reduce;
  a.p = p;
  a.count = count;
  a.root = root;
  a.commutative = commutative;
  return a;
}

}  // namespace

TEST_CASE("inorder_binary: Open MPI's in-order tree, left child then right, rounds of the greedy order") {
  const algorithm& a = find_algo(collective::reduce, "inorder_binary");
  CHECK_FALSE(a.needs_commutative);
  for (int p = 1; p <= 64; ++p) {
    // the rounds in which each rank's partial is complete; children are lower ranks
    std::vector<int> ready(static_cast<std::size_t>(p), 0), left_at(p, -1), right_at(p, -1);
    std::vector<io_node> nodes;
    for (int r = 0; r < p; ++r) nodes.push_back(ompi_in_order(p, r));
    for (int r = 0; r < p; ++r) {
      const io_node& n = nodes[static_cast<std::size_t>(r)];
      int t = -1;
      if (n.left >= 0) t = left_at[r] = ready[n.left];
      if (n.right >= 0) t = right_at[r] = std::max(ready[n.right], t + 1);
      ready[r] = t + 1;
    }
    for (int root : {0, p / 2, p - 1}) {
      INFO("p = " << p << ", root " << root);
      const coll_args args = reduce_args(p, 3, root, false);
      const schedule_set ss = build_all(a, args);
      const std::size_t expected = static_cast<std::size_t>(ready[p - 1] + (root != p - 1 ? 1 : 0));
      CHECK(rank_rounds(ss) == expected);
      CHECK(verify(ss, args).ok);
      const cost_model m;
      const double bytes = 3.0 * 8;
      CHECK(a.cost(args, 8, m) == doctest::Approx(ready[p - 1] * (m.alpha + (m.beta + m.gamma) * bytes) +
                                                  (root != p - 1 ? m.alpha + m.beta * bytes : 0.0)));
      for (int r = 0; r < p; ++r) {
        INFO("rank " << r);
        const schedule& s = ss[static_cast<std::size_t>(r)];
        const io_node& n = nodes[static_cast<std::size_t>(r)];
        const auto rounds = s.rounds();
        auto at = [&](int i) -> const ranklab::round* {
          return i >= 0 && static_cast<std::size_t>(i) < rounds.size() ? &rounds[static_cast<std::size_t>(i)] : nullptr;
        };
        if (n.left >= 0) {
          REQUIRE(at(left_at[r]) != nullptr);
          CHECK(at(left_at[r])->recv_from == n.left);
          CHECK(at(left_at[r])->recv_how == combine::reduce_in_left);
        }
        if (n.right >= 0) {
          REQUIRE(at(right_at[r]) != nullptr);
          CHECK(at(right_at[r])->recv_from == n.right);
          CHECK(at(right_at[r])->recv_how == combine::reduce_in_left);
        }
        int sends = 0, to_parent = 0;
        for (const ranklab::round& rd : rounds)
          if (rd.send_to != no_rank) {
            ++sends;
            to_parent += rd.send_to == n.parent;
          }
        const int extra = r == p - 1 && root != p - 1 ? 1 : 0;
        CHECK(sends == (n.parent >= 0 ? 1 : 0) + extra);
        CHECK(to_parent == (n.parent >= 0 ? 1 : 0));
      }
    }
  }
}

TEST_CASE("inorder_binary: not inorder_binomial's schedule, 2 log2 p rounds at powers of two") {
  const algorithm& a = find_algo(collective::reduce, "inorder_binary");
  const algorithm& b = find_algo(collective::reduce, "inorder_binomial");
  // p = 4: same rounds, different peers (binomial: 1 -> 0; binary: 0 -> 1)
  const schedule_set x = build_all(a, reduce_args(4, 2, 3, false)), y = build_all(b, reduce_args(4, 2, 3, false));
  CHECK(x[0].rounds()[0].send_to == 1);
  CHECK(y[0].rounds()[0].recv_from == 1);
  for (int k = 2; k <= 6; ++k) CHECK(rank_rounds(build_all(a, reduce_args(1 << k, 2, (1 << k) - 1, false))) == static_cast<std::size_t>(2 * k - 2));
}

TEST_CASE("inorder_binary: non-commutative matrix product and sums against the rank-order reference") {
  for (int p : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64})
    for (int root : {0, p / 3, p - 1}) {
      for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}})
        expect_verified(make_call(collective::reduce, p, n, root, datatype_of<matrix2x2>(), matrix2x2_product(),
                                  {"inorder_binary"}),
                        executor_kind::sequential);
      expect_verified(make_call(collective::reduce, p, 1001, root, datatype_of<std::int32_t>(), ops::sum, {"inorder_binary"}),
                      executor_kind::sequential);
    }
}

TEST_CASE("gather linear_sync: go, first segment, rest, rank after rank: 2p - 1 rounds") {
  const algorithm& a = find_algo(collective::gather, "linear_sync");
  for (int p = 1; p <= 64; ++p)
    for (int root : {0, p / 2, p - 1})
      for (std::uint64_t segment : {std::uint64_t{0}, std::uint64_t{3}}) {
        INFO("p = " << p << ", root " << root << ", segment " << segment);
        coll_args args;
        args.coll = collective::gather;
        args.p = p;
        args.root = root;
        args.count = 200;
        args.params.segment = segment;
        const std::uint64_t f = segment == 0 ? 128 : segment;
        const schedule_set ss = build_all(a, args);
        CHECK(rank_rounds(ss) == static_cast<std::size_t>(p == 1 ? 0 : 2 * p - 1));
        CHECK(verify(ss, args).ok);
        const cost_model m;
        CHECK(a.cost(args, 8, m) == doctest::Approx(p == 1 ? 0.0 : (2 * p - 1) * m.alpha + (p - 1) * m.beta * 1600.0));
        const schedule& rs = ss[static_cast<std::size_t>(root)];
        int k = 0;
        for (int q = 0; q < p; ++q) {
          if (q == root) continue;
          const auto rr = rs.rounds();
          REQUIRE(rr.size() >= static_cast<std::size_t>(2 * k + 3));
          CHECK(rr[2 * k].send_to == q);
          CHECK(rs.send_count(rr[2 * k]) == 0);
          CHECK(rr[2 * k + 1].recv_from == q);
          CHECK(rs.recv_count(rr[2 * k + 1]) == f);
          CHECK(rr[2 * k + 2].recv_from == q);
          CHECK(rs.recv_count(rr[2 * k + 2]) == 200 - f);
          const schedule& qs = ss[static_cast<std::size_t>(q)];
          CHECK(qs.rounds()[2 * k].recv_from == root);
          CHECK(qs.rounds()[2 * k + 1].send_to == root);
          CHECK(qs.rounds()[2 * k + 2].send_to == root);
          ++k;
        }
      }
  for (int p : {1, 2, 3, 5, 8, 17, 33, 64})
    for (int root : {0, p / 3, p - 1})
      for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{130}})
        expect_verified(make_call(collective::gather, p, n, root, datatype_of<std::int32_t>(), ops::sum, {"linear_sync"}),
                        executor_kind::sequential);
}

TEST_CASE("alltoall: Open MPI's linear_sync order, one-ported, is ranklab's linear with the rounds reversed") {
  // linear_sync posts receives from r+1, r+2, ... and sends to r-1, r-2, ...: one-ported,
  // round k receives from r+k and sends to r-k, which is linear's round p-k
  const algorithm& a = find_algo(collective::alltoall, "linear");
  for (int p : {2, 3, 5, 8, 13}) {
    coll_args args;
    args.coll = collective::alltoall;
    args.p = p;
    args.count = 2;
    const schedule_set ss = build_all(a, args);
    for (int r = 0; r < p; ++r) {
      const auto rounds = ss[static_cast<std::size_t>(r)].rounds();
      std::vector<const ranklab::round*> comm;
      for (const ranklab::round& rd : rounds)
        if (rd.communicates()) comm.push_back(&rd);
      REQUIRE(comm.size() == static_cast<std::size_t>(p - 1));
      for (int k = 1; k < p; ++k) {
        const ranklab::round& rd = *comm[static_cast<std::size_t>(p - 1 - k)];  // linear's round p - k
        CHECK(rd.recv_from == (r + k) % p);
        CHECK(rd.send_to == (r - k + p) % p);
      }
    }
  }
}

TEST_CASE("kary: radix 2 has pipelined_binary_tree's rounds (same tree shape, other labels), radix 3 full trees") {
  const algorithm& k = find_algo(collective::bcast, "kary");
  const algorithm& b = find_algo(collective::bcast, "pipelined_binary_tree");
  for (int p = 1; p <= 64; ++p) {
    coll_args args = bcast_args(p, 29, p / 2, 3);
    CHECK(rank_rounds(build_all(k, args)) == rank_rounds(build_all(b, args)));
    CHECK(verify(build_all(k, args), args).ok);
  }
  // radix 3, p = 13 (levels 1, 3, 9): D = 3 + 3, then one segment every 3 rounds
  coll_args a3 = bcast_args(13, 5 * 4, 0, 4);
  a3.params.radix = 3;
  CHECK(rank_rounds(build_all(k, a3)) == static_cast<std::size_t>(6 + 3 * 4));
  for (int p : {1, 2, 3, 7, 13, 33, 64})
    for (int radix : {0, 3, 4})
      expect_verified(make_call(collective::bcast, p, 37, p - 1, datatype_of<std::int32_t>(), ops::sum,
                                {"kary", {.radix = radix, .segment = 4}}),
                      executor_kind::sequential);
}
