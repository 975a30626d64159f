// The hierarchical algorithms (every registered one with `hierarchical`, so a new one is
// tested without editing a list) on synthetic hierarchies, against the sequential reference
// of run_check: nested shapes (2x2, 2x3, 3x1x2, 2x2x2 ...), uneven and interleaved domains
// for p = 1..24, every root, counts 0, 1 and uneven; plus the hierarchy's own checks, and the
// structure of the composition (the groups' phases and who leads them).
#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <vector>

#include "patterns/hierarchy_phases.hpp"
#include "ranklab/check.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/hierarchy.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/team.hpp"

using namespace ranklab;

namespace {

std::vector<const algorithm*> hierarchical_algorithms() {
  std::vector<const algorithm*> out;
  for (const algorithm* a : registry::all())
    if (a->hierarchical) out.push_back(a);
  return out;
}

// Checks `a` on hierarchy `h` (p ranks) for every root and a few counts; returns failures.
int check_on(const algorithm& a, const rank_hierarchy& h, int p, const std::string& label) {
  int failures = 0;
  const bool rooted = is_rooted(a.coll);
  for (std::uint64_t count : {0u, 1u, 13u}) {
    if (a.coll == collective::barrier && count) continue;
    for (int root = 0; root < (rooted ? p : 1); ++root) {
      call c = make_call(a.coll, p, count, root, datatype_of<std::int32_t>(), ops::sum, algo{a.name});
      if (has_vector_counts(a.coll)) {
        // Irregular counts (zeros among them), blocks in reverse rank order with a gap of one
        // element after each: the gaps must stay untouched.
        std::vector<std::uint64_t> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
        for (int j = 0; j < p; ++j) counts[static_cast<std::size_t>(j)] = (count + static_cast<std::uint64_t>(j)) % 4;
        std::uint64_t at = 0;
        for (int j = p - 1; j >= 0; --j) {
          displs[static_cast<std::size_t>(j)] = at;
          at += counts[static_cast<std::size_t>(j)] + 1;
        }
        if (a.coll == collective::reduce_scatter) displs.clear();  // no displacements in reduce_scatter
        c = make_vcall(a.coll, p, counts, displs, root, datatype_of<std::int32_t>(), ops::sum, algo{a.name});
      }
      c.args.hierarchy = &h;
      const check_result r = run_check(c, executor_kind::sequential);
      if (!r.verified || !r.difference.empty()) {
        ++failures;
        if (failures <= 3)
          FAIL_CHECK(name(a.coll), " hierarchical on ", label, " (", h.describe(), ") p=", p, " root=", root,
                     " count=", count, ": ", r.difference);
      }
    }
  }
  return failures;
}

// p ranks in `domains` uneven domains: rank r in domain (r * r + 1) % domains, so domains
// are neither contiguous nor of equal size.
rank_hierarchy interleaved(int p, int domains) {
  std::vector<int> d(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) d[static_cast<std::size_t>(r)] = (r * r + 1) % domains;
  return rank_hierarchy::from_domains(d);
}

}  // namespace

TEST_SUITE("hierarchy") {
  TEST_CASE("shapes: nested domains, numbered domain by domain") {
    const rank_hierarchy h = rank_hierarchy::from_shape("3x1x2");
    REQUIRE(h.levels.size() == 3);
    CHECK(h.size() == 6);
    CHECK(h.levels[0].domain == std::vector<int>{0, 0, 1, 1, 2, 2});
    CHECK(h.levels[1].domain == std::vector<int>{0, 0, 1, 1, 2, 2});
    CHECK(h.levels[2].domain == std::vector<int>{0, 1, 2, 3, 4, 5});
    CHECK(h.describe() == "level0:3 level1:3 level2:6");
    CHECK_NOTHROW(h.validate(6));
    CHECK_THROWS_AS(h.validate(5), usage_error);
    CHECK_THROWS_AS(rank_hierarchy::from_shape("2x"), usage_error);
    CHECK_THROWS_AS(rank_hierarchy::from_shape("0x3"), usage_error);
    rank_hierarchy bad = rank_hierarchy::from_shape("2x2");
    bad.levels[1].domain = {0, 1, 1, 0};  // domain 1 spans both outer domains
    CHECK_THROWS_AS(bad.validate(4), usage_error);
  }

  TEST_CASE("the groups: innermost first, the root leads its groups, the top group is the leaders") {
    const rank_hierarchy h = rank_hierarchy::from_shape("2x3");  // {0,1,2} {3,4,5}
    coll_args a;
    a.coll = collective::reduce;
    a.p = 6;
    a.root = 4;
    a.hierarchy = &h;
    const auto at1 = detail::phases_up(a, 1, 4);
    REQUIRE(at1.size() == 2);  // level 0 (the domains of 3) and the top (2 leaders)
    CHECK(at1[0].group.members == std::vector<int>{0, 1, 2});
    CHECK(at1[0].leader_index == 0);
    CHECK(at1[1].group.members == std::vector<int>{0, 4});
    CHECK(at1[1].group.index == -1);  // rank 1 leads nothing
    const auto at4 = detail::phases_up(a, 4, 4);
    CHECK(at4[0].group.members == std::vector<int>{3, 4, 5});
    CHECK(at4[0].leader_index == 1);  // the root leads its domain
    CHECK(at4[1].group.index == 1);
    CHECK(at4[1].leader_index == 1);
  }

  TEST_CASE("every hierarchical algorithm on nested shapes, every root") {
    const auto algos = hierarchical_algorithms();
    REQUIRE(algos.size() >= 4);
    for (const char* shape : {"1", "2", "2x2", "2x3", "3x1x2", "2x2x2", "3x3", "1x4x1", "2x1x3x1"}) {
      const rank_hierarchy h = rank_hierarchy::from_shape(shape);
      for (const algorithm* a : algos) CHECK(check_on(*a, h, h.size(), shape) == 0);
    }
  }

  TEST_CASE("uneven and interleaved domains, p = 1..24") {
    for (int p = 1; p <= 24; ++p)
      for (int domains : {1, 2, 3, 5}) {
        const rank_hierarchy h = interleaved(p, domains);
        for (const algorithm* a : hierarchical_algorithms())
          CHECK(check_on(*a, h, p, "interleaved " + std::to_string(domains)) == 0);
      }
  }

  TEST_CASE("without a hierarchy: one group, the whole comm") {
    for (int p : {1, 2, 5, 8})
      for (const algorithm* a : hierarchical_algorithms()) {
        call c = make_call(a->coll, p, a->coll == collective::barrier ? 0 : 9, p - 1, datatype_of<std::int32_t>(),
                           ops::sum, algo{a->name});
        if (has_vector_counts(a->coll)) {
          const std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), 3);
          c = make_vcall(a->coll, p, counts, {}, p - 1, datatype_of<std::int32_t>(), ops::sum, algo{a->name});
        }
        const check_result r = run_check(c, executor_kind::sequential);
        CHECK_MESSAGE(r.verified, r.difference);
        CHECK_MESSAGE(r.difference.empty(), r.difference);
      }
  }

  TEST_CASE("cost: each level under its own model; a cheaper inner level makes it cheaper") {
    const algorithm* a = registry::find(collective::allreduce, "hierarchical");
    REQUIRE(a);
    rank_hierarchy h = rank_hierarchy::from_shape("4x8");  // 4 domains of 8: level 0 splits, level 1 is single ranks
    coll_args args;
    args.coll = collective::allreduce;
    args.p = 32;
    args.count = 1 << 16;
    args.hierarchy = &h;
    const double before = a->cost(args, 4, cost_model{});
    h.levels[1].cost.alpha /= 10;  // no phase runs inside a single rank: no change
    CHECK(a->cost(args, 4, cost_model{}) == doctest::Approx(before));
    h.levels[0].cost.alpha /= 10;
    h.levels[0].cost.beta /= 10;
    const double after = a->cost(args, 4, cost_model{});
    CHECK(after < before);
    CHECK(after > 0);
  }

  TEST_CASE("a comm on a synthetic topology runs the hierarchical algorithms over its domains") {
    team_options o = team_options::from_environment();
    o.topology = "package:2 numa:2 core:3";  // 12 cores: 3 per NUMA node, 6 per package
    for (int p : {12, 7, 16}) {
      INFO("p = ", p);
      std::vector<int> wrong(static_cast<std::size_t>(p), 0);
      run(
          p,
          [&](comm& c) {
            const int n = 50;
            std::vector<std::int64_t> x(n), y(n);
            for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = c.rank() * 1000 + i;
            c.allreduce(x, y, ops::sum, {"hierarchical"});
            CHECK(c.last_algorithm()->name == "hierarchical");
            const std::int64_t ranks = c.size();
            for (int i = 0; i < n; ++i)
              if (y[static_cast<std::size_t>(i)] != 1000 * ranks * (ranks - 1) / 2 + ranks * i) ++wrong[c.rank()];
            for (int root : {0, c.size() - 1, c.size() / 2}) {
              std::vector<std::int64_t> b(n, c.rank() == root ? 7 : -1);
              c.bcast(b, root, {"hierarchical"});
              for (std::int64_t v : b) wrong[c.rank()] += v != 7;
              std::vector<std::int64_t> r(c.rank() == root ? n : 0);
              c.reduce(x, r, ops::sum, root, {"hierarchical"});
              if (c.rank() == root)
                for (int i = 0; i < n; ++i)
                  wrong[c.rank()] += r[static_cast<std::size_t>(i)] != 1000 * ranks * (ranks - 1) / 2 + ranks * i;
            }
            c.barrier({"hierarchical"});
            std::vector<std::int64_t> mine{c.rank(), 2 * c.rank()}, all(2 * static_cast<std::size_t>(c.size()));
            c.allgather(mine, all, {"hierarchical"});
            const int last = c.size() - 1;
            std::vector<std::int64_t> at_root(c.rank() == last ? all.size() : 0), back(2);
            c.gather(mine, at_root, last, {"hierarchical"});
            if (c.rank() == last) wrong[c.rank()] += at_root != all;
            c.scatter(at_root, back, last, {"hierarchical"});
            wrong[c.rank()] += back != mine;
            // Block j of every rank's vector is j + rank: block j's sum at rank j.
            std::vector<std::int64_t> vec(static_cast<std::size_t>(c.size())), blk(1);
            for (int j = 0; j < c.size(); ++j) vec[static_cast<std::size_t>(j)] = j + c.rank();
            c.reduce_scatter_block(vec, blk, ops::sum, {"hierarchical"});
            wrong[c.rank()] += blk[0] != ranks * c.rank() + ranks * (ranks - 1) / 2;
            for (int j = 0; j < c.size(); ++j)
              wrong[c.rank()] += all[2 * static_cast<std::size_t>(j)] != j || all[2 * static_cast<std::size_t>(j) + 1] != 2 * j;
            // A sub-comm has the hierarchy of its own ranks: one package's ranks see NUMA only.
            comm pkg = c.split_type(domain::package);
            std::vector<std::int64_t> one{1}, count{0};
            pkg.allreduce(one, count, ops::sum, {"hierarchical"});
            wrong[c.rank()] += count[0] != pkg.size();
          },
          o);
      for (int r = 0; r < p; ++r) CHECK(wrong[static_cast<std::size_t>(r)] == 0);
    }
  }

  TEST_CASE("phase algorithms named per level: parsed, applied, refused where they cannot run") {
    const auto choices = rank_hierarchy::parse_choices("level0:reduce=knomial,top:allreduce=ring,bcast=binomial");
    REQUIRE(choices.size() == 3);
    CHECK(choices[0] == phase_choice{"level0", collective::reduce, "knomial"});
    CHECK(choices[1] == phase_choice{"top", collective::allreduce, "ring"});
    CHECK(choices[2] == phase_choice{"", collective::bcast, "binomial"});
    for (const char* bad : {"reduce", "nosuch=ring", "reduce=nosuch", "allreduce=hierarchical", "bcast=direct"}) {
      INFO(bad);
      CHECK_THROWS_AS(rank_hierarchy::parse_choices(bad), usage_error);
    }

    rank_hierarchy h = rank_hierarchy::from_shape("2x3");
    h.choices = choices;
    coll_args a;
    a.coll = collective::allreduce;
    a.p = 6;
    a.count = 10;
    a.hierarchy = &h;
    const auto phases = detail::phases_up(a, 0);
    REQUIRE(phases.size() == 2);
    const coll_args up = detail::phase_args(a, collective::reduce, 3, a.count);
    CHECK(detail::phase_algorithm(collective::reduce, up, phases[0], &h).name == "knomial");
    const coll_args top = detail::phase_args(a, collective::allreduce, 2, a.count);
    CHECK(detail::phase_algorithm(collective::allreduce, top, phases[1], &h).name == "ring");
    // Not named: the cheapest by the level's model.
    CHECK(detail::phase_algorithm(collective::allreduce, top, phases[1], nullptr).name != "");
    // The whole composition with the named phases is still right.
    for (const algorithm* x : hierarchical_algorithms()) CHECK(check_on(*x, h, 6, "2x3 with named phases") == 0);
    // A named algorithm that cannot run the phase: an error naming it, not a substitute.
    h.choices = rank_hierarchy::parse_choices("top:allreduce=circulant");
    coll_args noncommutative = top;
    noncommutative.commutative = false;
    CHECK_THROWS_WITH_AS(detail::phase_algorithm(collective::allreduce, noncommutative, phases[1], &h),
                         doctest::Contains("circulant"), usage_error);
  }

  TEST_CASE("deterministic mode on a synthetic topology: the same seed, the same trace") {
    const auto traced = [](std::uint64_t seed) {
      team_options o;
      o.execution = execution_mode::fibers;
      o.seed = seed;
      o.trace = true;
      o.topology = "package:2 numa:2 core:2";
      team t(8, o);
      run(t, [](comm& c) {
        std::vector<std::int32_t> v{c.rank(), 1}, w(2);
        request r = c.iallreduce(v, w, ops::sum, {"hierarchical"});
        c.bcast(v, 5, {"hierarchical"});
        r.wait();
        comm numa = c.split_type(domain::numa);
        numa.allreduce(v, w, ops::max, {"hierarchical"});
      });
      std::vector<std::tuple<int, std::uint32_t, std::uint32_t, std::uint32_t, int, int, std::uint64_t>> out;
      for (const trace_event& e : t.trace()) out.emplace_back(e.rank, e.comm, e.call, e.round, e.to, e.from, e.begin_ns);
      return out;
    };
    const auto first = traced(7);
    CHECK(!first.empty());
    CHECK(traced(7) == first);
  }
}
