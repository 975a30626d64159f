// Scatter, scatterv, gather, gatherv: the claims of the registered algorithms -- round
// counts (linear p-1, binomial ceil(log2 p)), one message per non-root, every element moved
// to or from the root exactly once along the tree, the volume of the binomial tree derived
// from its subtrees, and the registry entries. Results against the reference (roots 0, p-1,
// p/2, irregular counts and displacements): test_conformance.cpp.
// See docs/algorithms.md, "scatter" and "gather".
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "collective_checks.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

// Size of relative rank v's subtree in the top-down binomial tree, derived by recursive
// halving at powers of two (as H. Zhou et al. describe the binomial scatter in "A
// Bandwidth-saving Optimization for MPI Broadcast Collective Operation"), independently of
// the builders.
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

TEST_CASE("scatter(v)/gather(v): rounds, messages and volumes") {
  for (collective c : {collective::scatter, collective::gather, collective::scatterv, collective::gatherv})
    for (int p = 1; p <= 70; ++p) {
      const std::vector<int> size = subtree_sizes(p);
      for (int root : roots_for(p)) {
        // counts: rank r has r % 4 + 1 elements (non-zero, so no empty messages hide)
        std::vector<std::uint64_t> counts;
        for (int r = 0; r < p; ++r) counts.push_back(static_cast<std::uint64_t>(r % 4 + 1));
        const bool regular = c == collective::scatter || c == collective::gather;
        auto make = [&](std::string_view algo) {
          if (regular) return make_call(c, p, 3, root, i32, ops::sum, {algo});
          return make_vcall(c, p, counts, {}, root, i32, ops::sum, {algo});
        };
        auto block = [&](int v) {  // elements of relative rank v's block
          const int rank = (v + root) % p;
          return regular ? std::uint64_t{3} : counts[static_cast<std::size_t>(rank)];
        };
        std::uint64_t others = 0, tree = 0;  // linear volume; binomial: every block once per ancestor edge
        for (int v = 1; v < p; ++v) {
          others += block(v);
          for (int w = v; w < v + size[static_cast<std::size_t>(v)]; ++w) tree += block(w);
        }
        INFO(name(c) << " p=" << p << " root=" << root);
        const call lin = make("linear"), bin = make("binomial");
        const verify_report rl = report_of(lin, true), rb = report_of(bin, true);
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
    check_registry_entries(c);
}
