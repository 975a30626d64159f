// reduce: the claims of the registered algorithms -- algorithm parameters (chain segments,
// k-nomial radix), round counts and volumes, the in-order binomial tree's rank order for
// every root, and which operators each accepts. Results against the reference
// (rank-ordered, several roots, the non-commutative 2x2 matrix product where an algorithm
// accepts it): test_conformance.cpp. See docs/algorithms.md, "reduce".
#include <doctest/doctest.h>

#include <bit>
#include <string>
#include <vector>

#include "collective_checks.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

call reduce_call(std::string_view algo, int p, std::uint64_t count, int root, const operand& o = int_sum,
                 algo_params params = {}) {
  return make_call(collective::reduce, p, count, root, o.type, o.reduction, {algo, params});
}

}  // namespace

TEST_CASE("reduce: parameters (chain segments, k-nomial radix)") {
  for (int p : {1, 2, 3, 6, 9, 16, 17, 33})
    for (int root : roots_for(p)) {
      for (std::uint64_t segment : {1, 4, 7, 2000}) {
        algo_params prm;
        prm.segment = segment;
        for (std::uint64_t n : {0, 1, 50}) {
          expect_verified(reduce_call("chain", p, n, root, int_sum, prm), executor_kind::sequential);
          const verify_report r = report_of(reduce_call("chain", p, n, root, int_sum, prm));
          const std::uint64_t segments = n == 0 ? 1 : (n + std::min(segment, n) - 1) / std::min(segment, n);
          if (p > 1) CHECK(r.rounds == static_cast<std::size_t>(p - 2) + segments);
        }
      }
      for (int radix : {2, 3, 4, 5, 8, 40}) {
        algo_params prm;
        prm.radix = radix;
        for (std::uint64_t n : {0, 9})
          expect_verified(reduce_call("knomial", p, n, root, int_sum, prm), executor_kind::sequential);
        expect_verified(reduce_call("knomial", p, 9, root, float_sum, prm), executor_kind::threads);
        const verify_report r = report_of(reduce_call("knomial", p, 9, root, int_sum, prm));
        int levels = 0;
        for (std::int64_t pw = 1; pw < p; pw *= radix) ++levels;
        CHECK(r.rounds <= static_cast<std::size_t>((radix - 1) * levels));
        if (radix == 2) CHECK(r.rounds == static_cast<std::size_t>(ceil_log2(p)));
        CHECK(r.messages == static_cast<std::uint64_t>(p - 1));  // a tree: one message per non-root
      }
    }
  algo_params bad;
  bad.radix = 1;
  CHECK_THROWS_AS(run_check(reduce_call("knomial", 4, 3, 0, int_sum, bad), executor_kind::sequential), usage_error);
}

TEST_CASE("reduce: round counts and volumes") {
  for (int p = 1; p <= 40; ++p)
    for (int root : roots_for(p)) {
      INFO("p = " << p << ", root = " << root);
      const std::uint64_t n = 64;
      const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
      const int lg = floor_log2(p);
      const verify_report lin = report_of(reduce_call("linear", p, n, root));
      CHECK(lin.rounds == static_cast<std::size_t>(p - 1));
      CHECK(lin.elements == static_cast<std::uint64_t>(p - 1) * n);
      for (const char* algo : {"binomial", "inorder_binomial"}) {
        const verify_report r = report_of(reduce_call(algo, p, n, root));
        CHECK(r.rounds == static_cast<std::size_t>(ceil_log2(p)));  // no extra hop to a non-zero root
        CHECK(r.messages == static_cast<std::uint64_t>(p - 1));
        CHECK(r.elements == static_cast<std::uint64_t>(p - 1) * n);
      }
      // reduce-scatter + gather: 2 log2 p' rounds (+1 to fold). Volume (n divisible by p'):
      // folding (p - p') n, halving (p'-1) n over all ranks (the root's share: (p'-1)/p' n),
      // gather log2 p' n / 2 (chunk of survivor v travels popcount(v xor root) hops).
      const verify_report rab = report_of(reduce_call("rabenseifner", p, n, root));
      CHECK(rab.rounds == static_cast<std::size_t>(2 * lg + (p == pof2 ? 0 : 1)));
      CHECK(rab.elements == static_cast<std::uint64_t>(p - pof2) * n + static_cast<std::uint64_t>(pof2 - 1) * n +
                                static_cast<std::uint64_t>(lg) * n / 2);
    }
}

TEST_CASE("reduce: the in-order binomial tree combines contiguous rank ranges for every root") {
  // The non-commutative operator checks the order element by element; here also every
  // p and root up to 64 on the sequential executor with 2x2 matrices.
  for (int p = 34; p <= 64; p += 3)
    for (int root = 0; root < p; root += 5)
      expect_verified(reduce_call("inorder_binomial", p, 3, root, matrix_product), executor_kind::sequential);
}

TEST_CASE("reduce: registry entries") {
  check_registry_entries(collective::reduce, {{"linear", false},
                                              {"binomial", true},
                                              {"inorder_binomial", false},
                                              {"chain", true},
                                              {"rabenseifner", false},
                                              {"knomial", true}});
  const algorithm* rabenseifner = registry::find(collective::reduce, "rabenseifner");
  CHECK(std::string(rabenseifner->composition).find("reduce-scatter + gather") != std::string::npos);
  CHECK_THROWS_AS(run_check(reduce_call("binomial", 5, 3, 2, matrix_product), executor_kind::sequential), usage_error);
}
