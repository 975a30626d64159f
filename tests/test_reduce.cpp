// reduce: every algorithm against the sequential reference (rank-ordered), every p in 1..33
// and some large p, several roots, counts 0, 1, p-1, not divisible by p and 1000, integer and
// floating types, min/max, and the non-commutative 2x2 matrix product where the algorithm
// claims it; algorithm parameters (segments, radix); round counts and volumes.
#include <doctest/doctest.h>

#include <bit>
#include <set>
#include <string>
#include <vector>

#include "collective_checks.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

constexpr const char* algorithms[] = {"linear", "binomial", "inorder_binomial", "chain", "rabenseifner", "knomial"};

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
  const algorithm* a = registry::find(collective::reduce, algo);
  REQUIRE_MESSAGE(a != nullptr, std::string(algo));
  return o.commutative || !a->needs_commutative;
}

call reduce_call(std::string_view algo, int p, std::uint64_t count, int root, const op_case& oc,
                 algo_params params = {}) {
  call c = make_call(collective::reduce, algo, p, count, root, oc.type, oc.reduction);
  c.args.params = params;
  return c;
}

verify_report run(const call& c, executor_kind ex) {
  if (!claims(c.choice.name, c.reduction)) return {};
  return expect_verified(c, ex).report;
}

std::set<int> roots_of(int p) { return {0, p - 1, p / 2}; }

verify_report build_and_verify(call c) {
  c.args.commutative = c.reduction.commutative;
  c.args.elem_size = c.type.size;
  const algorithm* a = registry::find(c.args.coll, c.choice.name);
  REQUIRE(a != nullptr);
  const verify_report r = verify(build_all(*a, c.args));
  CHECK_MESSAGE(r.ok, (r.problems.empty() ? "" : r.problems.front()));
  return r;
}

int ceil_log2(int p) { return p <= 1 ? 0 : std::bit_width(static_cast<unsigned>(p - 1)); }

}  // namespace

TEST_CASE("reduce: every algorithm, p = 1..33, roots 0, p-1, p/2, sequential executor") {
  for (const char* algo : algorithms)
    for (int p = 1; p <= 33; ++p)
      for (int root : roots_of(p)) {
        const std::uint64_t up = static_cast<std::uint64_t>(p);
        for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, up - 1, 2 * up + 3, std::uint64_t{1000}}) {
          run(reduce_call(algo, p, n, root, int_sum), executor_kind::sequential);
          if (n != 1000) run(reduce_call(algo, p, n, root, matmul), executor_kind::sequential);
        }
        for (const op_case& oc : {float_sum, int_min, float_max})
          run(reduce_call(algo, p, 2 * up + 3, root, oc), executor_kind::sequential);
      }
}

TEST_CASE("reduce: large p, sequential executor") {
  for (const char* algo : algorithms)
    for (int p : {100, 127, 128, 129})
      for (int root : {0, p / 2}) {
        run(reduce_call(algo, p, 0, root, int_sum), executor_kind::sequential);
        run(reduce_call(algo, p, 1000, root, int_sum), executor_kind::sequential);
        run(reduce_call(algo, p, static_cast<std::uint64_t>(p) + 3, root, matmul), executor_kind::sequential);
      }
}

TEST_CASE("reduce: thread executor") {
  for (const char* algo : algorithms)
    for (int p : {1, 2, 3, 4, 5, 7, 8, 16, 17})
      for (int root : roots_of(p)) {
        for (std::uint64_t n : {0, 1, 1000}) run(reduce_call(algo, p, n, root, int_sum), executor_kind::threads);
        run(reduce_call(algo, p, 2 * static_cast<std::uint64_t>(p) + 3, root, float_sum), executor_kind::threads);
        run(reduce_call(algo, p, 2 * static_cast<std::uint64_t>(p) + 3, root, matmul), executor_kind::threads);
      }
}

TEST_CASE("reduce: parameters (chain segments, k-nomial radix)") {
  for (int p : {1, 2, 3, 6, 9, 16, 17, 33})
    for (int root : roots_of(p)) {
      for (std::uint64_t segment : {1, 4, 7, 2000}) {
        algo_params prm;
        prm.segment = segment;
        for (std::uint64_t n : {0, 1, 50}) {
          run(reduce_call("chain", p, n, root, int_sum, prm), executor_kind::sequential);
          const verify_report r = build_and_verify(reduce_call("chain", p, n, root, int_sum, prm));
          const std::uint64_t segments = n == 0 ? 1 : (n + std::min(segment, n) - 1) / std::min(segment, n);
          if (p > 1) CHECK(r.rounds == static_cast<std::size_t>(p - 2) + segments);
        }
      }
      for (int radix : {2, 3, 4, 5, 8, 40}) {
        algo_params prm;
        prm.radix = radix;
        for (std::uint64_t n : {0, 9}) run(reduce_call("knomial", p, n, root, int_sum, prm), executor_kind::sequential);
        run(reduce_call("knomial", p, 9, root, float_sum, prm), executor_kind::threads);
        const verify_report r = build_and_verify(reduce_call("knomial", p, 9, root, int_sum, prm));
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
    for (int root : roots_of(p)) {
      INFO("p = " << p << ", root = " << root);
      const std::uint64_t n = 64;
      const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
      const int lg = std::bit_width(static_cast<unsigned>(pof2)) - 1;
      const verify_report lin = build_and_verify(reduce_call("linear", p, n, root, int_sum));
      CHECK(lin.rounds == static_cast<std::size_t>(p - 1));
      CHECK(lin.elements == static_cast<std::uint64_t>(p - 1) * n);
      for (const char* algo : {"binomial", "inorder_binomial"}) {
        const verify_report r = build_and_verify(reduce_call(algo, p, n, root, int_sum));
        CHECK(r.rounds == static_cast<std::size_t>(ceil_log2(p)));  // no extra hop to a non-zero root
        CHECK(r.messages == static_cast<std::uint64_t>(p - 1));
        CHECK(r.elements == static_cast<std::uint64_t>(p - 1) * n);
      }
      // reduce-scatter + gather: 2 log2 p' rounds (+1 to fold). Volume (n divisible by p'):
      // folding (p - p') n, halving (p'-1) n over all ranks (the root's share: (p'-1)/p' n),
      // gather log2 p' n / 2 (chunk of survivor v travels popcount(v xor root) hops).
      const verify_report rab = build_and_verify(reduce_call("rabenseifner", p, n, root, int_sum));
      CHECK(rab.rounds == static_cast<std::size_t>(2 * lg + (p == pof2 ? 0 : 1)));
      CHECK(rab.elements == static_cast<std::uint64_t>(p - pof2) * n + static_cast<std::uint64_t>(pof2 - 1) * n +
                                static_cast<std::uint64_t>(lg) * n / 2);
    }
}

TEST_CASE("reduce: the in-order binomial tree combines contiguous rank ranges for every root") {
  // The non-commutative operator checks the order element by element; here also every
  // p and root up to 64 on the sequential executor with 2x2 matrices.
  for (int p = 34; p <= 64; p += 3)
    for (int root = 0; root < p; root += 5) run(reduce_call("inorder_binomial", p, 3, root, matmul), executor_kind::sequential);
}

TEST_CASE("reduce: registry entries") {
  const auto find = [](const char* a) { return registry::find(collective::reduce, a); };
  CHECK_FALSE(find("linear")->needs_commutative);
  CHECK(find("binomial")->needs_commutative);
  CHECK_FALSE(find("inorder_binomial")->needs_commutative);
  CHECK(find("chain")->needs_commutative);
  CHECK_FALSE(find("rabenseifner")->needs_commutative);
  CHECK(find("knomial")->needs_commutative);
  CHECK(std::string(find("rabenseifner")->composition).find("reduce-scatter + gather") != std::string::npos);
  for (const char* algo : algorithms) {
    CHECK_FALSE(find(algo)->needs_power_of_two);
    CHECK(static_cast<bool>(find(algo)->cost));
  }
  CHECK_THROWS_AS(run_check(reduce_call("binomial", 5, 3, 2, matmul), executor_kind::sequential), usage_error);
}
