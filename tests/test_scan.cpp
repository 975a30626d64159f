// Scan and exscan: the claims of the registered algorithms -- round counts, acceptance of
// non-commutative operators, in-place calls and rank order through the user API. Results
// against the reference (rank-ordered x_0 (+) ... (+) x_r; exscan leaves rank 0's out
// unchanged): test_conformance.cpp. See docs/algorithms.md, "scan".
#include "collective_checks.hpp"
#include "patterns/rank_arithmetic.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

const collective prefix_collectives[] = {collective::scan, collective::exscan};

}  // namespace

TEST_CASE("scan/exscan: round counts") {
  const round_claims rounds = {
      {"linear", [](int p) -> std::size_t { return p - 1; }},
      {"recursive_doubling", [](int p) -> std::size_t { return ceil_log2(p); }},
  };
  for (collective coll : prefix_collectives) check_round_claims(coll, rounds, ps_up_to(129), 4);
}

TEST_CASE("scan/exscan: registered as safe for non-commutative operators") {
  for (collective coll : prefix_collectives)
    for (const algorithm* a : registry::for_collective(coll)) {
      INFO(name(coll) << "/" << a->name);
      CHECK_FALSE(a->needs_commutative);
      CHECK_FALSE(a->needs_power_of_two);
      const bool has_cost = a->cost != nullptr;
      CHECK(has_cost);
      const call c = make_call(coll, 6, 1, 0, matrix_product.type, matrix_product.reduction, {a->name});
      const auto ok = algorithms_accepting(c);
      CHECK(std::find(ok.begin(), ok.end(), a->name) != ok.end());
    }
}

TEST_CASE("scan/exscan: in-place calls (in == out) through the user API") {
  for (const algorithm* a : registry::for_collective(collective::scan))
    for (int p : {1, 2, 3, 5, 8}) {
      const std::string algo(a->name);
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
  for (const algorithm* a : registry::for_collective(collective::scan))
    for (int p : {1, 2, 3, 6, 7, 11, 16, 17}) {
      const std::string algo(a->name);
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
