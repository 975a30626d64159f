// One doctest test case per registry entry, named "<collective>/<algorithm>", registered at
// load time (after the library's algorithms registered themselves): suites that loop over
// the registry get a case per algorithm, so ctest lists and runs each on its own and a new
// algorithm file is covered without a test edit.
#pragma once
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <deque>
#include <string>
#include <utility>

#include "ranklab/registry.hpp"

namespace ranklab::testing {

// doctest registers plain functions, so each registry index gets one instantiation; an
// entry beyond max_registry_cases fails registry_cases_cover_all instead of going unchecked.
inline constexpr std::size_t max_registry_cases = 256;

template <void (*Check)(const algorithm&), std::size_t I>
void check_registry_entry() {
  Check(*registry::all().at(I));
}

template <void (*Check)(const algorithm&), std::size_t... I>
constexpr std::array<void (*)(), sizeof...(I)> registry_entry_checks(std::index_sequence<I...>) {
  return {&check_registry_entry<Check, I>...};
}

// Registers Check(entry) as one test case per registry entry, in the current test suite,
// named prefix + "<collective>/<algorithm>". Returns true, for a static initialiser.
template <void (*Check)(const algorithm&)>
bool register_registry_cases(const char* file, int line, std::string_view prefix = {}) {
  static std::deque<std::string> names;  // doctest keeps the pointers
  constexpr auto checks = registry_entry_checks<Check>(std::make_index_sequence<max_registry_cases>{});
  const auto all = registry::all();
  for (std::size_t i = 0; i < all.size() && i < max_registry_cases; ++i) {
    names.push_back(fmt::format("{}{}/{}", prefix, name(all[i]->coll), all[i]->name));
    doctest::detail::regTest(
        doctest::detail::TestCase(checks[i], file, line, doctest_detail_test_suite_ns::getCurrentTestSuite()) *
        names.back().c_str());
  }
  return true;
}

inline bool registry_cases_cover_all() { return registry::all().size() <= max_registry_cases; }

}  // namespace ranklab::testing
