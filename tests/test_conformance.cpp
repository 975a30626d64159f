// The conformance suite: every registered algorithm against the independent sequential
// reference (ranklab/check.hpp). It loops over registry::all(), so a new algorithm file is
// covered without a test edit, and registers one doctest test case per registry entry,
// named "<collective>/<algorithm>", so that ctest lists and runs each on its own.
// The calls are those of call_sweeps.hpp: both executors, p = 1..33 and 100..129, several
// roots, counts, irregular layouts, types and operators (commutative and not).
// The per-collective suites keep what is particular to an algorithm: rounds, volumes,
// parameters, in-place calls and documented special cases.
#include <array>
#include <deque>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "call_sweeps.hpp"
#include "collective_checks.hpp"

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

// doctest registers plain functions, so each registry index gets one instantiation; an
// entry beyond max_entries fails the test case below instead of going unchecked.
constexpr std::size_t max_entries = 256;

template <std::size_t I>
void check_entry() {
  check_algorithm(*registry::all().at(I));
}

template <std::size_t... I>
constexpr std::array<void (*)(), sizeof...(I)> entry_checks(std::index_sequence<I...>) {
  return {&check_entry<I>...};
}

// Registered at load time, after the library's algorithms registered themselves.
const bool registered = [] {
  static std::deque<std::string> names;  // doctest keeps the pointers
  constexpr auto checks = entry_checks(std::make_index_sequence<max_entries>{});
  const auto all = registry::all();
  for (std::size_t i = 0; i < all.size() && i < max_entries; ++i) {
    names.push_back(fmt::format("{}/{}", name(all[i]->coll), all[i]->name));
    doctest::detail::regTest(
        doctest::detail::TestCase(checks[i], __FILE__, __LINE__, doctest_detail_test_suite_ns::getCurrentTestSuite()) *
        names.back().c_str());
  }
  return true;
}();

}  // namespace

TEST_CASE("every registry entry has a conformance test case") {
  CHECK(registered);
  CHECK(registry::all().size() <= max_entries);
  for (int c = 0; c < collective_count; ++c) {
    INFO(name(static_cast<collective>(c)));
    CHECK_FALSE(registry::for_collective(static_cast<collective>(c)).empty());
  }
}
