// allreduce: every algorithm against the sequential reference (rank-ordered), every p in
// 1..33 and some large p, counts 0, 1, p-1, not divisible by p and 1000, integer and floating
// types, min/max, and the non-commutative 2x2 matrix product where the algorithm claims it;
// in-place calls; bitwise reproducibility; and the properties of the generalized allreduce
// (seed 002): 2 ceil(log2 p) - r rounds, the volume of equation (36) / (44), recursive
// halving + doubling step for step and recursive doubling's rounds for p a power of two,
// r chosen by equation (37).
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "collective_checks.hpp"
#include "patterns/generalized_allreduce_util.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

namespace gen = ranklab::detail::generalized;

constexpr const char* algorithms[] = {"rabenseifner", "ring", "segmented_ring", "reduce_bcast", "generalized"};

struct op_case {
  datatype type;
  op reduction;
};
const op_case int_sum{datatype_of<std::int32_t>(), ops::sum};
const op_case float_sum{datatype_of<double>(), ops::sum};
const op_case int_min{datatype_of<std::int32_t>(), ops::min};
const op_case float_max{datatype_of<double>(), ops::max};
const op_case matmul{datatype_of<matrix2x2>(), matrix2x2_product()};

bool claims(std::string_view algo, const op& o) {
  const algorithm* a = registry::find(collective::allreduce, algo);
  REQUIRE_MESSAGE(a != nullptr, std::string(algo));
  return o.commutative || !a->needs_commutative;
}

call allreduce_call(std::string_view algo, int p, std::uint64_t count, const op_case& oc, algo_params params = {}) {
  call c = make_call(collective::allreduce, algo, p, count, 0, oc.type, oc.reduction);
  c.args.params = params;
  return c;
}

algo_params with_r(int r) {
  algo_params prm;
  prm.removed_steps = r;
  return prm;
}
algo_params with_segment(std::uint64_t s) {
  algo_params prm;
  prm.segment = s;
  return prm;
}

// Parameter variants worth running for an algorithm at p ranks.
std::vector<algo_params> variants(std::string_view algo, int p) {
  if (algo == "generalized") {
    std::vector<algo_params> v{with_r(-1)};
    for (int r = 0; r <= gen::levels(p); ++r) v.push_back(with_r(r));
    return v;
  }
  if (algo == "segmented_ring") return {with_segment(0), with_segment(1), with_segment(3)};
  return {algo_params{}};
}

verify_report run(const call& c, executor_kind ex) {
  if (!claims(c.choice.name, c.reduction)) return {};
  return expect_verified(c, ex).report;
}

verify_report build_and_verify(call c) {
  c.args.commutative = c.reduction.commutative;
  c.args.elem_size = c.type.size;
  const algorithm* a = registry::find(c.args.coll, c.choice.name);
  REQUIRE(a != nullptr);
  const verify_report r = verify(build_all(*a, c.args));
  CHECK_MESSAGE(r.ok, (r.problems.empty() ? "" : r.problems.front()));
  return r;
}

// Elements sent in each round, summed over ranks.
std::vector<std::uint64_t> per_round_volume(call c) {
  c.args.commutative = c.reduction.commutative;
  const schedule_set all = build_all(*registry::find(c.args.coll, c.choice.name), c.args);
  std::vector<std::uint64_t> v;
  for (const schedule& s : all)
    for (std::size_t i = 0; i < s.rounds().size(); ++i) {
      if (v.size() <= i) v.resize(i + 1, 0);
      if (s.rounds()[i].send_to != no_rank) v[i] += s.send_count(s.rounds()[i]);
    }
  while (!v.empty() && v.back() == 0) v.pop_back();
  return v;
}

// Random doubles of very different magnitudes: sums depend on the combination order.
std::vector<std::vector<double>> random_inputs(int p, std::uint64_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::vector<std::vector<double>> in(p, std::vector<double>(n));
  for (auto& v : in)
    for (auto& x : v) x = std::ldexp(mant(rng), static_cast<int>(rng() % 60) - 30);
  return in;
}

std::vector<std::vector<double>> run_sequential(const call& c, const std::vector<std::vector<double>>& in) {
  coll_args args = c.args;
  args.commutative = c.reduction.commutative;
  args.elem_size = c.type.size;
  const schedule_set all = build_all(*registry::find(args.coll, c.choice.name), args);
  std::vector<std::vector<double>> out(in.size(), std::vector<double>(args.count));
  std::vector<rank_buffers> bufs;
  for (std::size_t r = 0; r < in.size(); ++r) bufs.push_back({in[r].data(), out[r].data()});
  execute_sequential(all, bufs, c.type, c.reduction);
  return out;
}

std::vector<std::vector<double>> run_threads(const call& c, const std::vector<std::vector<double>>& in, bool in_place) {
  std::vector<std::vector<double>> out(in.size(), std::vector<double>(c.args.count));
  if (in_place) out = in;
  ranklab::run(c.args.p, [&](comm& cm) {
    const int r = cm.rank();
    cm.run_collective(c, in_place ? out[r].data() : in[r].data(), out[r].data());
  });
  return out;
}

bool bitwise_equal(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t r = 0; r < a.size(); ++r)
    if (a[r].size() != b[r].size() || std::memcmp(a[r].data(), b[r].data(), a[r].size() * sizeof(double)) != 0)
      return false;
  return true;
}

}  // namespace

TEST_CASE("allreduce: every algorithm, p = 1..33, sequential executor") {
  for (const char* algo : algorithms)
    for (int p = 1; p <= 33; ++p)
      for (const algo_params& prm : variants(algo, p)) {
        const std::uint64_t up = static_cast<std::uint64_t>(p);
        for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, up - 1, 2 * up + 3, std::uint64_t{1000}})
          run(allreduce_call(algo, p, n, int_sum, prm), executor_kind::sequential);
        for (const op_case& oc : {float_sum, int_min, float_max, matmul})
          run(allreduce_call(algo, p, 2 * up + 3, oc, prm), executor_kind::sequential);
      }
}

TEST_CASE("allreduce: large p, sequential executor") {
  for (const char* algo : algorithms)
    for (int p : {100, 127, 128, 129}) {
      std::vector<algo_params> prms = variants(algo, p);
      if (prms.size() > 4) prms = {with_r(-1), with_r(0), with_r(1), with_r(gen::levels(p) - 1), with_r(gen::levels(p))};
      run(allreduce_call(algo, p, 1000, int_sum, prms.front()), executor_kind::sequential);
      for (const algo_params& prm : prms) {
        run(allreduce_call(algo, p, 0, int_sum, prm), executor_kind::sequential);
        run(allreduce_call(algo, p, static_cast<std::uint64_t>(p) + 3, int_sum, prm), executor_kind::sequential);
        run(allreduce_call(algo, p, static_cast<std::uint64_t>(p) + 3, matmul, prm), executor_kind::sequential);
      }
    }
}

TEST_CASE("allreduce: thread executor") {
  for (const char* algo : algorithms)
    for (int p : {1, 2, 3, 4, 5, 7, 8, 16, 17}) {
      std::vector<algo_params> prms = variants(algo, p);
      if (std::string_view(algo) == "generalized") {
        prms = {with_r(-1), with_r(0)};
        for (int r = 1; r <= gen::levels(p); r += std::max(1, gen::levels(p) - 1)) prms.push_back(with_r(r));
      }
      for (const algo_params& prm : prms) {
        for (std::uint64_t n : {0, 1, 1000}) run(allreduce_call(algo, p, n, int_sum, prm), executor_kind::threads);
        run(allreduce_call(algo, p, 2 * static_cast<std::uint64_t>(p) + 3, float_sum, prm), executor_kind::threads);
        run(allreduce_call(algo, p, 2 * static_cast<std::uint64_t>(p) + 3, matmul, prm), executor_kind::threads);
      }
    }
}

TEST_CASE("allreduce: in place, thread executor") {
  for (const char* algo : algorithms)
    for (int p : {1, 3, 4, 7, 16}) {
      const std::uint64_t n = 2 * static_cast<std::uint64_t>(p) + 5;
      for (const algo_params& prm : variants(algo, p)) {
        const call c = allreduce_call(algo, p, n, float_sum, prm);
        const auto in = random_inputs(p, n, 7);
        INFO(label(c, executor_kind::threads));
        CHECK(bitwise_equal(run_threads(c, in, /*in_place=*/true), run_sequential(c, in)));
      }
    }
}

TEST_CASE("allreduce: floating-point results are bitwise reproducible") {
  // Inputs of very different magnitudes, so a different combination order would show.
  for (const char* algo : algorithms)
    for (int p : {5, 8, 13}) {
      const std::uint64_t n = 3 * static_cast<std::uint64_t>(p) + 1;
      for (const algo_params& prm : variants(algo, p)) {
        const call c = allreduce_call(algo, p, n, float_sum, prm);
        const auto in = random_inputs(p, n, 11);
        INFO(label(c, executor_kind::sequential));
        const auto first = run_sequential(c, in);
        CHECK(bitwise_equal(first, run_sequential(c, in)));
        CHECK(bitwise_equal(first, run_threads(c, in, false)));
        CHECK(bitwise_equal(first, run_threads(c, in, false)));
        // Every rank gets the same bits when each part is reduced once and then copied.
        // The generalized allreduce with r > 0 reduces its K = N_{L-r} result vectors along
        // K shifted trees; for p not a power of two these trees differ (the q* of odd steps
        // sit elsewhere), so ranks may differ in the last bits (exact arithmetic: equal).
        const bool one_tree = std::string_view(algo) != "generalized" || prm.removed_steps == 0 ||
                              std::has_single_bit(static_cast<unsigned>(p));
        for (std::uint64_t i = 0; i < n; ++i) {
          double scale = 0;  // rounding errors are bounded relative to the sum of magnitudes
          for (int r = 0; r < p; ++r) scale += std::abs(in[r][i]);
          for (int r = 1; r < p; ++r) {
            if (one_tree) CHECK(std::memcmp(&first[r][i], &first[0][i], sizeof(double)) == 0);
            else CHECK(std::abs(first[r][i] - first[0][i]) <= 1e-14 * scale);
          }
        }
      }
    }
}

TEST_CASE("allreduce generalized: 2 ceil(log2 p) - r rounds and the volume of equation (36) / (44)") {
  std::vector<int> ps;
  for (int p = 1; p <= 40; ++p) ps.push_back(p);
  for (int p : {63, 64, 65, 100, 127, 128, 129}) ps.push_back(p);
  for (int p : ps) {
    const int L = gen::levels(p);
    for (int r = 0; r <= L; ++r)
      for (std::uint64_t n : {std::uint64_t{0}, static_cast<std::uint64_t>(p), 3 * static_cast<std::uint64_t>(p) + 2}) {
        INFO("p = " << p << ", r = " << r << ", count = " << n);
        const verify_report rep = build_and_verify(allreduce_call("generalized", p, n, int_sum, with_r(r)));
        CHECK(rep.rounds == static_cast<std::size_t>(2 * L - r));
        // Every vector (placement) sent by every rank moves one part per rank: m elements in
        // total over the ranks, whatever the split of m into p parts.
        const std::uint64_t parts = gen::volume_parts(p, r);
        CHECK(rep.elements == parts * n);
        CHECK(gen::exact_volume(p, r).sent == parts);
        if (p == 1) continue;
        if (r == L) {
          CHECK(parts == static_cast<std::uint64_t>(p) * L);  // equation (44): P ceil(log P) u
        } else {
          // Equation (36) with 2^r results; the schedule keeps only the N_{L-r} <= 2^r it needs.
          CHECK(static_cast<double>(parts) <= gen::eq36_parts_beta(p, r));
          if (std::has_single_bit(static_cast<unsigned>(p))) CHECK(static_cast<double>(parts) == gen::eq36_parts_beta(p, r));
          if (r == 0) CHECK(parts == 2 * static_cast<std::uint64_t>(p - 1));  // bandwidth-optimal
        }
      }
  }
}

TEST_CASE("allreduce generalized: p a power of two, r = 0 is recursive halving + doubling step for step") {
  for (int p : {2, 4, 8, 16, 32, 64}) {
    for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, static_cast<std::uint64_t>(p), std::uint64_t{1000}}) {
      INFO("p = " << p << ", count = " << n);
      const call g = allreduce_call("generalized", p, n, int_sum, with_r(0));
      const call rab = allreduce_call("rabenseifner", p, n, int_sum);
      const verify_report a = build_and_verify(g), b = build_and_verify(rab);
      CHECK(a.rounds == b.rounds);
      CHECK(a.rounds == static_cast<std::size_t>(2 * gen::levels(p)));
      CHECK(a.elements == b.elements);
      CHECK(a.messages == b.messages);
      CHECK(per_round_volume(g) == per_round_volume(rab));
    }
    // r = log2 p: recursive doubling's rounds and volume (the whole vector in every round).
    const std::uint64_t n = 96;
    const verify_report lo = build_and_verify(allreduce_call("generalized", p, n, int_sum, with_r(gen::levels(p))));
    const verify_report rd = build_and_verify(allreduce_call("recursive_doubling", p, n, int_sum));
    CHECK(lo.rounds == rd.rounds);
    CHECK(lo.elements == rd.elements);
    CHECK(per_round_volume(allreduce_call("generalized", p, n, int_sum, with_r(gen::levels(p)))) ==
          per_round_volume(allreduce_call("recursive_doubling", p, n, int_sum)));
  }
}

TEST_CASE("allreduce generalized: r = -1 follows equation (37)") {
  const cost_model m{};
  for (int p : {3, 5, 7, 8, 17, 31, 64, 127, 129})
    for (std::uint64_t n : {1, 16, 100, 1000, 10000, 100000, 1000000}) {
      const int L = gen::levels(p);
      const double bytes = static_cast<double>(n) * 8;  // float64
      // Equation (37), written out again here, rounded to the better neighbouring integer by
      // (36) within 0 .. L-1, where (36) holds; then the latency-optimal r = L by (44).
      const double x = std::log2(m.alpha / (bytes * (m.beta + 2 * m.gamma))) + std::log2(p / ((L - 1) * std::log(2.0)));
      const int lo = std::clamp(static_cast<int>(std::floor(x)), 0, L - 1), hi = std::min(lo + 1, L - 1);
      int want = gen::paper_time(p, hi, bytes, m) < gen::paper_time(p, lo, bytes, m) ? hi : lo;
      if (gen::paper_time(p, L, bytes, m) < gen::paper_time(p, want, bytes, m)) want = L;
      INFO("p = " << p << ", count = " << n << ", eq. 37 = " << x);
      CHECK(gen::auto_removed_steps(p, bytes, m) == want);
      const verify_report rep = build_and_verify(allreduce_call("generalized", p, n, float_sum, with_r(-1)));
      CHECK(rep.rounds == static_cast<std::size_t>(2 * L - want));
      // Small messages: latency-optimal; huge ones: bandwidth-optimal.
      if (n == 1) CHECK(want == L);
      if (n == 1000000) CHECK(want == 0);
    }
  // The automatic choice is never worse in the model than its neighbours.
  for (int p : {7, 17, 100})
    for (double bytes : {1e3, 1e4, 1e5}) {
      const int r = gen::auto_removed_steps(p, bytes, m);
      for (int other = 0; other <= gen::levels(p); ++other)
        if (std::abs(other - r) == 1) CHECK(gen::paper_time(p, r, bytes, m) <= gen::paper_time(p, other, bytes, m) * (1 + 1e-12));
    }
}

TEST_CASE("allreduce: round counts and volumes of the other algorithms") {
  for (int p = 1; p <= 40; ++p) {
    INFO("p = " << p);
    const std::uint64_t n = 64 * static_cast<std::uint64_t>(p);
    const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
    const int lg = std::bit_width(static_cast<unsigned>(pof2)) - 1, L = gen::levels(p);
    const verify_report ring = build_and_verify(allreduce_call("ring", p, n, int_sum));
    CHECK(ring.rounds == static_cast<std::size_t>(2 * (p - 1)));
    CHECK(ring.elements == 2 * static_cast<std::uint64_t>(p - 1) * n);  // 2(p-1)/p m per rank
    const verify_report seg = build_and_verify(allreduce_call("segmented_ring", p, n, int_sum, with_segment(16)));
    CHECK(seg.rounds == static_cast<std::size_t>(2 * (p - 1) * 4));  // chunks of 64 in 4 segments
    CHECK(seg.elements == ring.elements);
    CHECK(seg.max_message <= 16);
    const verify_report rb = build_and_verify(allreduce_call("reduce_bcast", p, n, int_sum));
    CHECK(rb.rounds == static_cast<std::size_t>(2 * L));
    CHECK(rb.elements == 2 * static_cast<std::uint64_t>(p - 1) * n);
    const verify_report rab = build_and_verify(allreduce_call("rabenseifner", p, n, int_sum));
    CHECK(rab.rounds == static_cast<std::size_t>(2 * lg + (p == pof2 ? 0 : 2)));
    CHECK(rab.elements == 2 * static_cast<std::uint64_t>(pof2 - 1) * n + 2 * static_cast<std::uint64_t>(p - pof2) * n);
  }
}

TEST_CASE("allreduce: registry entries and preconditions") {
  const auto find = [](const char* a) { return registry::find(collective::allreduce, a); };
  CHECK_FALSE(find("rabenseifner")->needs_commutative);
  CHECK(find("ring")->needs_commutative);
  CHECK(find("segmented_ring")->needs_commutative);
  CHECK_FALSE(find("reduce_bcast")->needs_commutative);
  CHECK(find("generalized")->needs_commutative);
  CHECK(std::string(find("rabenseifner")->composition).find("reduce-scatter + allgather") != std::string::npos);
  for (const char* algo : algorithms) {
    CHECK_FALSE(find(algo)->needs_power_of_two);
    CHECK(static_cast<bool>(find(algo)->cost));
  }
  CHECK_THROWS_AS(run_check(allreduce_call("generalized", 5, 3, matmul), executor_kind::sequential), usage_error);
  for (int r : {-2, 4, 100})
    CHECK_THROWS_AS(run_check(allreduce_call("generalized", 5, 3, int_sum, with_r(r)), executor_kind::sequential),
                    usage_error);
}
