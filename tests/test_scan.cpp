// Scan and exscan: every algorithm against the sequential reference (rank-ordered
// x_0 (+) ... (+) x_r; exscan leaves rank 0's out unchanged) for p = 1..33 (sequential
// executor; thread executor for a set of small p), large p, sum on int32 and float64 and the
// non-commutative 2x2 matrix product, round counts, and in-place calls.
#include "collective_checks.hpp"
#include "patterns/rank_arithmetic.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

const std::vector<std::string> algorithms = {"linear", "recursive_doubling"};
const collective prefix_collectives[] = {collective::scan, collective::exscan};
const int thread_ps[] = {1, 2, 3, 4, 5, 7, 8, 16, 17};
const std::uint64_t counts[] = {0, 1, 3, 1000};

// The three operand kinds every case runs: int32 sum, float64 sum, 2x2 matrix product.
std::vector<call> calls(collective coll, std::string_view algo, int p, std::uint64_t n) {
  return {make_call(coll, algo, p, n),
          make_call(coll, algo, p, n, 0, datatype_of<double>()),
          make_call(coll, algo, p, n, 0, datatype_of<matrix2x2>(), matrix2x2_product())};
}

}  // namespace

TEST_CASE("scan/exscan: every algorithm, p = 1..33, counts 0/1/3/1000, sum and matrix product, sequential") {
  for (collective coll : prefix_collectives)
    for (const auto& algo : algorithms)
      for (int p = 1; p <= 33; ++p)
        for (std::uint64_t n : counts)
          for (const call& c : calls(coll, algo, p, n)) expect_verified(c, executor_kind::sequential);
}

TEST_CASE("scan/exscan: every algorithm on the thread executor") {
  for (collective coll : prefix_collectives)
    for (const auto& algo : algorithms)
      for (int p : thread_ps)
        for (std::uint64_t n : counts)
          for (const call& c : calls(coll, algo, p, n)) expect_verified(c, executor_kind::threads);
}

TEST_CASE("scan/exscan: large p on the sequential executor") {
  for (collective coll : prefix_collectives)
    for (const auto& algo : algorithms)
      for (int p : {100, 127, 128, 129})
        for (const call& c : calls(coll, algo, p, 7)) expect_verified(c, executor_kind::sequential);
}

TEST_CASE("scan/exscan: round counts") {
  for (collective coll : prefix_collectives)
    for (int p = 1; p <= 129; ++p) {
      auto rounds = [&](const char* algo) {
        const call c = make_call(coll, algo, p, 4);
        const verify_report r = verify(build_all(*registry::find(coll, algo), c.args));
        CHECK(r.ok);
        return r.rounds;
      };
      INFO(name(coll) << " p=" << p);
      CHECK(rounds("linear") == static_cast<std::size_t>(p - 1));
      CHECK(rounds("recursive_doubling") == static_cast<std::size_t>(detail::ceil_log2(static_cast<std::uint64_t>(p))));
    }
}

TEST_CASE("scan/exscan: registered as safe for non-commutative operators") {
  for (collective coll : prefix_collectives)
    for (const auto& algo : algorithms) {
      const algorithm* a = registry::find(coll, algo);
      INFO(name(coll) << "/" << algo);
      REQUIRE(a != nullptr);
      CHECK_FALSE(a->needs_commutative);
      CHECK_FALSE(a->needs_power_of_two);
      const bool has_cost = a->cost != nullptr;
      CHECK(has_cost);
      const call c = make_call(coll, algo, 6, 1, 0, datatype_of<matrix2x2>(), matrix2x2_product());
      const auto ok = algorithms_accepting(c);
      CHECK(std::find(ok.begin(), ok.end(), algo) != ok.end());
    }
}

TEST_CASE("scan/exscan: in-place calls (in == out) through the user API") {
  for (const auto& algo : algorithms)
    for (int p : {1, 2, 3, 5, 8}) {
      run(p, [&](comm& c) {
        const int r = c.rank();
        std::vector<long> buf{r + 1L, 10L * (r + 1)};
        c.scan(buf, buf, ops::sum, {algo});
        CHECK(buf[0] == (r + 1L) * (r + 2) / 2);
        CHECK(buf[1] == 10L * (r + 1) * (r + 2) / 2);
        std::vector<long> ex{r + 1L, 10L * (r + 1)};
        c.exscan(ex, ex, ops::sum, {algo});
        if (r == 0) {  // unchanged
          CHECK(ex[0] == 1);
          CHECK(ex[1] == 10);
        } else {
          CHECK(ex[0] == r * (r + 1L) / 2);
          CHECK(ex[1] == 10L * r * (r + 1) / 2);
        }
      });
    }
}

TEST_CASE("scan: a non-commutative operator sees the operands in rank order (string concatenation)") {
  // Each element is a small fixed-width "string": the rank's letter appended in order.
  struct word {
    char c[40];
  };
  const auto concat = [](const word& a, const word& b) {
    word w{};
    std::size_t n = 0;
    for (std::size_t i = 0; i < sizeof a.c && a.c[i]; ++i) w.c[n++] = a.c[i];
    for (std::size_t i = 0; i < sizeof b.c && b.c[i] && n < sizeof w.c - 1; ++i) w.c[n++] = b.c[i];
    return w;
  };
  const op o = make_op<word>(concat, false);
  for (const auto& algo : algorithms)
    for (int p : {1, 2, 3, 6, 7, 11, 16, 17}) {
      run(p, [&](comm& c) {
        std::vector<word> in(1), out(1), ex(1);
        in[0] = word{};
        in[0].c[0] = static_cast<char>('a' + c.rank());
        ex[0] = word{};
        c.scan(in, out, o, {algo});
        c.exscan(in, ex, o, {algo});
        std::string want, want_ex;
        for (int j = 0; j <= c.rank(); ++j) want += static_cast<char>('a' + j);
        want_ex = want.substr(0, want.size() - 1);
        CHECK(std::string(out[0].c) == want);
        CHECK(std::string(ex[0].c) == want_ex);  // rank 0: left as it was (empty)
      });
    }
}
