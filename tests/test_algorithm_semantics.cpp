// Every registered algorithm through the semantic check (ranklab/semantics.hpp) for
// p = 1..64: structure and results, every root, in place and out of place, counts 0, 1 and
// uneven, irregular layouts, commutative and non-commutative operators where the algorithm
// takes them, and the parameters that change a schedule's shape (blocks, radix, segment).
// One test case per registry entry (registry_cases.hpp), so a new algorithm is covered
// without an edit. RANKLAB_SEMANTICS_MAX_P raises the largest p (up to 1024, on demand).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "ranklab/ranklab.hpp"
#include "ranklab/semantics.hpp"
#include "registry_cases.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

int max_p() {
  const char* v = std::getenv("RANKLAB_SEMANTICS_MAX_P");
  const int p = v ? std::atoi(v) : 64;
  return p < 1 ? 64 : p > 1024 ? 1024 : p;
}

void check_algorithm(const algorithm& a) {
  std::size_t calls = 0, failing = 0;
  const int last = max_p();
  for (int p = 1; p <= last; ++p) {
    verify_sweep sw;
    sw.every_root = p <= 64;  // beyond, roots 0, p/2 and p-1: the on-demand runs stay hours short
    const verify_summary s = verify_algorithm(a, p, sw);
    calls += s.calls;
    for (const verify_failure& f : s.failures) {
      if (failing++ < 5)
        FAIL_CHECK(describe_verified_call(f.args), ":\n  ", fmt::format("{}", fmt::join(f.problems, "\n  ")));
    }
  }
  CHECK_MESSAGE(failing == 0, failing, " failing calls");
  CHECK_MESSAGE(calls > 0, "no call accepted");
  MESSAGE(calls, " calls verified");
}

const bool registered = register_registry_cases<check_algorithm>(__FILE__, __LINE__, "semantics ");

}  // namespace

TEST_CASE("every registry entry has a semantic test case") {
  CHECK(registered);
  CHECK(registry_cases_cover_all());
}
