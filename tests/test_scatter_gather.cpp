// Scatter, scatterv, gather, gatherv: linear and binomial (issue 4). Results against the
// sequential reference for p = 1..33 (sequential executor), a thread-executor subset and
// p = 100, 127, 128, 129; roots 0, p-1, p/2; block counts 0, 1, p-1, 7, 1000 (plus 3p+1);
// int32 and float64. v-variants with irregular counts (zeros, one rank holding everything,
// displacements with gaps in reverse rank order). Round counts (linear p-1, binomial
// ceil(log2 p)), one message per non-root, every element moved to or from the root exactly
// once along the tree, and the volume of the binomial tree derived from its subtrees.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "collective_checks.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

const std::vector<collective> plain = {collective::scatter, collective::gather};
const std::vector<collective> vector_colls = {collective::scatterv, collective::gatherv};
const std::vector<std::string> algorithms = {"linear", "binomial"};

std::vector<int> roots_for(int p) {
  std::vector<int> r = {0, p - 1, p / 2};
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

std::vector<std::uint64_t> counts_for(int p) {
  const auto P = static_cast<std::uint64_t>(p);
  std::vector<std::uint64_t> c = {0, 1, P - 1, 7, 3 * P + 1, 1000};
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

int ceil_log2(std::int64_t p) {
  int l = 0;
  while ((std::int64_t{1} << l) < p) ++l;
  return l;
}

struct layout {
  std::string name;
  std::vector<std::uint64_t> counts, displs;
};

// Irregular count patterns for p ranks (and a root): all zero, cycling with zeros, one rank
// holding everything (the root, its successor, the last rank), increasing; each packed and
// with displacements in reverse rank order with gaps.
std::vector<layout> layouts_for(int p, int root) {
  const auto P = static_cast<std::size_t>(p);
  std::vector<layout> out;
  out.push_back({"zeros", std::vector<std::uint64_t>(P, 0), {}});
  layout cyc{"cycling", {}, {}};
  for (std::size_t j = 0; j < P; ++j) cyc.counts.push_back((j * 7 + 3) % 5);
  out.push_back(cyc);
  for (int hot : {root, (root + 1) % p, p - 1}) {
    layout one{"one rank " + std::to_string(hot), std::vector<std::uint64_t>(P, 0), {}};
    one.counts[static_cast<std::size_t>(hot)] = 50;
    out.push_back(one);
  }
  layout inc{"increasing", {}, {}};
  for (std::size_t j = 0; j < P; ++j) inc.counts.push_back(j);
  out.push_back(inc);
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) {  // the same counts with displacements
    layout d = out[i];
    d.name += ", reversed with gaps";
    d.displs.assign(P, 0);
    std::uint64_t at = 3;
    for (std::size_t j = P; j-- > 0;) {
      d.displs[j] = at;
      at += d.counts[j] + 2;
    }
    out.push_back(d);
  }
  return out;
}

call make_vcall(collective c, std::string_view algo, int p, int root, const layout& l,
                datatype type = datatype_of<std::int32_t>()) {
  call cl = make_call(c, algo, p, 0, root, type);
  cl.args.counts = l.counts;
  cl.args.displs = l.displs;
  return cl;
}

verify_report report_of(const call& c) {
  const algorithm* a = registry::find(c.args.coll, c.choice.name);
  REQUIRE(a != nullptr);
  const schedule_set plans = build_all(*a, c.args);
  verify_report r = verify(plans, /*count_receives=*/true);
  CHECK_MESSAGE(r.ok, (r.problems.empty() ? "" : r.problems.front()));
  return r;
}

// Size of relative rank v's subtree in the top-down binomial tree, derived by recursive
// halving at powers of two (seed 003's description), independently of the builders.
std::vector<int> subtree_sizes(int p) {
  std::vector<int> size(static_cast<std::size_t>(p), 0);
  std::vector<std::pair<int, int>> todo = {{0, p}};
  while (!todo.empty()) {
    auto [v, n] = todo.back();
    todo.pop_back();
    size[static_cast<std::size_t>(v)] = n;
    while (n > 1) {
      int h = 1;
      while (h * 2 < n) h *= 2;
      todo.push_back({v + h, n - h});
      n = h;
    }
  }
  return size;
}

}  // namespace

TEST_CASE("scatter/gather: linear and binomial match the reference, p = 1..33, sequential") {
  for (collective c : plain)
    for (const auto& algo : algorithms)
      for (int p = 1; p <= 33; ++p)
        for (int root : roots_for(p))
          for (std::uint64_t count : counts_for(p)) {
            expect_verified(make_call(c, algo, p, count, root), executor_kind::sequential);
            expect_verified(make_call(c, algo, p, count, root, datatype_of<double>()), executor_kind::sequential);
          }
}

TEST_CASE("scatter/gather: thread executor") {
  for (collective c : plain)
    for (const auto& algo : algorithms)
      for (int p : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17})
        for (int root : roots_for(p)) {
          for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{1000}})
            expect_verified(make_call(c, algo, p, count, root), executor_kind::threads);
          expect_verified(make_call(c, algo, p, 33, root, datatype_of<double>()), executor_kind::threads);
        }
}

TEST_CASE("scatter/gather: large p, sequential") {
  for (collective c : plain)
    for (const auto& algo : algorithms)
      for (int p : {100, 127, 128, 129})
        for (int root : roots_for(p))
          for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{100}})
            expect_verified(make_call(c, algo, p, count, root), executor_kind::sequential);
}

TEST_CASE("scatterv/gatherv: irregular counts and displacements") {
  for (collective c : vector_colls)
    for (const auto& algo : algorithms) {
      for (int p = 1; p <= 33; ++p)
        for (int root : roots_for(p))
          for (const layout& l : layouts_for(p, root)) {
            INFO("layout: " << l.name);
            expect_verified(make_vcall(c, algo, p, root, l), executor_kind::sequential);
          }
      for (int p : {1, 2, 3, 5, 8, 9, 16, 17})
        for (int root : roots_for(p))
          for (const layout& l : layouts_for(p, root)) {
            INFO("layout: " << l.name);
            expect_verified(make_vcall(c, algo, p, root, l), executor_kind::threads);
          }
      for (int p : {100, 127, 128, 129})
        for (int root : roots_for(p))
          for (const layout& l : layouts_for(p, root)) {
            INFO("layout: " << l.name);
            expect_verified(make_vcall(c, algo, p, root, l), executor_kind::sequential);
          }
      for (int p : {6, 13})
        expect_verified(make_vcall(c, algo, p, 1, layouts_for(p, 1)[1], datatype_of<double>()),
                        executor_kind::sequential);
    }
}

TEST_CASE("scatter(v)/gather(v): rounds, messages and volumes") {
  for (collective c : {collective::scatter, collective::gather, collective::scatterv, collective::gatherv})
    for (int p = 1; p <= 70; ++p) {
      const std::vector<int> size = subtree_sizes(p);
      for (int root : roots_for(p)) {
        // counts: rank r has r % 4 + 1 elements (non-zero, so no empty messages hide)
        layout l{"", {}, {}};
        for (int r = 0; r < p; ++r) l.counts.push_back(static_cast<std::uint64_t>(r % 4 + 1));
        auto make = [&](std::string_view algo) {
          if (c == collective::scatter || c == collective::gather) return make_call(c, algo, p, 3, root);
          return make_vcall(c, algo, p, root, l);
        };
        auto block = [&](int v) {  // elements of relative rank v's block
          const int rank = (v + root) % p;
          return c == collective::scatter || c == collective::gather ? std::uint64_t{3}
                                                                      : l.counts[static_cast<std::size_t>(rank)];
        };
        std::uint64_t others = 0, tree = 0;  // linear volume; binomial: every block once per ancestor edge
        for (int v = 1; v < p; ++v) {
          others += block(v);
          for (int w = v; w < v + size[static_cast<std::size_t>(v)]; ++w) tree += block(w);
        }
        INFO(name(c) << " p=" << p << " root=" << root);
        const call lin = make("linear"), bin = make("binomial");
        const verify_report rl = report_of(lin), rb = report_of(bin);
        CHECK(rl.rounds == static_cast<std::size_t>(p - 1));
        CHECK(static_cast<int>(rb.rounds) == ceil_log2(p));
        CHECK(rl.messages == static_cast<std::uint64_t>(p - 1));
        CHECK(rb.messages == static_cast<std::uint64_t>(p - 1));
        CHECK(rl.elements == others);
        CHECK(rb.elements == tree);
        // Every element of the result is written by exactly one receive (root's own block:
        // a local copy, none).
        const bool to_root = c == collective::gather || c == collective::gatherv;
        for (const auto* r : {&rl, &rb}) {
          if (to_root) {
            const auto& per = r->receives_per_element[static_cast<std::size_t>(root)];
            std::uint64_t once = 0;
            bool at_most_once = true;
            for (auto n : per) {
              once += n == 1;
              at_most_once = at_most_once && n <= 1;
            }
            CHECK(at_most_once);
            CHECK(once == others);
          } else {
            for (int rank = 0; rank < p; ++rank) {
              if (rank == root) continue;
              const auto& per = r->receives_per_element[static_cast<std::size_t>(rank)];
              CHECK(std::all_of(per.begin(), per.end(), [](std::uint32_t n) { return n == 1; }));
            }
          }
        }
      }
    }
}

TEST_CASE("scatter(v)/gather(v): the registry entries") {
  for (collective c : {collective::scatter, collective::gather, collective::scatterv, collective::gatherv})
    for (const auto& n : algorithms) {
      const algorithm* a = registry::find(c, n);
      REQUIRE_MESSAGE(a != nullptr, n);
      CHECK_FALSE(a->needs_commutative);
      CHECK_FALSE(a->needs_power_of_two);
      CHECK(static_cast<bool>(a->cost));
    }
}
