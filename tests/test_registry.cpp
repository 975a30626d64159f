// registry::add's checks of a declaration, and plugins: load_plugin on the modules of
// tests/plugin/ (paths from tests/CMakeLists.txt) and RANKLAB_PLUGINS. Registrations made
// here stay for the rest of this executable, so every name is used by one test only.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ranklab/check.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/executor.hpp"
#include "ranklab/registry.hpp"

namespace {

using namespace ranklab;

schedule build_nothing(const coll_args& a, int rank) { return schedule(rank, a.p, 0, 0); }

algorithm declared(std::string_view name, collective_set serves = {collective::barrier}) {
  return algorithm{.name = name, .serves = serves, .summary = "test_registry", .build = build_nothing};
}

// registry::add's usage_error for `a`, or "" when it registers.
std::string refusal(const algorithm& a) {
  try {
    registry::add(a);
  } catch (const usage_error& e) {
    return e.what();
  }
  return {};
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

std::size_t entries_named(std::string_view name) {
  const auto all = registry::all();
  return static_cast<std::size_t>(
      std::count_if(all.begin(), all.end(), [&](const algorithm* a) { return a->name == name; }));
}

}  // namespace

TEST_CASE("registry::add makes one entry per collective served, coll set, in the sorted listing") {
  REQUIRE(refusal(declared("test_pair", {collective::allgatherv, collective::allgather})).empty());
  const algorithm* gather = registry::find(collective::allgather, "test_pair");
  const algorithm* gatherv = registry::find(collective::allgatherv, "test_pair");
  REQUIRE(gather != nullptr);
  REQUIRE(gatherv != nullptr);
  CHECK(gather->coll == collective::allgather);
  CHECK(gatherv->coll == collective::allgatherv);
  CHECK(gatherv->serves.contains(collective::allgather));
  CHECK(registry::find(collective::bcast, "test_pair") == nullptr);
  const auto all = registry::all();
  CHECK(std::is_sorted(all.begin(), all.end(), [](const algorithm* x, const algorithm* y) {
    return x->coll != y->coll ? x->coll < y->coll : x->name < y->name;
  }));
}

TEST_CASE("registry::add: coll alone serves that collective; names may hold . : - _") {
  const algorithm by_coll{.name = "my.lib:star-2_b", .coll = collective::reduce, .build = build_nothing};
  REQUIRE(refusal(by_coll).empty());
  const algorithm* a = registry::find(collective::reduce, "my.lib:star-2_b");
  REQUIRE(a != nullptr);
  CHECK(a->serves.contains(collective::reduce));
  CHECK(entries_named("my.lib:star-2_b") == 1);
}

TEST_CASE("registry::add refuses an empty name") {
  CHECK(contains(refusal(declared("")), "registry::add: an algorithm needs a name (.name is empty)"));
}

TEST_CASE("registry::add refuses names that --algo and RANKLAB_<COLL>_ALGORITHM cannot take") {
  for (std::string_view bad : {"two words", "a,b", "x=y", "-dash_first", ".dot_first", "tab\tname", "caf\xc3\xa9"}) {
    CAPTURE(bad);
    const std::string why = refusal(declared(bad));
    CHECK(contains(why, "algorithm name '" + std::string(bad) + "'"));
    CHECK(contains(why, "only letters, digits and _ . : - are allowed, starting with a letter or a digit"));
    CHECK(registry::find(collective::barrier, bad) == nullptr);
  }
}

TEST_CASE("registry::add refuses the reserved names auto and all") {
  CHECK(contains(refusal(declared("auto")), "algorithm name 'auto' is reserved"));
  CHECK(contains(refusal(declared("all", {collective::bcast})), "algorithm name 'all' is reserved"));
}

TEST_CASE("registry::add refuses a declaration without a builder") {
  algorithm a = declared("test_no_builder");
  a.build = nullptr;
  CHECK(contains(refusal(a), "algorithm 'test_no_builder' has no builder (.build is nullptr)"));
  CHECK(registry::find(collective::barrier, "test_no_builder") == nullptr);
}

TEST_CASE("registry::add refuses a coll that is no collective or that serves leaves out") {
  algorithm outside = declared("test_bad_coll", {});
  outside.coll = static_cast<collective>(200);
  CHECK(contains(refusal(outside), "algorithm 'test_bad_coll': .coll = 200 is not a collective"));
  algorithm contradicting = declared("test_contradiction", {collective::allgather});
  contradicting.coll = collective::bcast;
  CHECK(contains(refusal(contradicting), ".coll = bcast is not among the collectives in .serves"));
  CHECK(entries_named("test_contradiction") == 0);
}

TEST_CASE("registry::add accepts needs_commutative on a collective without an operator") {
  algorithm a = declared("test_commutative_bcast", {collective::bcast});
  a.needs_commutative = true;
  CHECK(refusal(a).empty());
  CHECK(registry::find(collective::bcast, "test_commutative_bcast") != nullptr);
}

TEST_CASE("registry::add refuses a name registered twice, and registers none of its collectives then") {
  // bcast `binomial` is the library's; barrier has no `binomial`, and must not get one either.
  REQUIRE(registry::find(collective::bcast, "binomial") != nullptr);
  REQUIRE(registry::find(collective::barrier, "binomial") == nullptr);
  const std::string why = refusal(declared("binomial", {collective::barrier, collective::bcast}));
  CHECK(contains(why, "registry::add: algorithm 'binomial' for bcast registered twice (first by "));
  CHECK(contains(why, "libranklab"));
  CHECK(registry::find(collective::barrier, "binomial") == nullptr);
  // And one of a test's own.
  REQUIRE(refusal(declared("test_once")).empty());
  CHECK(contains(refusal(declared("test_once")), "algorithm 'test_once' for barrier registered twice"));
  CHECK(entries_named("test_once") == 1);
}

// ---- plugins ----------------------------------------------------------------------------------

TEST_CASE("load_plugin registers the plugin's algorithm, which verifies and runs like any other") {
  const auto added = load_plugin(RANKLAB_TEST_PLUGIN_STAR);
  REQUIRE(added.size() == 1);
  CHECK(added[0]->name == "star");
  CHECK(added[0]->coll == collective::bcast);
  CHECK(registry::find(collective::bcast, "star") == added[0]);
  for (int p = 1; p <= 16; ++p) {
    CAPTURE(p);
    const call c = make_call(collective::bcast, p, 10, p / 2, datatype_of<int>(), ops::sum, {"star"});
    const verify_report v = verify(build_all(*added[0], c.args));
    CHECK(v.ok);
    CHECK(v.rounds == static_cast<std::size_t>(p - 1));
    const check_result r = run_check(c, executor_kind::sequential);
    CHECK(r.verified);
    CHECK(r.algo == added[0]);
  }
}

TEST_CASE("load_plugin twice, by another spelling of the path too, loads nothing more") {
  const auto first = load_plugin(RANKLAB_TEST_PLUGIN_STAR);
  const std::size_t entries = registry::all().size();
  const std::string path = RANKLAB_TEST_PLUGIN_STAR;
  const std::string respelt = path.substr(0, path.rfind('/')) + "/./" + path.substr(path.rfind('/') + 1);
  CHECK(load_plugin(path) == first);
  CHECK(load_plugin(respelt) == first);
  CHECK(registry::all().size() == entries);
  CHECK(entries_named("star") == 1);
}

TEST_CASE("load_plugin of a missing file: usage_error with the path and dlopen's reason") {
  const std::string path = "/nonexistent_ranklab_dir/libnothing.so";
  CHECK_THROWS_WITH_AS(load_plugin(path),
                       doctest::Contains("plugin /nonexistent_ranklab_dir/libnothing.so: cannot load: "
                                         "/nonexistent_ranklab_dir/libnothing.so: cannot open shared object file"),
                       usage_error);
  CHECK_THROWS_WITH_AS(load_plugin(""), "plugin: the path is empty", usage_error);
}

TEST_CASE("load_plugin of a library that registers nothing: usage_error") {
  const std::string expected = std::string("plugin ") + RANKLAB_TEST_PLUGIN_EMPTY + ": registers no algorithm";
  CHECK_THROWS_WITH_AS(load_plugin(RANKLAB_TEST_PLUGIN_EMPTY), doctest::Contains(expected.c_str()), usage_error);
}

TEST_CASE("load_plugin of a library with a refused registration: its message, none of its algorithms") {
  const std::size_t entries = registry::all().size();
  const std::string expected = std::string("plugin ") + RANKLAB_TEST_PLUGIN_REFUSED +
                               ": algorithm name 'bad name': only letters, digits and _ . : -";
  CHECK_THROWS_WITH_AS(load_plugin(RANKLAB_TEST_PLUGIN_REFUSED), doctest::Contains(expected.c_str()), usage_error);
  CHECK(registry::find(collective::bcast, "plugin_refused_valid") == nullptr);
  CHECK(registry::all().size() == entries);
  // Asked again, the same answer (not "registers no algorithm").
  CHECK_THROWS_WITH_AS(load_plugin(RANKLAB_TEST_PLUGIN_REFUSED), doctest::Contains(expected.c_str()), usage_error);
}

TEST_CASE("load_plugin of a library registering a name the library has: registered twice, naming the first") {
  const algorithm* binomial = registry::find(collective::bcast, "binomial");
  REQUIRE(binomial != nullptr);
  const std::size_t binomials = entries_named("binomial");
  CHECK_THROWS_WITH_AS(load_plugin(RANKLAB_TEST_PLUGIN_DUPLICATE),
                       doctest::Contains("algorithm 'binomial' for bcast registered twice (first by "), usage_error);
  CHECK(registry::find(collective::bcast, "binomial") == binomial);
  CHECK(entries_named("binomial") == binomials);
}

TEST_CASE("load_plugins_from_environment: every path of RANKLAB_PLUGINS, empty entries skipped") {
  (void)registry::all();  // the readers' own load of the environment is done, with it unset
  const std::string list = std::string("::") + RANKLAB_TEST_PLUGIN_STAR + ":";
  setenv("RANKLAB_PLUGINS", list.c_str(), 1);
  const auto added = load_plugins_from_environment();
  REQUIRE(added.size() == 1);
  CHECK(added[0] == registry::find(collective::bcast, "star"));
  const std::string bad = std::string(RANKLAB_TEST_PLUGIN_STAR) + ":/nonexistent_ranklab_dir/x.so";
  setenv("RANKLAB_PLUGINS", bad.c_str(), 1);
  CHECK_THROWS_WITH_AS(load_plugins_from_environment(),
                       doctest::Contains("RANKLAB_PLUGINS: plugin /nonexistent_ranklab_dir/x.so: cannot load: "),
                       usage_error);
  unsetenv("RANKLAB_PLUGINS");
  CHECK(load_plugins_from_environment().empty());
}

// Run by tests/CMakeLists.txt in processes of their own, with RANKLAB_PLUGINS set (the first
// read of the registry loads it, once per process): skipped in the suite's own run.
TEST_CASE("environment: the first read of the registry loads RANKLAB_PLUGINS" * doctest::skip()) {
  REQUIRE(std::getenv("RANKLAB_PLUGINS") != nullptr);
  const algorithm* star = registry::find(collective::bcast, "star");
  REQUIRE(star != nullptr);
  CHECK(load_plugin(RANKLAB_TEST_PLUGIN_STAR) == std::vector<const algorithm*>{star});
}

TEST_CASE("environment: a bad RANKLAB_PLUGINS makes every read of the registry a usage_error" * doctest::skip()) {
  REQUIRE(std::getenv("RANKLAB_PLUGINS") != nullptr);
  for (int i = 0; i < 2; ++i) {
    CHECK_THROWS_WITH_AS(registry::find(collective::bcast, "binomial"),
                         doctest::Contains("RANKLAB_PLUGINS: plugin /nonexistent_ranklab_dir/x.so: cannot load: "),
                         usage_error);
    CHECK_THROWS_AS(registry::all(), usage_error);
  }
}
