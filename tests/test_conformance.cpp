// The conformance suite: every registered algorithm against the independent sequential
// reference (ranklab/check.hpp). It loops over registry::all(), so a new algorithm file is
// covered without a test edit, and registers one doctest test case per registry entry,
// named "<collective>/<algorithm>", so that ctest lists and runs each on its own.
// The calls are those of call_sweeps.hpp: both executors, p = 1..33 and 100..129, several
// roots, counts, irregular layouts, types and operators (commutative and not).
// The per-collective suites keep what is particular to an algorithm: rounds, volumes,
// parameters, in-place calls and documented special cases.
#include <span>
#include <vector>

#include "call_sweeps.hpp"
#include "collective_checks.hpp"
#include "registry_cases.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

void check_algorithm(const algorithm& a) {
  std::size_t checked = 0;
  auto check_all = [&](std::span<const int> ps, sweep s, executor_kind ex) {
    for (int p : ps)
      for (const call& c : conformance_calls(a, p, s)) {
        expect_verified(c, ex);
        ++checked;
      }
  };
  check_all(ps_up_to(33), sweep::thorough, executor_kind::sequential);
  check_all(conformance_large_ps, sweep::large, executor_kind::sequential);
  check_all(conformance_thread_ps, sweep::threads, executor_kind::threads);
  CHECK_MESSAGE(checked > 0, "no call accepted");
  MESSAGE(checked, " calls checked");
}

const bool registered = register_registry_cases<check_algorithm>(__FILE__, __LINE__);

}  // namespace

TEST_CASE("every registry entry has a conformance test case") {
  CHECK(registered);
  CHECK(registry_cases_cover_all());
  for (int c = 0; c < collective_count; ++c) {
    INFO(name(static_cast<collective>(c)));
    CHECK_FALSE(registry::for_collective(static_cast<collective>(c)).empty());
  }
}
