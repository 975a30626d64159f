// J. L. Träff, "Optimal, Non-pipelined Reduce-scatter and Allreduce Algorithms" (arXiv
// 2410.14234): reduce_scatter(_block), allreduce and alltoall(v) circulant_halving. Round
// counts against ceil(log2 p) (allreduce 2 ceil(log2 p)) for p = 1..200, peers and message
// sizes against the halving skips written out here, p-1 blocks sent and combined per rank
// (2(p-1) sent in the allreduce), cost functions against the rounds, results against a
// sequential sum (count 0, irregular counts with zeros, in place) and the verifier's
// sweep for p = 1..64.
// See docs/algorithms.md, "reduce_scatter", "allreduce", "alltoall".
#include <doctest/doctest.h>

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

const char* const name_ = "circulant_halving";

const algorithm& find_algo(collective c) {
  const algorithm* a = registry::find(c, name_);
  REQUIRE(a != nullptr);
  return *a;
}

int log2_ceil(int p) {
  int l = 0;
  while ((1 << l) < p) ++l;
  return l;
}

int mod(std::int64_t a, int p) { return static_cast<int>(((a % p) + p) % p); }

// The skips as the paper defines them, written out independently: s_0 = p, then halving
// with rounding up until 1. Returns s_0, s_1, ..., s_q.
std::vector<int> skips_of(int p) {
  std::vector<int> s{p};
  while (s.back() > 1) s.push_back(s.back() / 2 + s.back() % 2);
  return s;
}

coll_args args_of(collective c, int p, std::uint64_t count) {
  coll_args a;
  a.coll = c;
  a.p = p;
  a.count = count;
  if (c == collective::reduce_scatter)
    for (int j = 0; j < p; ++j) a.counts.push_back(count);
  if (c == collective::alltoallv)
    for (int i = 0; i < p * p; ++i) a.counts.push_back(count);
  return a;
}

struct volume {
  std::uint64_t sent = 0, received = 0, reduced = 0;
};

// What one rank's schedule sends, receives and combines (receives with a reducing combine
// plus local reduction steps), in elements.
volume volume_of(const schedule& s) {
  volume v;
  for (const ranklab::round& r : s.rounds()) {
    if (r.send_to != no_rank) v.sent += s.send_count(r);
    if (r.recv_from != no_rank) {
      v.received += s.recv_count(r);
      if (r.recv_how != combine::copy) v.reduced += s.recv_count(r);
    }
  }
  for (const local_step& st : s.steps())
    if (st.how != combine::copy) v.reduced += st.src.count;
  return v;
}

}  // namespace

TEST_CASE("circulant_halving: registered, commutative reductions, one-ported, any p") {
  for (collective c : {collective::reduce_scatter, collective::reduce_scatter_block, collective::allreduce}) {
    const algorithm& a = find_algo(c);
    CHECK(a.needs_commutative);
    CHECK_FALSE(a.needs_power_of_two);
    CHECK_FALSE(a.fixed_order);
    CHECK(a.one_ported);
  }
  for (collective c : {collective::alltoall, collective::alltoallv}) {
    const algorithm& a = find_algo(c);
    CHECK_FALSE(a.needs_commutative);
    CHECK_FALSE(a.needs_power_of_two);
    CHECK(a.one_ported);
  }
  CHECK(skips_of(1) == std::vector<int>{1});
  CHECK(skips_of(13) == std::vector<int>{13, 7, 4, 2, 1});
  CHECK(skips_of(16) == std::vector<int>{16, 8, 4, 2, 1});
  CHECK(skips_of(17) == std::vector<int>{17, 9, 5, 3, 2, 1});
}

TEST_CASE("circulant_halving: ceil(log2 p) rounds (allreduce 2 ceil(log2 p)) for p = 1..200") {
  for (int p = 1; p <= 200; ++p) {
    INFO("p = " << p);
    const int q = log2_ceil(p);
    REQUIRE(static_cast<int>(skips_of(p).size()) == q + 1);
    for (collective c : {collective::reduce_scatter_block, collective::reduce_scatter, collective::allreduce,
                         collective::alltoall}) {
      INFO(name(c));
      const coll_args a = args_of(c, p, c == collective::allreduce ? static_cast<std::uint64_t>(p) : 2u);
      const schedule_set ss = build_all(find_algo(c), a);
      const verify_report rep = verify(ss);  // structure
      CHECK(rep.ok);
      const std::size_t want = static_cast<std::size_t>(c == collective::allreduce ? 2 * q : q);
      CHECK(rep.rounds == want);
      for (const schedule& s : ss) CHECK(s.communication_rounds() == want);
    }
  }
}

TEST_CASE("circulant_halving: round k sends floor(s_k/2) blocks to r + s_{k+1}, receives from r - s_{k+1}") {
  for (int p = 1; p <= 200; ++p) {
    const std::vector<int> sk = skips_of(p);
    const int q = static_cast<int>(sk.size()) - 1;
    const std::uint64_t b = 3;
    const coll_args rs = args_of(collective::reduce_scatter_block, p, b);
    const coll_args ar = args_of(collective::allreduce, p, b * static_cast<std::uint64_t>(p));
    const schedule_set ss = build_all(find_algo(collective::reduce_scatter_block), rs);
    const schedule_set as = build_all(find_algo(collective::allreduce), ar);
    for (int r = 0; r < p; ++r) {
      INFO("p = " << p << ", rank " << r);
      const schedule& s = ss[static_cast<std::size_t>(r)];
      const schedule& x = as[static_cast<std::size_t>(r)];
      for (int k = 0; k < q; ++k) {
        const int h = sk[static_cast<std::size_t>(k) + 1];
        const std::uint64_t blocks = static_cast<std::uint64_t>(sk[static_cast<std::size_t>(k)] / 2);
        for (const schedule* y : {&s, &x}) {
          const ranklab::round& rd = y->rounds()[static_cast<std::size_t>(k)];
          CHECK(rd.send_to == mod(r + h, p));
          CHECK(rd.recv_from == mod(r - h, p));
          CHECK(y->send_count(rd) == blocks * b);
          CHECK(y->recv_count(rd) == blocks * b);
          // every received element is combined in the round: on arrival or by a local step after it
          std::uint64_t combined = rd.recv_how != combine::copy ? y->recv_count(rd) : 0;
          for (const local_step& st : y->post_steps(rd))
            if (st.how != combine::copy) combined += st.src.count;
          CHECK(combined == blocks * b);
        }
        // allgather round q + k mirrors reduce-scatter round q - 1 - k
        const int m = q - 1 - k;
        const int hm = sk[static_cast<std::size_t>(m) + 1];
        const ranklab::round& g = x.rounds()[static_cast<std::size_t>(q + k)];
        CHECK(g.send_to == mod(r - hm, p));
        CHECK(g.recv_from == mod(r + hm, p));
        CHECK(x.send_count(g) == static_cast<std::uint64_t>(sk[static_cast<std::size_t>(m)] / 2) * b);
        CHECK(g.recv_how == combine::copy);
      }
    }
  }
}

TEST_CASE("circulant_halving: every rank sends, receives and combines exactly p-1 blocks (allreduce: sends 2(p-1))") {
  for (int p = 1; p <= 200; ++p) {
    INFO("p = " << p);
    const std::uint64_t pm1 = static_cast<std::uint64_t>(p - 1);
    {  // reduce_scatter_block, one-element blocks
      const coll_args a = args_of(collective::reduce_scatter_block, p, 1);
      for (const schedule& s : build_all(find_algo(collective::reduce_scatter_block), a)) {
        const volume v = volume_of(s);
        CHECK(v.sent == pm1);
        CHECK(v.received == pm1);
        CHECK(v.reduced == pm1);
      }
    }
    {  // reduce_scatter, blocks of 2 elements
      const coll_args a = args_of(collective::reduce_scatter, p, 2);
      for (const schedule& s : build_all(find_algo(collective::reduce_scatter), a)) {
        const volume v = volume_of(s);
        CHECK(v.sent == 2 * pm1);
        CHECK(v.reduced == 2 * pm1);
      }
    }
    for (bool in_place : {false, true}) {  // allreduce, count = p: p blocks of one element
      coll_args a = args_of(collective::allreduce, p, static_cast<std::uint64_t>(p));
      a.in_place = in_place;
      for (const schedule& s : build_all(find_algo(collective::allreduce), a)) {
        const volume v = volume_of(s);
        CHECK(v.sent == 2 * pm1);
        CHECK(v.received == 2 * pm1);
        CHECK(v.reduced == pm1);
      }
    }
  }
}

TEST_CASE("circulant_halving: cost with alpha = 1 is the rounds; with beta = 1 the blocks moved") {
  const cost_model rounds_only{1.0, 0.0, 0.0};
  const cost_model bytes_only{0.0, 1.0, 0.0};
  const cost_model reduce_only{0.0, 0.0, 1.0};
  for (int p = 1; p <= 200; ++p) {
    INFO("p = " << p);
    const int q = log2_ceil(p);
    const double pm1 = p - 1.0;
    const coll_args rs = args_of(collective::reduce_scatter_block, p, 4);
    const algorithm& r = find_algo(collective::reduce_scatter_block);
    CHECK(r.cost(rs, 8, rounds_only) == doctest::Approx(q));
    CHECK(r.cost(rs, 8, bytes_only) == doctest::Approx(pm1 * 4 * 8));  // (p-1)/p M, M = 4 p elements of 8 bytes
    CHECK(r.cost(rs, 8, reduce_only) == doctest::Approx(pm1 * 4 * 8));
    const coll_args ar = args_of(collective::allreduce, p, 5u * static_cast<std::uint64_t>(p));
    const algorithm& x = find_algo(collective::allreduce);
    CHECK(x.cost(ar, 8, rounds_only) == doctest::Approx(2 * q));
    CHECK(x.cost(ar, 8, bytes_only) == doctest::Approx(2 * pm1 * 5 * 8));
    CHECK(x.cost(ar, 8, reduce_only) == doctest::Approx(pm1 * 5 * 8));
    const coll_args at = args_of(collective::alltoall, p, 2);
    const algorithm& y = find_algo(collective::alltoall);
    CHECK(y.cost(at, 8, rounds_only) == doctest::Approx(q));
    // beta term: the elements the schedules send per rank (the same at every rank)
    const verify_report rep = verify(build_all(y, at));
    CHECK(y.cost(at, 8, bytes_only) == doctest::Approx(static_cast<double>(rep.elements) / p * 8));
  }
  // irregular reduce_scatter: the busiest rank's round, summed
  coll_args a;
  a.coll = collective::reduce_scatter;
  a.p = 5;
  a.counts = {10, 0, 0, 1, 0};
  // rounds move 2, 1, 1 consecutive blocks (s = 5, 3, 2): busiest windows 10 + 0, 10, 10
  CHECK(find_algo(collective::reduce_scatter).cost(a, 1, bytes_only) == doctest::Approx(30.0));
}

TEST_CASE("circulant_halving: alltoall for p = 2^k moves what Bruck moves, ceil(log2 p) rounds any p") {
  for (int p = 1; p <= 64; ++p) {
    INFO("p = " << p);
    const coll_args a = args_of(collective::alltoall, p, 3);
    const verify_report mine = verify(build_all(find_algo(collective::alltoall), a), a);
    CHECK(mine.ok);
    CHECK(mine.rounds == static_cast<std::size_t>(log2_ceil(p)));
    if ((p & (p - 1)) == 0) {
      const verify_report bruck = verify(build_all(*registry::find(collective::alltoall, "bruck"), a), a);
      CHECK(mine.elements == bruck.elements);
      CHECK(mine.messages == bruck.messages);
    }
  }
}

TEST_CASE("circulant_halving: results against a sequential int64 sum, p = 1..64, counts 0 and uneven, in place") {
  for (int p = 1; p <= 64; ++p)
    for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{2} * static_cast<std::uint64_t>(p) + 3})
      for (bool in_place : {false, true}) {
        INFO("p = " << p << ", count " << count << (in_place ? ", in place" : ""));
        coll_args a = args_of(collective::allreduce, p, count);
        a.in_place = in_place;
        a.elem_size = sizeof(std::int64_t);
        const schedule_set ss = build_all(find_algo(collective::allreduce), a);
        std::vector<std::vector<std::int64_t>> in(static_cast<std::size_t>(p)), out(static_cast<std::size_t>(p));
        std::vector<rank_buffers> bufs;
        for (int r = 0; r < p; ++r) {
          auto& v = in[static_cast<std::size_t>(r)];
          for (std::uint64_t i = 0; i < count; ++i) v.push_back(static_cast<std::int64_t>((r + 1) * 1000003 + i * 7));
          out[static_cast<std::size_t>(r)] = in_place ? v : std::vector<std::int64_t>(count, -1);
          auto& o = out[static_cast<std::size_t>(r)];
          bufs.push_back({in_place ? static_cast<const void*>(o.data()) : v.data(), o.data()});
        }
        execute_sequential(ss, bufs, datatype_of<std::int64_t>(), ops::sum);
        for (std::uint64_t i = 0; i < count; ++i) {
          std::int64_t want = 0;
          for (int r = 0; r < p; ++r) want += in[static_cast<std::size_t>(r)][i];
          for (int r = 0; r < p; ++r) CHECK(out[static_cast<std::size_t>(r)][i] == want);
        }
      }
  // reduce_scatter with irregular counts (zeros included) and reduce_scatter_block
  for (int p = 1; p <= 64; ++p)
    for (int shape = 0; shape < 3; ++shape) {
      coll_args a;
      a.p = p;
      a.elem_size = sizeof(std::int64_t);
      if (shape == 2) {
        a.coll = collective::reduce_scatter_block;
        a.count = 3;
      } else {
        a.coll = collective::reduce_scatter;
        for (int j = 0; j < p; ++j)
          a.counts.push_back(shape == 0 ? static_cast<std::uint64_t>((j * 7 + 3) % 5) : (j == p / 2 ? 9u : 0u));
      }
      INFO("p = " << p << ", " << name(a.coll) << ", shape " << shape);
      const std::uint64_t total = total_count(a);
      const schedule_set ss = build_all(find_algo(a.coll), a);
      std::vector<std::vector<std::int64_t>> in(static_cast<std::size_t>(p)), out(static_cast<std::size_t>(p));
      std::vector<rank_buffers> bufs;
      for (int r = 0; r < p; ++r) {
        for (std::uint64_t i = 0; i < total; ++i)
          in[static_cast<std::size_t>(r)].push_back(static_cast<std::int64_t>(r * 31 + 1) * static_cast<std::int64_t>(i + 5));
        out[static_cast<std::size_t>(r)].assign(block_count(a, r), -1);
        bufs.push_back({in[static_cast<std::size_t>(r)].data(), out[static_cast<std::size_t>(r)].data()});
      }
      execute_sequential(ss, bufs, datatype_of<std::int64_t>(), ops::sum);
      for (int r = 0; r < p; ++r)
        for (std::uint64_t i = 0; i < block_count(a, r); ++i) {
          std::int64_t want = 0;
          for (int x = 0; x < p; ++x) want += in[static_cast<std::size_t>(x)][block_offset(a, r) + i];
          CHECK(out[static_cast<std::size_t>(r)][i] == want);
        }
    }
}

TEST_CASE("circulant_halving: the check harness (sequential and threads) and the verifier's sweep, p = 1..64") {
  for (int p = 1; p <= 64; ++p) {
    INFO("p = " << p);
    for (collective c : {collective::reduce_scatter, collective::reduce_scatter_block, collective::allreduce,
                         collective::alltoall, collective::alltoallv}) {
      INFO(name(c));
      const verify_summary sum = verify_algorithm(find_algo(c), p);
      CHECK(sum.ok());
      CHECK(sum.skipped == "");
      CHECK(sum.rounds == static_cast<std::size_t>(c == collective::allreduce ? 2 * log2_ceil(p) : log2_ceil(p)));
    }
    for (collective c : {collective::reduce_scatter_block, collective::allreduce, collective::alltoall})
      for (bool in_place : {false, true}) {
        if (in_place && c != collective::allreduce) continue;
        call cl = make_call(c, p, 7, 0, datatype_of<std::int32_t>(), ops::sum, {name_});
        cl.args.in_place = in_place;
        const check_result res = run_check(cl, p <= 17 ? executor_kind::threads : executor_kind::sequential);
        CHECK(res.verified);
        CHECK(res.difference == "");
      }
    std::vector<std::uint64_t> counts;
    for (int j = 0; j < p; ++j) counts.push_back(static_cast<std::uint64_t>(j % 4 == 1 ? 0 : j % 5 + 1));
    const check_result res =
        run_check(make_vcall(collective::reduce_scatter, p, counts, {}, 0, datatype_of<double>(), ops::sum, {name_}),
                  executor_kind::sequential);
    CHECK(res.verified);
    CHECK(res.difference == "");
  }
}
