// Algorithm selection as data (ranklab/selection.hpp): the table file format (round trip,
// clear errors naming the file), the table "auto" uses (load_selection, RANKLAB_SELECTION,
// built-in), precedence (explicit name > RANKLAB_<COLL>_ALGORITHM > table), falling
// through rules whose algorithm cannot run the call, "auto" never outside an algorithm's
// preconditions, the RANKLAB_LOG_SELECTION log line, and the calibrated cost model reaching
// the circulant block count.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "circulant/circulant_collectives.hpp"
#include "collective_checks.hpp"
#include "ranklab/ranklab.hpp"
#include "ranklab/selection.hpp"
#include "test_support.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

// Every test starts and ends with no table installed and no selection variables set.
struct clean_selection {
  std::vector<scoped_env> vars;
  clean_selection() {
    vars.reserve(collective_count + 2);
    vars.emplace_back("RANKLAB_SELECTION", nullptr);
    vars.emplace_back("RANKLAB_LOG_SELECTION", nullptr);
    for (int i = 0; i < collective_count; ++i) {
      std::string v = "RANKLAB_";
      for (char ch : name(static_cast<collective>(i)))
        v += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      vars.emplace_back((v + "_ALGORITHM").c_str(), nullptr);
    }
    reset_selection();
  }
  ~clean_selection() { reset_selection(); }
};

// A file in a scratch directory, removed afterwards.
struct temp_file {
  std::string path;
  explicit temp_file(const std::string& stem) {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("ranklab_test_selection_{}", getpid());
    std::filesystem::create_directories(dir);
    path = (dir / stem).string();
  }
  void write(const std::string& text) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  ~temp_file() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

coll_args args_of(collective c, int p, std::uint64_t count, bool commutative = true) {
  coll_args a;
  a.coll = c;
  a.p = p;
  a.count = count;
  a.commutative = commutative;
  if (has_vector_counts(c)) a.counts.assign(static_cast<std::size_t>(c == collective::alltoallv ? p * p : p), count);
  return a;
}

selection_rule rule(collective c, std::string algo, int p_min = 1, int p_max = unbounded_p,
                    std::uint64_t max_bytes = unbounded_bytes, std::string note = {}) {
  selection_rule r;
  r.coll = c;
  r.algorithm = std::move(algo);
  r.p_min = p_min;
  r.p_max = p_max;
  r.max_bytes = max_bytes;
  r.note = std::move(note);
  return r;
}

// A table like `ranklab tune` writes: bands, notes, bounded and unbounded fields.
selection_table sample_table() {
  selection_table t;
  t.machine_json = R"({"description":"test machine","cores":2,"p":[2,4]})";
  t.measurements_json =
      R"({"ping_pong_one_way":[{"bytes":0,"seconds":8.8e-07}],"algorithms":[{"p":2,"seconds":{"binomial":1.5e-06}}]})";
  t.model = cost_model{4.25e-7, 1.125e-10, 3.0e-11};
  t.bands = {cost_band{2048, 3.5e-7, 2.5e-10}, cost_band{unbounded_bytes, 9.0e-7, 1.0e-10}};
  t.rules = {
      rule(collective::bcast, "linear", 1, 2, unbounded_bytes, "measured fastest at p 2, 64 B: 1.00 us"),
      rule(collective::bcast, "binomial", 3, 8, 4096, "measured fastest at p 4, 4 KiB"),
      rule(collective::bcast, "chain", 3, 8),
      rule(collective::bcast, "binomial", 9),
      rule(collective::allreduce, "circulant", 1, unbounded_p, unbounded_bytes, "measured fastest"),
      rule(collective::allreduce, "recursive_doubling"),
      rule(collective::alltoall, "hypercube", 2, 64, 1024),
      rule(collective::alltoall, "pairwise", 2, 64, 1024),
  };
  return t;
}

// Installs the sample table under another source name (reasons name it).
void use_sample_table(const std::string& source) {
  selection_table t = sample_table();
  t.source = source;
  use_selection(t);
}

const char* valid_prefix = R"({"format": "ranklab-selection", "version": 1, )";

// The message of parse_selection on `body` (appended to the valid prefix).
std::string parse_error(const std::string& text) {
  return error_of([&] { (void)parse_selection(text, "bad.json"); });
}

}  // namespace

TEST_SUITE("selection") {
  // ---- the file format ----------------------------------------------------------------------------

  TEST_CASE("round trip: write, read, the same table, to_json is a fixed point") {
    clean_selection clean;
    const selection_table t = sample_table();
    temp_file f("round_trip.json");
    write_selection(t, f.path);
    const selection_table back = read_selection(f.path);
    CHECK(back.source == f.path);
    CHECK(back.rules == t.rules);
    CHECK(back.bands == t.bands);
    CHECK(back.model.alpha == t.model.alpha);
    CHECK(back.model.beta == t.model.beta);
    CHECK(back.model.gamma == t.model.gamma);
    CHECK(back.machine_json == t.machine_json);
    CHECK(back.measurements_json == t.measurements_json);
    CHECK(to_json(back) == to_json(t));
    // The file names algorithms, not indices, and says what it is.
    std::ifstream in(f.path);
    std::stringstream text;
    text << in.rdbuf();
    CHECK(contains(text.str(), R"("format": "ranklab-selection")"));
    CHECK(contains(text.str(), R"("version": 1)"));
    CHECK(contains(text.str(), R"("algorithm":"binomial")"));
    CHECK(contains(text.str(), R"("max_bytes":null)"));
    // An empty table round-trips as well.
    selection_table empty;
    CHECK(to_json(parse_selection(to_json(empty), "empty")) == to_json(empty));
  }

  TEST_CASE("write, load, select: the loaded table decides \"auto\" and --explain names file and rule") {
    clean_selection clean;
    temp_file f("load.json");
    write_selection(sample_table(), f.path);
    load_selection(f.path);
    CHECK(current_selection()->source == f.path);
    std::string why;
    // p = 2: rule 1 (linear).
    CHECK(select_algorithm(args_of(collective::bcast, 2, 100), 4, "auto", &why).name == "linear");
    CHECK(why == fmt::format("table {}, rule 1 (p 1..2, any size): measured fastest at p 2, 64 B: 1.00 us", f.path));
    // p = 4, 4096 bytes: rule 2; 4100 bytes: rule 3 (chain, no note).
    CHECK(select_algorithm(args_of(collective::bcast, 4, 1024), 4, "auto", &why).name == "binomial");
    CHECK(why == fmt::format("table {}, rule 2 (p 3..8, <= 4096 B): measured fastest at p 4, 4 KiB", f.path));
    CHECK(select_algorithm(args_of(collective::bcast, 4, 1025), 4, "auto", &why).name == "chain");
    CHECK(why == fmt::format("table {}, rule 3 (p 3..8, any size)", f.path));
    CHECK(select_algorithm(args_of(collective::bcast, 100, 1), 4, "auto", &why).name == "binomial");
    CHECK(contains(why, "rule 4 (p >= 9, any size)"));
    // The comm path reports the same reason.
    std::vector<std::string> reasons(4);
    run(
        4,
        [&](comm& c) {
          std::vector<std::int32_t> v(1024, c.rank() == 0 ? 3 : 0);
          c.bcast(v, 0);
          CHECK(v == std::vector<std::int32_t>(1024, 3));
          CHECK(c.last_algorithm()->name == "binomial");
          reasons[c.rank()] = std::string(c.last_selection_reason());
        },
        team_options{});
    for (const auto& r : reasons) CHECK(contains(r, "rule 2 (p 3..8, <= 4096 B)"));
    // run_check (what `ranklab run --explain` prints) agrees.
    const check_result r = run_check(make_call(collective::bcast, 4, 1024, 0, i32), executor_kind::sequential);
    CHECK(r.verified);
    CHECK(r.algo->name == "binomial");
    CHECK(contains(r.reason, "table " + f.path + ", rule 2"));
  }

  TEST_CASE("a call the table has no rule for is decided by the built-in table, and says so") {
    clean_selection clean;
    use_sample_table("only-bcast.json");
    std::string why;
    const algorithm& a = select_algorithm(args_of(collective::barrier, 4, 0), 1, "auto", &why);
    CHECK(a.name == "dissemination");
    CHECK(contains(why, "table only-bcast.json has no rule for this call"));
    CHECK(contains(why, "built-in table, rule 1 (any p, any size)"));
  }

  TEST_CASE("the built-in table: rows naming the textbook algorithms, used with RANKLAB_SELECTION=builtin") {
    clean_selection clean;
    const selection_table& b = builtin_selection();
    CHECK(b.source == "built-in");
    CHECK(!b.rules.empty());
    // Rows may name algorithms that this build does not register:
    // they are passed over. Every collective with registered algorithms is covered.
    selection_table registered;
    for (std::size_t i = 0; i < b.rules.size(); ++i) {
      if (registry::find(b.rules[i].coll, b.rules[i].algorithm) != nullptr)
        registered.rules.push_back(b.rules[i]);
      else
        MESSAGE("built-in " << describe_rule(b, i) << ": " << name(b.rules[i].coll) << " " << b.rules[i].algorithm
                            << " is not registered in this build");
    }
    for (int i = 0; i < collective_count; ++i) {
      const auto c = static_cast<collective>(i);
      if (registry::for_collective(c).empty()) continue;
      bool covered = false;
      for (const selection_rule& r : registered.rules) covered = covered || r.coll == c;
      INFO(name(c));
      CHECK(covered);
    }
    // With nothing installed the shipped table decides (see below); "builtin" asks for these rows.
    const scoped_env builtin("RANKLAB_SELECTION", "builtin");
    reset_selection();
    CHECK(current_selection()->source == "built-in");
    CHECK(current_selection().get() == &b);
    std::string why;
    CHECK(select_algorithm(args_of(collective::allreduce, 8, 16), 8, "auto", &why).name == "recursive_doubling");
    CHECK(why == "built-in table, rule 6 (any p, <= 4096 B)");
    // The built-in table is valid as a file too.
    CHECK(parse_selection(to_json(registered), "builtin.json").rules == registered.rules);
  }

  TEST_CASE("bad files: usage_error naming the file and the problem") {
    clean_selection clean;
    SUBCASE("missing file") {
      const std::string e = error_of([] { (void)read_selection("/nonexistent/dir/sel.json"); });
      CHECK(contains(e, "usage_error"));
      CHECK(contains(e, "/nonexistent/dir/sel.json"));
      CHECK(contains(e, "cannot open"));
      // load_selection leaves the table in use unchanged.
      const auto before = current_selection();
      CHECK_THROWS_AS(load_selection("/nonexistent/dir/sel.json"), usage_error);
      CHECK(current_selection() == before);
    }
    SUBCASE("not JSON, with line and column") {
      temp_file f("broken.json");
      f.write("{\"format\": \"ranklab-selection\",\n \"version\": 1,\n \"rules\": [ {\"coll\": } ]}");
      const std::string e = error_of([&] { (void)read_selection(f.path); });
      CHECK(contains(e, "usage_error"));
      CHECK(contains(e, f.path));
      CHECK(contains(e, "not valid JSON"));
      CHECK(contains(e, "line 3"));
    }
    SUBCASE("empty file") {
      temp_file f("empty.json");
      f.write("");
      const std::string e = error_of([&] { (void)read_selection(f.path); });
      CHECK(contains(e, f.path));
      CHECK(contains(e, "not valid JSON"));
    }
    SUBCASE("not a selection table") {
      CHECK(contains(parse_error("[1, 2]"), "bad.json: expected a JSON object"));
      CHECK(contains(parse_error(R"({"rules": []})"), "bad.json: not a selection table"));
      CHECK(contains(parse_error(R"({"format": "something-else", "version": 1, "rules": []})"), "\"something-else\""));
    }
    SUBCASE("versions") {
      const std::string e = parse_error(R"({"format": "ranklab-selection", "version": 2, "rules": []})");
      CHECK(contains(e, "bad.json: format version 2 is not supported (this build reads version 1)"));
      CHECK(contains(parse_error(R"({"format": "ranklab-selection", "rules": []})"), "missing key \"version\""));
      CHECK(contains(parse_error(R"({"format": "ranklab-selection", "version": "1", "rules": []})"),
                     "\"version\" must be a positive integer"));
    }
    SUBCASE("top level") {
      CHECK(contains(parse_error(std::string(valid_prefix) + "\"machine\": {}}"), "missing key \"rules\""));
      CHECK(contains(parse_error(std::string(valid_prefix) + "\"rules\": {}}"), "\"rules\" must be an array"));
      CHECK(contains(parse_error(std::string(valid_prefix) + "\"rules\": [], \"rule\": []}"), "unknown key \"rule\""));
      CHECK(contains(parse_error(std::string(valid_prefix) + "\"machine\": 3, \"rules\": []}"),
                     "\"machine\" must be an object"));
      CHECK(contains(parse_error(std::string(valid_prefix) + "\"measurements\": [], \"rules\": []}"),
                     "\"measurements\" must be an object"));
    }
    SUBCASE("rules") {
      auto with_rule = [](const std::string& r) {
        return parse_error(std::string(valid_prefix) + R"("rules": [{"coll": "bcast", "algorithm": "binomial"}, )" + r +
                           "]}");
      };
      CHECK(contains(with_rule("3"), "bad.json: rule 2: must be an object"));
      CHECK(contains(with_rule(R"({"coll": "bcast"})"), "rule 2: missing key \"algorithm\""));
      CHECK(contains(with_rule(R"({"algorithm": "binomial"})"), "rule 2: missing key \"coll\""));
      CHECK(contains(with_rule(R"({"coll": "broadcast", "algorithm": "binomial"})"),
                     "rule 2: unknown collective \"broadcast\""));
      CHECK(contains(with_rule(R"({"coll": "bcast", "algorithm": "binomial", "max_byte": 10})"),
                     "rule 2: unknown key \"max_byte\""));
      CHECK(contains(with_rule(R"({"coll": "bcast", "algorithm": "binomial", "max_bytes": -1})"),
                     "rule 2: \"max_bytes\" must be a non-negative integer (bytes) or null"));
      CHECK(contains(with_rule(R"({"coll": "bcast", "algorithm": "binomial", "max_bytes": "4K"})"),
                     "\"max_bytes\" must be a non-negative integer"));
      CHECK(contains(with_rule(R"({"coll": "bcast", "algorithm": "binomial", "p_min": 0})"),
                     "rule 2: \"p_min\" must be a positive integer"));
      CHECK(contains(with_rule(R"({"coll": "bcast", "algorithm": "binomial", "p_min": 8, "p_max": 4})"),
                     "rule 2: p_max 4 is less than p_min 8"));
      CHECK(contains(with_rule(R"({"coll": "bcast", "algorithm": 7})"), "rule 2: \"algorithm\" must be a string"));
    }
    SUBCASE("cost model") {
      auto with_model = [](const std::string& m) {
        return parse_error(std::string(valid_prefix) + "\"cost_model\": " + m + ", \"rules\": []}");
      };
      CHECK(contains(with_model(R"({"alpha": 1e-6, "beta": 1e-10})"), "cost_model: missing key \"gamma\""));
      CHECK(contains(with_model(R"({"alpha": -1e-6, "beta": 1e-10, "gamma": 0})"),
                     "cost_model: \"alpha\" must be a non-negative number"));
      CHECK(contains(
          with_model(
              R"({"alpha": 1e-6, "beta": 1e-10, "gamma": 0, "bands": [{"alpha": 1, "beta": 1, "max_bytes": 10}, {"alpha": 1, "beta": 1, "max_bytes": 10}]})"),
          "cost_model band 2: bands must have increasing max_bytes"));
      CHECK(contains(with_model(R"({"alpha": 1e-6, "beta": 1e-10, "gamma": 0, "bands": [{"alpha": 1}]})"),
                     "cost_model band 1: missing key \"beta\""));
    }
    SUBCASE("a bad RANKLAB_SELECTION file is reported at first use, naming the file and the variable") {
      temp_file f("env_bad.json");
      f.write("{\"format\": \"ranklab-selection\"");
      scoped_env env("RANKLAB_SELECTION", f.path.c_str());
      reset_selection();
      const std::string e = error_of([] { (void)select_algorithm(args_of(collective::bcast, 4, 10), 4, "auto"); });
      CHECK(contains(e, "usage_error"));
      CHECK(contains(e, f.path));
      CHECK(contains(e, "RANKLAB_SELECTION"));
      // Through the comm every rank reports it as a usage error.
      const std::string e2 = error_of([] {
        run(
            2,
            [](comm& c) {
              std::vector<int> v(3);
              c.bcast(v, 0);
            },
            team_options{});
      });
      CHECK(contains(e2, "usage_error"));
      CHECK(contains(e2, f.path));
      // An explicit name does not need the table.
      CHECK(select_algorithm(args_of(collective::bcast, 4, 10), 4, "binomial").name == "binomial");
    }
  }

  TEST_CASE("unknown algorithm names in a table are reported with the rule and the known names") {
    clean_selection clean;
    selection_table t = sample_table();
    t.rules[2].algorithm = "chian";
    const std::string text = to_json(t);
    temp_file f("typo.json");
    f.write(text);
    const std::string e = error_of([&] { load_selection(f.path); });
    CHECK(contains(e, "usage_error"));
    CHECK(contains(e, f.path + ": rule 3: unknown bcast algorithm \"chian\""));
    CHECK(contains(e, "known: "));
    CHECK(contains(e, "chain"));
    CHECK(contains(e, "binomial"));
    CHECK(current_selection()->source == shipped_selection().source);  // nothing was installed
    // A name registered for another collective only is unknown here too.
    t = sample_table();
    t.rules[0].algorithm = "dissemination";
    CHECK(contains(error_of([&] { (void)parse_selection(to_json(t), "x.json"); }),
                   "x.json: rule 1: unknown bcast algorithm \"dissemination\""));
  }

  TEST_CASE("\"native\" rules: parsed, taken only where the MPI library can run the call, reserved") {
    clean_selection clean;
    selection_table t = sample_table();
    // Small allreduces native, larger ones circulant, then native for what circulant refuses.
    t.rules.insert(t.rules.begin() + 4, rule(collective::allreduce, "native", 1, unbounded_p, 64, "native faster"));
    t.rules.push_back(rule(collective::allreduce, "native"));
    const selection_table back = parse_selection(to_json(t), "mpi.json");
    REQUIRE(back.rules.size() == t.rules.size());
    CHECK(back.rules[4].algorithm == "native");
    // 16 int32 = 64 bytes: the native rule matches. Without native_allowed (the thread
    // runtime, the MPI backend) it is passed over and circulant (the next rule) decides.
    const coll_args small = args_of(collective::allreduce, 5, 16, true);
    table_choice c = choose_from(back, small, 4);
    REQUIRE(c.algo != nullptr);
    CHECK(!c.native);
    CHECK(c.algo->name == "circulant");
    c = choose_from(back, small, 4, true);
    CHECK(c.native);
    CHECK(c.algo == nullptr);
    CHECK(c.rule == 4);
    CHECK(contains(c.why, "the MPI library's own collective"));
    CHECK(contains(c.why, "native faster"));
    // 17 elements: beyond the native rule; circulant; non-commutative: circulant refuses,
    // recursive_doubling (next rule) takes it before the final native rule.
    CHECK(choose_from(back, args_of(collective::allreduce, 5, 17, true), 4, true).algo->name == "circulant");
    CHECK(choose_from(back, args_of(collective::allreduce, 5, 17, false), 4, true).algo->name == "recursive_doubling");
    // Installed for the thread runtime, the native rules never decide.
    use_selection(back);
    CHECK(select_algorithm(small, 4, "auto").name == "circulant");
    // An algorithm cannot be registered under the reserved name.
    algorithm a;
    a.name = "native";
    a.coll = collective::bcast;
    a.build = [](const coll_args&, int) { return schedule{}; };
    const std::string e = error_of([&] { registry::add(a); });
    CHECK(contains(e, "usage_error"));
    CHECK(contains(e, "'native' is reserved"));
  }

  // ---- precedence and fall-through ------------------------------------------------------------------

  TEST_CASE("RANKLAB_<COLL>_ALGORITHM wins over the table, an explicit name wins over both") {
    clean_selection clean;
    temp_file f("env_wins.json");
    write_selection(sample_table(), f.path);
    scoped_env sel("RANKLAB_SELECTION", f.path.c_str());
    reset_selection();
    std::string why;
    CHECK(select_algorithm(args_of(collective::bcast, 2, 10), 4, "auto", &why).name == "linear");
    CHECK(contains(why, "table " + f.path + ", rule 1"));
    {
      scoped_env env("RANKLAB_BCAST_ALGORITHM", "knomial");
      CHECK(select_algorithm(args_of(collective::bcast, 2, 10), 4, "auto", &why).name == "knomial");
      CHECK(why == "set by RANKLAB_BCAST_ALGORITHM");
      CHECK(select_algorithm(args_of(collective::bcast, 2, 10), 4, "chain", &why).name == "chain");
      CHECK(why == "requested by the caller");
      // Through the comm: per call override and the environment.
      run(
          2,
          [&](comm& c) {
            std::vector<int> v(10, c.rank() == 0 ? 9 : 0);
            c.bcast(v, 0);
            CHECK(c.last_algorithm()->name == "knomial");
            c.bcast(v, 0, {"binomial"});
            CHECK(c.last_algorithm()->name == "binomial");
            CHECK(c.last_selection_reason() == "requested by the caller");
            CHECK(v == std::vector<int>(10, 9));
          },
          team_options{});
      // Other collectives still follow the table.
      CHECK(select_algorithm(args_of(collective::allreduce, 4, 10), 4, "auto", &why).name == "circulant");
      CHECK(contains(why, "rule 5"));
    }
    CHECK(select_algorithm(args_of(collective::bcast, 2, 10), 4, "auto", &why).name == "linear");
  }

  TEST_CASE("a rule whose algorithm does not accept the call falls through to the next") {
    clean_selection clean;
    use_sample_table("fall.json");
    std::string why;
    // Commutative: circulant (rule 5). Non-commutative: circulant needs commutativity -> rule 6.
    CHECK(select_algorithm(args_of(collective::allreduce, 5, 10, true), 4, "auto", &why).name == "circulant");
    CHECK(select_algorithm(args_of(collective::allreduce, 5, 10, false), 4, "auto", &why).name == "recursive_doubling");
    CHECK(contains(why, "table fall.json, rule 6 (any p, any size)"));
    CHECK(contains(why, "passed over rule 5: circulant needs a commutative operator"));
    // p = 8: hypercube (rule 7); p = 6: not a power of two -> pairwise (rule 8).
    CHECK(select_algorithm(args_of(collective::alltoall, 8, 16), 4, "auto", &why).name == "hypercube");
    CHECK(select_algorithm(args_of(collective::alltoall, 6, 16), 4, "auto", &why).name == "pairwise");
    CHECK(contains(why,
                   "rule 8 (p 2..64, <= 1024 B) (passed over rule 7: hypercube needs p to be a power of two (p = 6))"));
    // The result is right on the executors too (non-commutative allreduce via the table).
    const call c = make_call(collective::allreduce, 5, 6, 0, datatype_of<matrix2x2>(), matrix2x2_product());
    const check_result r = expect_verified(c, executor_kind::threads);
    CHECK(r.algo->name == "recursive_doubling");
    // Beyond the table's rules for alltoall (1025 bytes): the built-in table.
    CHECK(select_algorithm(args_of(collective::alltoall, 6, 1025 / 4 + 1), 4, "auto", &why).name == "pairwise");
    CHECK(contains(why, "has no rule for this call"));
  }

  TEST_CASE("auto never picks an algorithm outside its preconditions (built-in and adversarial tables)") {
    clean_selection clean;
    // Adversarial: for every collective every registered algorithm, the most demanding first.
    selection_table hostile;
    hostile.source = "hostile.json";
    for (const algorithm* a : registry::all())
      if (a->needs_commutative || a->needs_power_of_two || a->only_p > 0) hostile.rules.push_back(rule(a->coll, std::string(a->name)));
    for (const algorithm* a : registry::all())
      if (!a->needs_commutative && !a->needs_power_of_two && a->only_p == 0) hostile.rules.push_back(rule(a->coll, std::string(a->name)));
    const std::vector<int> ps = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 31, 32, 33, 64, 100, 128};
    int checked = 0;
    for (int table = 0; table < 2; ++table) {
      if (table == 0)
        reset_selection();
      else
        use_selection(hostile);
      for (int i = 0; i < collective_count; ++i) {
        const auto c = static_cast<collective>(i);
        if (registry::for_collective(c).empty()) continue;
        for (int p : ps)
          for (bool commutative : {true, false})
            for (std::uint64_t count : {0, 1, 100, 100000}) {
              const coll_args a = args_of(c, p, count, commutative);
              bool any = false;
              for (const algorithm* x : registry::for_collective(c)) any = any || meets_preconditions(*x, a);
              INFO(describe(a), " commutative=", commutative, " table=", table);
              if (!any) {
                // Nothing can run it: a usage error naming the problem, never a wrong choice.
                CHECK_THROWS_AS(select_algorithm(a, 4, "auto"), usage_error);
                continue;
              }
              const algorithm& chosen = select_algorithm(a, 4, "auto");
              CHECK(meets_preconditions(chosen, a));
              CHECK(chosen.coll == c);
              ++checked;
            }
      }
    }
    CHECK(checked > 500);
  }

  // ---- visibility -------------------------------------------------------------------------------------

  TEST_CASE("RANKLAB_LOG_SELECTION logs every choice to stderr with its reason") {
    clean_selection clean;
    use_sample_table("log.json");
    scoped_env log("RANKLAB_LOG_SELECTION", "1");
    temp_file f("stderr.txt");
    std::fflush(stderr);
    const int saved = dup(2);
    FILE* capture = std::fopen(f.path.c_str(), "w");
    REQUIRE(capture != nullptr);
    dup2(fileno(capture), 2);
    (void)select_algorithm(args_of(collective::bcast, 4, 100), 4, "auto");
    (void)select_algorithm(args_of(collective::bcast, 4, 100), 4, "linear");
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::fclose(capture);
    std::ifstream in(f.path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    INFO(s);
    CHECK(contains(s, "ranklab: bcast(p=4"));
    CHECK(contains(s, "-> binomial (table log.json, rule 2 (p 3..8, <= 4096 B): measured fastest at p 4, 4 KiB)"));
    CHECK(contains(s, "-> linear (requested by the caller)"));
  }

  TEST_CASE("describe_rule, selection_bytes, model_for") {
    selection_table t = sample_table();
    CHECK(describe_rule(t, 0) == "rule 1 (p 1..2, any size)");
    CHECK(describe_rule(t, 1) == "rule 2 (p 3..8, <= 4096 B)");
    CHECK(describe_rule(t, 3) == "rule 4 (p >= 9, any size)");
    CHECK(describe_rule(t, 4) == "rule 5 (any p, any size)");
    t.rules[0].p_min = t.rules[0].p_max = 4;
    CHECK(describe_rule(t, 0) == "rule 1 (p 4, any size)");
    CHECK(selection_bytes(args_of(collective::allreduce, 4, 100), 8) == 800);
    CHECK(selection_bytes(args_of(collective::allgather, 4, 100), 4) == 400);
    coll_args v = args_of(collective::allgatherv, 4, 0);
    v.counts = {0, 10, 20, 30};
    CHECK(selection_bytes(v, 4) == 60);  // the mean block
    coll_args w = args_of(collective::alltoallv, 2, 0);
    w.counts = {1, 3, 5, 7};
    CHECK(selection_bytes(w, 8) == 32);
    CHECK(selection_bytes(args_of(collective::bcast, 4, ~std::uint64_t{0}), 8) == unbounded_bytes);
    CHECK(t.model_for(100).alpha == 3.5e-7);
    CHECK(t.model_for(2048).beta == 2.5e-10);
    CHECK(t.model_for(2049).alpha == 9.0e-7);
    CHECK(t.model_for(2049).gamma == t.model.gamma);
    t.bands.clear();
    CHECK(t.model_for(2049).alpha == t.model.alpha);
  }

  TEST_CASE("the table's cost model is the machine cost model: circulant sizes its blocks with it") {
    clean_selection clean;
    CHECK(detail::machine_cost_model().alpha == shipped_selection().model.alpha);
    const coll_args a = [] {
      coll_args x = args_of(collective::bcast, 8, 1 << 16);
      x.elem_size = 8;
      return x;
    }();
    const algorithm& circ = *registry::find(collective::bcast, "circulant");
    const int q = 3;  // ceil(log2 8)
    auto rounds = [&] { return verify(build_all(circ, a)).rounds; };
    selection_table t;
    t.source = "model.json";
    t.model = cost_model{1.0, 1e-12, 0};  // messages are all latency: one block, q rounds
    use_selection(t);
    CHECK(detail::machine_cost_model().alpha == 1.0);
    CHECK(rounds() == q);
    t.model = cost_model{1e-6, 1e-8, 0};  // bandwidth dominates: n* = sqrt(2 * 1e-8 * 512 KiB / 1e-6) ~ 102
    use_selection(t);
    CHECK(detail::machine_cost_model().beta == 1e-8);
    CHECK(rounds() > q + 50);
    CHECK(rounds() < q + 200);
    reset_selection();
    CHECK(detail::machine_cost_model().beta == shipped_selection().model.beta);
  }

  TEST_CASE("the shipped table: measured, valid, used when nothing is installed, every collective covered") {
    clean_selection clean;
    const selection_table& s = shipped_selection();
    CHECK(s.source == "shipped data/selection/default.json");
    CHECK(s.machine_json.find("\"tool\"") != std::string::npos);  // written by ranklab tune
    CHECK(s.model.alpha > 0);
    CHECK(s.model.beta > 0);
    // Every rule names a registered algorithm of its collective (parse_selection refuses
    // others), and round-trips through the file format.
    CHECK(parse_selection(to_json(s), "again.json").rules == s.rules);
    CHECK(current_selection()->source == s.source);
    // Every collective at every p measured: auto answers from the table (not by falling back).
    for (int ci = 0; ci < collective_count; ++ci) {
      const auto c = static_cast<collective>(ci);
      for (int p : {2, 4, 8, 16}) {
        coll_args a = args_of(c, p, c == collective::barrier ? 0 : 16);
        if (has_vector_counts(c)) {
          a.count = 0;
          a.counts.assign(c == collective::alltoallv ? static_cast<std::size_t>(p) * p : static_cast<std::size_t>(p),
                          4);
        }
        std::string why;
        select_algorithm(a, 4, "auto", &why);
        INFO(name(c), " p=", p, ": ", why);
        CHECK(why.find("table shipped") == 0);
      }
    }
    // RANKLAB_SELECTION=builtin picks the hand-written rows instead.
    reset_selection();
    {
      scoped_env e("RANKLAB_SELECTION", "builtin");
      CHECK(current_selection()->source == "built-in");
    }
    reset_selection();
  }

}  // TEST_SUITE
