// Tests of the circulant collectives (registry name "circulant"; J. L. Träff, "Optimal
// Broadcast Schedules in Logarithmic Time with Applications to Broadcast, All-Broadcast,
// Reduction and All-Reduction"; see docs/algorithms.md, "Circulant schedules"): bcast,
// reduce, allgather, allgatherv, reduce_scatter_block, reduce_scatter and allreduce with
// every number of blocks n against the sequential reference (ranklab/check.hpp) for
// every p in 1..40 and p in {63, 64, 65, 127, 128, 129, 1000}, several roots, counts 0, 1,
// not divisible by n and large, several n (1, 2, q, q+1, 7 and the cost model's choice),
// several types and operators, irregular counts; and the schedule properties the verifier
// measures: n - 1 + q rounds (2(n - 1 + q) for allreduce), every block received exactly
// once, (p - 1) n broadcast messages. Non-commutative operators must be rejected.
//
// Executors: threads for p in {1, 2, 3, 4, 5, 7, 8, 9, 16, 17}, sequential otherwise.
// The all-to-all collectives have O(p^2) regions per call and the verifier compares the
// regions of a round pairwise, so p = 1000 gets: allgather with one element per rank and
// n = 1 only; allgatherv and reduce_scatter with sparse parts (one rank has everything, or
// every 37th rank a few elements), n = 1 and 7; allreduce with counts 1, 37, 150 (most parts
// empty); no reduce_scatter_block. Above p = 40 fewer n and counts for those collectives.
// bcast and reduce get the full matrix at every p (the large count on fewer roots/n).
// The default n on small p is also in test_conformance.cpp. CPU time about 25 s
// (RelWithDebInfo); wall time depends on the machine's load.
#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "circulant/circulant_collectives.hpp"
#include "collective_checks.hpp"
#include "ranklab/circulant.hpp"

namespace {

using namespace ranklab;
using namespace ranklab::testing;

constexpr std::array<int, 7> large_ps = {63, 64, 65, 127, 128, 129, 1000};
constexpr std::array<int, 10> thread_ps = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17};

std::vector<int> all_ps() {
  std::vector<int> ps;
  for (int p = 1; p <= 40; ++p) ps.push_back(p);
  ps.insert(ps.end(), large_ps.begin(), large_ps.end());
  return ps;
}

executor_kind executor_for(int p) {
  return std::find(thread_ps.begin(), thread_ps.end(), p) != thread_ps.end() ? executor_kind::threads
                                                                             : executor_kind::sequential;
}

int q_of(int p) { return circulant::skips(p).q; }

// Requested numbers of blocks: 1, 2, q, q + 1, 7 and 0 (the cost model chooses).
std::vector<int> block_choices(int p) {
  const int q = q_of(p);
  std::set<int> s = {1, 2, q + 1, 7, 0};
  if (q > 0) s.insert(q);
  return {s.begin(), s.end()};
}

call circulant_call(collective coll, int p, std::uint64_t count, int blocks, int root = 0, datatype type = i32,
                    op reduction = ops::sum) {
  return make_call(coll, p, count, root, type, reduction, {"circulant", {.blocks = blocks}});
}

call circulant_vcall(collective coll, const std::vector<std::uint64_t>& counts, int blocks, datatype type = i32,
                     op reduction = ops::sum) {
  return make_vcall(coll, static_cast<int>(counts.size()), counts, {}, 0, type, reduction,
                    {"circulant", {.blocks = blocks}});
}

// The number of blocks n the algorithm works with and the rounds that gives. `max_blocks`
// caps n (the count for bcast/reduce, the largest part for the all-to-all collectives);
// explicit blocks are capped independently here, the cost model's choice is taken from
// detail::blocks_for and only checked to lie in [1, max_blocks].
struct expected_shape {
  int n = 0;  // 0: nothing to send
  std::size_t rounds = 0;
};

expected_shape expected(const coll_args& a) {
  expected_shape e;
  if (a.p == 1) return e;
  const int q = q_of(a.p);
  std::uint64_t elements = 0, max_blocks = 0;
  switch (a.coll) {
    case collective::bcast:
    case collective::reduce:
      elements = max_blocks = a.count;
      break;
    case collective::allreduce:
      elements = a.count;
      max_blocks = (a.count + static_cast<std::uint64_t>(a.p) - 1) / static_cast<std::uint64_t>(a.p);
      break;
    default:  // allgather(v), reduce_scatter(_block): p parts, the largest caps n
      elements = total_count(a);
      for (int j = 0; j < a.p; ++j) max_blocks = std::max(max_blocks, block_count(a, j));
      break;
  }
  if (elements == 0) return e;
  if (a.params.blocks > 0) {
    e.n = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(a.params.blocks), max_blocks));
  } else {
    e.n = detail::blocks_for(a, q, elements * a.elem_size, max_blocks);
    CHECK(e.n >= 1);
    CHECK(static_cast<std::uint64_t>(e.n) <= max_blocks);
  }
  e.rounds = static_cast<std::size_t>(e.n - 1 + q);
  if (a.coll == collective::allreduce) e.rounds *= 2;
  return e;
}

bool counts_receives(collective c) {
  return c == collective::bcast || c == collective::allgather || c == collective::allgatherv;
}

// Receives per element of every rank's out buffer: bcast: exactly one on non-roots, none
// at the root; allgather(v): exactly one outside the rank's own block, none in it (nor in
// gaps between displaced blocks). `rep` comes from verify(..., count_receives = true).
void check_receives(const coll_args& a, const verify_report& rep) {
  REQUIRE(rep.receives_per_element.size() == static_cast<std::size_t>(a.p));
  for (int r = 0; r < a.p; ++r) {
    const auto& got = rep.receives_per_element[static_cast<std::size_t>(r)];
    std::vector<std::uint32_t> want(buffer_extents(a, r).out, 0);
    if (a.coll == collective::bcast) {
      if (r != a.root) std::fill(want.begin(), want.end(), 1u);
    } else {
      for (int j = 0; j < a.p; ++j)
        if (j != r) std::fill_n(want.begin() + static_cast<std::ptrdiff_t>(block_offset(a, j)), block_count(a, j), 1u);
    }
    if (got != want) {
      std::size_t i = 0;
      while (i < std::min(got.size(), want.size()) && got[i] == want[i]) ++i;
      FAIL_CHECK(fmt::format("rank {}: element {} received {} times, expected {} (sizes {} / {})", r, i,
                             i < got.size() ? got[i] : 0u, i < want.size() ? want[i] : 0u, got.size(), want.size()));
      return;
    }
  }
}

// Result against the reference, then the verifier's counts against n - 1 + q.
// Threads: expect_verified (run_check on the thread executor), then one more verification
// that counts receives. Sequential: the same steps as run_check (build all schedules,
// verify, run them on the sequential executor, compare with the reference) but with one
// verification that also counts receives: the verifier dominates the cost at large p.
void check_circulant(const call& c) {
  const executor_kind ex = executor_for(c.args.p);
  const coll_args a = prepared(c);
  const bool receives = counts_receives(a.coll);
  verify_report rep;
  if (ex == executor_kind::threads) {
    const check_result r = expect_verified(c, ex);
    REQUIRE(r.algo != nullptr);
    CHECK(r.algo->name == "circulant");
    rep = receives ? verify(build_all(*registry::find(a.coll, "circulant"), a), true) : r.report;
  } else {
    INFO(label(c, ex));
    const algorithm* algo = registry::find(a.coll, "circulant");
    REQUIRE(algo != nullptr);
    const schedule_set plans = build_all(*algo, a);
    rep = verify(plans, receives);
    CHECK_MESSAGE(rep.ok, (rep.problems.empty() ? "" : rep.problems.front()));
    call cl = c;
    cl.args = a;
    test_data d = make_test_data(cl, 1);
    execute_sequential(plans, d.buffers(), cl.type, cl.reduction);
    const std::string difference = compare(cl, d);
    CHECK_MESSAGE(difference.empty(), difference);
  }
  INFO(label(c, ex));
  const expected_shape e = expected(a);
  CHECK(rep.rounds == e.rounds);
  if (a.coll == collective::bcast && a.p > 1 && e.n > 0 && a.count >= static_cast<std::uint64_t>(e.n))
    CHECK(rep.messages == static_cast<std::uint64_t>(a.p - 1) * static_cast<std::uint64_t>(e.n));
  if (receives) check_receives(a, rep);
}

// Irregular count vectors for allgatherv and reduce_scatter.
std::vector<std::vector<std::uint64_t>> irregular_counts(int p, bool large_p) {
  const auto up = static_cast<std::size_t>(p);
  std::vector<std::vector<std::uint64_t>> out;
  // One rank has everything, the others nothing.
  for (int j : roots_for(p)) {
    std::vector<std::uint64_t> c(up, 0);
    c[static_cast<std::size_t>(j)] = large_p ? 5 : 37;
    out.push_back(c);
  }
  if (large_p) {  // keep the O(p^2)-region collectives cheap at p = 1000: sparse parts
    std::vector<std::uint64_t> c(up, 0);
    for (std::size_t i = 0; i < up; ++i) c[i] = i % 37 == 5 ? i % 3 + 1 : 0;
    out.push_back(c);
    return out;
  }
  // Zeros interspersed.
  std::vector<std::uint64_t> c(up, 0);
  for (std::size_t i = 0; i < up; ++i) c[i] = i % 3 == 1 ? 0 : i % 5 + 1;
  out.push_back(c);
  // Random, about a third zeros, one large part.
  std::mt19937_64 rng(static_cast<std::uint64_t>(p) * 7919u);
  for (std::size_t i = 0; i < up; ++i) c[i] = rng() % 3 == 0 ? 0 : rng() % 12;
  c[rng() % up] = 53;
  out.push_back(c);
  // All zero, and every part of length 1.
  out.emplace_back(up, 0);
  out.emplace_back(up, 1);
  return out;
}

std::vector<std::uint64_t> packed_displs(const std::vector<std::uint64_t>& counts) {
  std::vector<std::uint64_t> d;
  std::uint64_t at = 0;
  for (std::uint64_t c : counts) {
    d.push_back(at);
    at += c;
  }
  return d;
}

std::vector<std::uint64_t> counts_for(int blocks, bool with_large) {
  // 0, 1, one not divisible by n (3n + 1, or 101 for the cost model's n) and a large one.
  std::vector<std::uint64_t> v = {0, 1, blocks > 0 ? 3u * static_cast<std::uint64_t>(blocks) + 1 : 101};
  if (with_large) v.push_back(10007);
  return v;
}

// Which (p, root, blocks) also get the large count (10007 elements): all of them would cost
// minutes for the large p, so fewer there.
bool large_case(int p, int root, int blocks) {
  if (p <= 40) return root == 0 || blocks == 0;
  if (p <= 129) return (root == 0 && (blocks == 0 || blocks == 7)) || (root == p - 1 && blocks == 0);
  return (root == 0 && blocks == 0) || (root == p - 1 && blocks == 7);
}

// Per-rank block of the all-to-all collectives' "large" case: about 10007 elements in
// total beyond p = 9 (the gathered buffer is p times the block on every rank).
std::uint64_t large_block(int p) { return p <= 9 ? 10007 : 10007 / static_cast<std::uint64_t>(p) + 1; }

// Requested n for the all-to-all collectives: everything up to p = 40, fewer above.
std::vector<int> all_to_all_blocks(int p) {
  if (p <= 40) return block_choices(p);
  return {1, q_of(p) + 1, 0};
}

// bcast and reduce: every p, roots 0, p-1, p/2, every n, counts 0, 1, odd and (see
// large_case) large.
void check_rooted(collective coll) {
  for (int p : all_ps())
    for (int root : roots_for(p))
      for (int blocks : block_choices(p))
        for (std::uint64_t count : counts_for(blocks, large_case(p, root, blocks)))
          check_circulant(circulant_call(coll, p, count, blocks, root));
}

// Requested n for irregular counts: fewer above p = 40, and no cost-model choice at p = 1000.
std::vector<int> irregular_blocks(int p) {
  if (p > 200) return {1, 7};
  if (p > 40) return {1, 7, 0};
  return {1, 2, q_of(p), 7, 0};
}

}  // namespace

TEST_CASE("circulant bcast: every p, roots 0, p-1, p/2, counts 0/1/odd/large, n = 1, 2, q, q+1, 7, auto") {
  check_rooted(collective::bcast);
  // float64 goes through the same regions.
  for (int p : {5, 17, 33, 129})
    check_circulant(circulant_call(collective::bcast, p, 1001, 7, p / 3, datatype_of<double>()));
}

TEST_CASE("circulant reduce: every p, roots 0, p-1, p/2, counts 0/1/odd/large, n = 1, 2, q, q+1, 7, auto") {
  check_rooted(collective::reduce);
}

TEST_CASE("circulant reduce: float64 sum, min, max, bxor") {
  const std::vector<std::pair<datatype, op>> cases = {
      {datatype_of<double>(), ops::sum},        {datatype_of<double>(), ops::min},
      {datatype_of<double>(), ops::max},        {datatype_of<std::int32_t>(), ops::min},
      {datatype_of<std::int32_t>(), ops::max},  {datatype_of<std::int32_t>(), ops::bxor},
      {datatype_of<std::uint64_t>(), ops::bxor}};
  for (int p : {1, 2, 3, 6, 7, 9, 13, 17, 24, 31, 40, 65, 128})
    for (const auto& [type, o] : cases)
      for (int blocks : {1, q_of(p) + 1, 0})
        check_circulant(circulant_call(collective::reduce, p, 517, blocks, p - 1, type, o));
}

TEST_CASE("circulant allgather: every p, counts 0/1/odd/large, n = 1, 2, q, q+1, 7, auto") {
  for (int p : all_ps()) {
    if (p == 1000) {  // O(p^2) regions per call (and an O(regions^2) verifier): one block each, n = 1
      check_circulant(circulant_call(collective::allgather, p, 1, 1));
      continue;
    }
    for (int blocks : all_to_all_blocks(p)) {
      std::vector<std::uint64_t> counts = {0, 1, 3u * static_cast<std::uint64_t>(std::max(blocks, 2)) + 1};
      if (blocks == 0) counts.push_back(large_block(p));
      for (std::uint64_t count : counts) check_circulant(circulant_call(collective::allgather, p, count, blocks));
    }
  }
  check_circulant(circulant_call(collective::allgather, 9, 10007, 7, 0, datatype_of<double>()));
}

TEST_CASE("circulant allgatherv: regular, one rank has everything, zeros interspersed, random, displacements") {
  for (int p : all_ps()) {
    const bool large_p = p > 200;
    const std::vector<int> blocks_list = irregular_blocks(p);
    for (const auto& counts : irregular_counts(p, large_p))
      for (int blocks : blocks_list) {
        call c = circulant_vcall(collective::allgatherv, counts, blocks);
        // p = 1000: explicit packed displacements, the same layout. Without them
        // block_offset() sums the counts before j, O(p), so building all p schedules
        // (gathered_parts) and the reference take O(p^3): ~10 s here instead of ~0.5 s.
        if (large_p) c.args.displs = packed_displs(counts);
        check_circulant(c);
      }
    if (large_p) continue;
    // Displaced blocks in reverse rank order with gaps.
    call c = circulant_vcall(collective::allgatherv, std::vector<std::uint64_t>(static_cast<std::size_t>(p), 3), 2);
    for (int j = 0; j < p; ++j) c.args.displs.push_back(static_cast<std::uint64_t>(p - 1 - j) * 5 + 1);
    check_circulant(c);
  }
  // Degenerate with a large part: about a broadcast of the same total.
  for (int p : {2, 5, 16, 17, 33}) {
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), 0);
    counts[0] = 10007;
    for (int blocks : {7, 0}) check_circulant(circulant_vcall(collective::allgatherv, counts, blocks));
  }
}

TEST_CASE("circulant reduce_scatter_block: every p but 1000, counts 0/1/odd/large, n = 1, 2, q, q+1, 7, auto") {
  // p = 1000: every part is non-empty, O(p^2) regions; reduce_scatter and allreduce cover
  // p = 1000 with sparse parts instead.
  for (int p : all_ps()) {
    if (p == 1000) continue;
    for (int blocks : all_to_all_blocks(p)) {
      std::vector<std::uint64_t> counts = {0, 1, 3u * static_cast<std::uint64_t>(std::max(blocks, 2)) + 1};
      if (blocks == 0) counts.push_back(large_block(p));
      for (std::uint64_t count : counts)
        check_circulant(circulant_call(collective::reduce_scatter_block, p, count, blocks));
    }
  }
  for (const auto& [type, o] : std::vector<std::pair<datatype, op>>{{datatype_of<double>(), ops::sum},
                                                                    {datatype_of<std::int32_t>(), ops::min},
                                                                    {datatype_of<double>(), ops::max},
                                                                    {datatype_of<std::int32_t>(), ops::bxor}})
    for (int p : {3, 8, 17, 22})
      check_circulant(circulant_call(collective::reduce_scatter_block, p, 29, 0, 0, type, o));
}

TEST_CASE("circulant reduce_scatter: one rank has everything, zeros interspersed, random") {
  for (int p : all_ps()) {
    const bool large_p = p > 200;
    const std::vector<int> blocks_list = irregular_blocks(p);
    for (const auto& counts : irregular_counts(p, large_p))
      for (int blocks : blocks_list) check_circulant(circulant_vcall(collective::reduce_scatter, counts, blocks));
  }
  for (int p : {5, 16, 19}) {
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), 0);
    counts[static_cast<std::size_t>(p - 1)] = 10007;
    check_circulant(circulant_vcall(collective::reduce_scatter, counts, 0, datatype_of<double>(), ops::max));
    check_circulant(circulant_vcall(collective::reduce_scatter, counts, 7, datatype_of<std::int32_t>(), ops::bxor));
  }
}

TEST_CASE("circulant allreduce: every p, counts 0/1/odd/large, n = 1, 2, q, q+1, 7, auto") {
  for (int p : all_ps()) {
    if (p == 1000) {  // count < p leaves most of the p parts empty: cheap at p = 1000
      for (std::uint64_t count : {1u, 37u}) check_circulant(circulant_call(collective::allreduce, p, count, 1));
      check_circulant(circulant_call(collective::allreduce, p, 150, 0));
      continue;
    }
    if (p > 40) {  // p parts of up to ~p regions per round each: smaller counts and n
      const auto up = static_cast<std::uint64_t>(p);
      for (std::uint64_t count : {0ul, 1ul, 4 * up + 3})
        check_circulant(circulant_call(collective::allreduce, p, count, 1));
      check_circulant(circulant_call(collective::allreduce, p, 10 * up + 3, 3));
      check_circulant(circulant_call(collective::allreduce, p, 2 * up + 5, 0));
      continue;
    }
    for (int blocks : block_choices(p)) {
      // count < p leaves parts empty; count = p(3n + 1) + 3 makes every part hold more than n.
      const auto n = static_cast<std::uint64_t>(std::max(blocks, 1));
      std::vector<std::uint64_t> counts = {0, 1, static_cast<std::uint64_t>(p) * (3 * n + 1) + 3};
      if ((blocks == 0 && p <= 24) || (blocks == 7 && p <= 9)) counts.push_back(10007);
      for (std::uint64_t count : counts) check_circulant(circulant_call(collective::allreduce, p, count, blocks));
    }
  }
  const std::vector<std::pair<datatype, op>> cases = {{datatype_of<double>(), ops::sum},
                                                      {datatype_of<double>(), ops::min},
                                                      {datatype_of<std::int32_t>(), ops::max},
                                                      {datatype_of<std::int32_t>(), ops::bxor}};
  for (int p : {2, 7, 16, 23, 64})
    for (const auto& [type, o] : cases) check_circulant(circulant_call(collective::allreduce, p, 333, 0, 0, type, o));
}

TEST_CASE("circulant allreduce in place and bcast through the comm API") {
  for (int p : {1, 3, 8}) {
    std::vector<int> ok(static_cast<std::size_t>(p), 0);
    run(p, [&](comm& c) {
      std::vector<std::int64_t> v(1000);
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>(i) * (c.rank() + 1);
      c.allreduce(v, ops::sum, algo{"circulant", {.blocks = 5}});  // in place
      const std::int64_t factor = static_cast<std::int64_t>(p) * (p + 1) / 2;
      bool good = true;
      for (std::size_t i = 0; i < v.size(); ++i) good = good && v[i] == static_cast<std::int64_t>(i) * factor;
      std::vector<std::int64_t> b(777, c.rank() == p - 1 ? 42 : -1);
      c.bcast(b, p - 1, algo{"circulant", {.blocks = 3}});
      for (auto x : b) good = good && x == 42;
      ok[static_cast<std::size_t>(c.rank())] = good ? 1 : 0;
    });
    INFO("p = " << p);
    CHECK(std::count(ok.begin(), ok.end(), 1) == p);
  }
}

TEST_CASE("circulant reductions reject a non-commutative operator with a clear usage_error") {
  const op noncomm = matrix2x2_product();
  const datatype m2 = datatype_of<matrix2x2>();
  for (collective coll :
       {collective::reduce, collective::reduce_scatter_block, collective::reduce_scatter, collective::allreduce}) {
    for (int p : {2, 5, 8}) {
      for (executor_kind ex : {executor_kind::sequential, executor_kind::threads}) {
        call c = circulant_call(coll, p, 12, 2, p - 1, m2, noncomm);
        if (coll == collective::reduce_scatter) c.args.counts.assign(static_cast<std::size_t>(p), 3);
        INFO(label(c, ex));
        std::string message;
        try {
          (void)run_check(c, ex);
          FAIL_CHECK("no error for a non-commutative operator");
        } catch (const usage_error& e) {
          message = e.what();
        } catch (const std::exception& e) {
          FAIL_CHECK(fmt::format("wrong exception type: {}", e.what()));
        }
        INFO("message: " << message);
        CHECK(message.find("commutative") != std::string::npos);
        CHECK(message.find("circulant") != std::string::npos);
        // The message names the algorithms that accept the call (or says there are none).
        call other = c;
        other.choice.name = "auto";
        const auto accepting = algorithms_accepting(other);
        if (accepting.empty()) {
          CHECK(message.find("none") != std::string::npos);
        } else {
          for (const auto& name : accepting) CHECK(message.find(name) != std::string::npos);
        }
      }
      // build_all (verifier path) refuses too.
      call c = circulant_call(coll, p, 12, 2, 0, m2, noncomm);
      if (coll == collective::reduce_scatter) c.args.counts.assign(static_cast<std::size_t>(p), 3);
      CHECK_THROWS_AS(build_all(*registry::find(coll, "circulant"), prepared(c)), usage_error);
    }
  }
}

TEST_CASE("circulant registry entries") {
  for (collective coll : {collective::bcast, collective::reduce, collective::allgather, collective::allgatherv,
                          collective::reduce_scatter_block, collective::reduce_scatter, collective::allreduce}) {
    const algorithm* a = registry::find(coll, "circulant");
    REQUIRE(a != nullptr);
    CHECK((a->build != nullptr));
    CHECK((a->cost != nullptr));
    CHECK_FALSE(a->needs_power_of_two);
    CHECK(a->needs_commutative == is_reduction(coll));
  }
}
