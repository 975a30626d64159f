// allreduce: the claims of the registered algorithms -- the parameter variants
// (generalized r, segmented_ring segments) against the sequential reference, in-place
// calls, bitwise reproducibility, round counts and volumes, and the properties of the
// generalized allreduce (D. Kolmakov, X. Zhang, "A Generalization of the Allreduce
// Operation"): 2 ceil(log2 p) - r rounds, the volume of equation (36) / (44), recursive
// halving + doubling step for step and recursive doubling's rounds for p a power of two, r
// chosen by equation (37). Results with the default parameters against the reference:
// test_conformance.cpp. See docs/algorithms.md, "allreduce".
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "collective_checks.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

// The generalized allreduce's quantities as D. Kolmakov and X. Zhang state them, written out
// here independently of the builder: L = ceil(log2 p) reduction steps, N_0 = p,
// N_{i+1} = ceil(N_i / 2); removing r distribution steps needs K = N_{L-r} results.
namespace gen {

int levels(int p) { return ceil_log2(p); }

int results(int p, int r) {
  int n = p;
  for (int i = 0; i < levels(p) - r; ++i) n = (n + 1) / 2;
  return n;
}

// Parts (of m/p) sent over all ranks: 2(p-1) + (L-1)(K-1) for r < L (equation (36) with the
// K results the schedule needs instead of its worst case 2^r: equal when p is a power of
// two), p L for r = L (equation (44)).
std::uint64_t volume_parts(int p, int r) {
  const int L = levels(p);
  if (p == 1) return 0;
  if (r == L) return static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(L);
  return 2 * static_cast<std::uint64_t>(p - 1) +
         static_cast<std::uint64_t>(L - 1) * static_cast<std::uint64_t>(results(p, r) - 1);
}

// Equation (36), in parts u = m/p per rank.
double eq36_parts_beta(int p, int r) { return 2.0 * (p - 1) + (std::ldexp(1.0, r) - 1) * (levels(p) - 1); }
double eq36_parts_gamma(int p, int r) { return (p - 1) + (std::ldexp(1.0, r) - 1) * (2.0 * levels(p) - 2); }

// Time by (36) for r < L and (44) for r = L.
double paper_time(int p, int r, double bytes, const cost_model& m) {
  const int L = levels(p);
  if (p <= 1) return 0;
  const double u = bytes / p;
  if (r >= L) return L * m.alpha + p * L * u * m.beta + p * (2.0 * L - 2) * u * m.gamma;
  return (2.0 * L - r) * m.alpha + eq36_parts_beta(p, r) * u * m.beta + eq36_parts_gamma(p, r) * u * m.gamma;
}

}  // namespace gen

call allreduce_call(std::string_view algo, int p, std::uint64_t count, const operand& o = int_sum,
                    algo_params params = {}) {
  return make_call(collective::allreduce, p, count, 0, o.type, o.reduction, {algo, params});
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

// The variants other than the defaults, which test_conformance.cpp runs.
std::vector<algo_params> other_variants(std::string_view algo, int p) {
  std::vector<algo_params> v = variants(algo, p);
  std::erase(v, algo_params{});
  return v;
}

void run(const call& c, executor_kind ex) {
  if (meets_preconditions(*registry::find(c.args.coll, c.choice.name), c.args)) expect_verified(c, ex);
}

// Elements sent in each round, summed over ranks.
std::vector<std::uint64_t> per_round_volume(const call& c) {
  const schedule_set all = plans_of(c);
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
  const schedule_set all = plans_of(c);
  std::vector<std::vector<double>> out(in.size(), std::vector<double>(c.args.count));
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

TEST_CASE("allreduce: parameter variants against the reference, p = 1..33, sequential executor") {
  for (const algorithm* a : registry::for_collective(collective::allreduce))
    for (int p = 1; p <= 33; ++p)
      for (const algo_params& prm : other_variants(a->name, p)) {
        const std::uint64_t up = static_cast<std::uint64_t>(p);
        for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, up - 1, 2 * up + 3, std::uint64_t{1000}})
          run(allreduce_call(a->name, p, n, int_sum, prm), executor_kind::sequential);
        for (const operand& o : {float_sum, int_min, float_max, matrix_product})
          run(allreduce_call(a->name, p, 2 * up + 3, o, prm), executor_kind::sequential);
      }
}

TEST_CASE("allreduce: parameter variants against the reference, large p, sequential executor") {
  for (const algorithm* a : registry::for_collective(collective::allreduce))
    for (int p : {100, 127, 128, 129}) {
      std::vector<algo_params> prms = other_variants(a->name, p);
      if (prms.size() > 4) prms = {with_r(0), with_r(1), with_r(gen::levels(p) - 1), with_r(gen::levels(p))};
      for (const algo_params& prm : prms) {
        run(allreduce_call(a->name, p, 0, int_sum, prm), executor_kind::sequential);
        run(allreduce_call(a->name, p, static_cast<std::uint64_t>(p) + 3, int_sum, prm), executor_kind::sequential);
        run(allreduce_call(a->name, p, static_cast<std::uint64_t>(p) + 3, matrix_product, prm),
            executor_kind::sequential);
      }
    }
}

TEST_CASE("allreduce: parameter variants against the reference, thread executor") {
  for (const algorithm* a : registry::for_collective(collective::allreduce))
    for (int p : {1, 2, 3, 4, 5, 7, 8, 16, 17}) {
      std::vector<algo_params> prms = other_variants(a->name, p);
      if (a->name == "generalized") {
        prms = {with_r(0)};
        for (int r = 1; r <= gen::levels(p); r += std::max(1, gen::levels(p) - 1)) prms.push_back(with_r(r));
      }
      for (const algo_params& prm : prms) {
        for (std::uint64_t n : {0, 1, 1000}) run(allreduce_call(a->name, p, n, int_sum, prm), executor_kind::threads);
        const std::uint64_t n = 2 * static_cast<std::uint64_t>(p) + 3;
        run(allreduce_call(a->name, p, n, float_sum, prm), executor_kind::threads);
        run(allreduce_call(a->name, p, n, matrix_product, prm), executor_kind::threads);
      }
    }
}

TEST_CASE("allreduce: in place, thread executor") {
  for (const algorithm* a : registry::for_collective(collective::allreduce))
    for (int p : {1, 3, 4, 7, 16}) {
      const std::uint64_t n = 2 * static_cast<std::uint64_t>(p) + 5;
      for (const algo_params& prm : variants(a->name, p)) {
        const call c = allreduce_call(a->name, p, n, float_sum, prm);
        if (!meets_preconditions(*a, c.args)) continue;
        const auto in = random_inputs(p, n, 7);
        INFO(label(c, executor_kind::threads));
        CHECK(bitwise_equal(run_threads(c, in, /*in_place=*/true), run_sequential(c, in)));
      }
    }
}

TEST_CASE("allreduce: floating-point results are bitwise reproducible") {
  // Inputs of very different magnitudes, so a different combination order would show.
  for (const algorithm* a : registry::for_collective(collective::allreduce))
    for (int p : {5, 8, 13}) {
      const std::uint64_t n = 3 * static_cast<std::uint64_t>(p) + 1;
      for (const algo_params& prm : variants(a->name, p)) {
        const call c = allreduce_call(a->name, p, n, float_sum, prm);
        if (!meets_preconditions(*a, c.args)) continue;
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
        const bool one_tree =
            a->name != "generalized" || prm.removed_steps == 0 || std::has_single_bit(static_cast<unsigned>(p));
        for (std::uint64_t i = 0; i < n; ++i) {
          double scale = 0;  // rounding errors are bounded relative to the sum of magnitudes
          for (int r = 0; r < p; ++r) scale += std::abs(in[r][i]);
          for (int r = 1; r < p; ++r) {
            if (one_tree)
              CHECK(std::memcmp(&first[r][i], &first[0][i], sizeof(double)) == 0);
            else
              CHECK(std::abs(first[r][i] - first[0][i]) <= 1e-14 * scale);
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
        const verify_report rep = report_of(allreduce_call("generalized", p, n, int_sum, with_r(r)));
        CHECK(rep.rounds == static_cast<std::size_t>(2 * L - r));
        // Every vector (placement) sent by every rank moves one part per rank: m elements in
        // total over the ranks, whatever the split of m into p parts.
        const std::uint64_t parts = gen::volume_parts(p, r);
        CHECK(rep.elements == parts * n);
        if (p == 1) continue;
        if (r == L) {
          CHECK(parts == static_cast<std::uint64_t>(p) * L);  // equation (44): P ceil(log P) u
        } else {
          // Equation (36) with 2^r results; the schedule keeps only the N_{L-r} <= 2^r it needs.
          CHECK(static_cast<double>(parts) <= gen::eq36_parts_beta(p, r));
          if (std::has_single_bit(static_cast<unsigned>(p)))
            CHECK(static_cast<double>(parts) == gen::eq36_parts_beta(p, r));
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
      const verify_report a = report_of(g), b = report_of(rab);
      CHECK(a.rounds == b.rounds);
      CHECK(a.rounds == static_cast<std::size_t>(2 * gen::levels(p)));
      CHECK(a.elements == b.elements);
      CHECK(a.messages == b.messages);
      CHECK(per_round_volume(g) == per_round_volume(rab));
    }
    // r = log2 p: recursive doubling's rounds and volume (the whole vector in every round).
    const std::uint64_t n = 96;
    const verify_report lo = report_of(allreduce_call("generalized", p, n, int_sum, with_r(gen::levels(p))));
    const verify_report rd = report_of(allreduce_call("recursive_doubling", p, n, int_sum));
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
      const verify_report rep = report_of(allreduce_call("generalized", p, n, float_sum, with_r(-1)));
      CHECK(rep.rounds == static_cast<std::size_t>(2 * L - want));
      // Small messages: latency-optimal; huge ones: bandwidth-optimal.
      if (n == 1) CHECK(want == L);
      if (n == 1000000) CHECK(want == 0);
    }
  // The automatic choice (read off the schedule's rounds) is never worse in the model than
  // its neighbours.
  for (int p : {7, 17, 100})
    for (std::uint64_t n : {125, 1250, 12500}) {
      const double bytes = static_cast<double>(n) * 8;
      const verify_report rep = report_of(allreduce_call("generalized", p, n, float_sum, with_r(-1)));
      const int r = 2 * gen::levels(p) - static_cast<int>(rep.rounds);
      for (int other = 0; other <= gen::levels(p); ++other)
        if (std::abs(other - r) == 1)
          CHECK(gen::paper_time(p, r, bytes, m) <= gen::paper_time(p, other, bytes, m) * (1 + 1e-12));
    }
}

TEST_CASE("allreduce: round counts and volumes of the other algorithms") {
  for (int p = 1; p <= 40; ++p) {
    INFO("p = " << p);
    const std::uint64_t n = 64 * static_cast<std::uint64_t>(p);
    const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
    const int lg = std::bit_width(static_cast<unsigned>(pof2)) - 1, L = gen::levels(p);
    const verify_report ring = report_of(allreduce_call("ring", p, n, int_sum));
    CHECK(ring.rounds == static_cast<std::size_t>(2 * (p - 1)));
    CHECK(ring.elements == 2 * static_cast<std::uint64_t>(p - 1) * n);  // 2(p-1)/p m per rank
    const verify_report seg = report_of(allreduce_call("segmented_ring", p, n, int_sum, with_segment(16)));
    CHECK(seg.rounds == static_cast<std::size_t>(2 * (p - 1) * 4));  // chunks of 64 in 4 segments
    CHECK(seg.elements == ring.elements);
    CHECK(seg.max_message <= 16);
    const verify_report rb = report_of(allreduce_call("reduce_bcast", p, n, int_sum));
    CHECK(rb.rounds == static_cast<std::size_t>(2 * L));
    CHECK(rb.elements == 2 * static_cast<std::uint64_t>(p - 1) * n);
    const verify_report rab = report_of(allreduce_call("rabenseifner", p, n, int_sum));
    CHECK(rab.rounds == static_cast<std::size_t>(2 * lg + (p == pof2 ? 0 : 2)));
    CHECK(rab.elements == 2 * static_cast<std::uint64_t>(pof2 - 1) * n + 2 * static_cast<std::uint64_t>(p - pof2) * n);
  }
}

TEST_CASE("allreduce: registry entries and preconditions") {
  check_registry_entries(collective::allreduce, {{"rabenseifner", false},
                                                 {"ring", true},
                                                 {"segmented_ring", true},
                                                 {"reduce_bcast", false},
                                                 {"generalized", true}});
  const algorithm* rabenseifner = registry::find(collective::allreduce, "rabenseifner");
  CHECK(std::string(rabenseifner->composition).find("reduce-scatter + allgather") != std::string::npos);
  CHECK_THROWS_AS(run_check(allreduce_call("generalized", 5, 3, matrix_product), executor_kind::sequential),
                  usage_error);
  for (int r : {-2, 4, 100})
    CHECK_THROWS_AS(run_check(allreduce_call("generalized", 5, 3, int_sum, with_r(r)), executor_kind::sequential),
                    usage_error);
}
