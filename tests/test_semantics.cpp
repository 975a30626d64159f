// The semantic check (ranklab/semantics.hpp) on a gallery of deliberately wrong algorithms,
// each caught with the message that names its mistake, and on right ones that must pass.
// The wrong ones are registered in this executable only, so the suites that loop over the
// registry never see them. Builders use the public schedule API alone, as a user's would.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <atomic>
#include <string>
#include <vector>

#include "ranklab/ranklab.hpp"
#include "ranklab/semantics.hpp"

using namespace ranklab;

namespace {

region whole(buffer_id b, std::uint64_t n) { return {b, 0, n}; }
int mod(int x, int p) { return ((x % p) + p) % p; }

// ---- the gallery ------------------------------------------------------------------------

// Allreduce: out = in, then in round k every rank sends its `in` to r + k and adds what
// r - k sent. Right out of place; in place `in` is `out`, so later rounds send partial sums.
schedule reads_in_late(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, a.count);
  s.copy(whole(in_buffer, a.count), whole(out_buffer, a.count));
  for (int k = 1; k < a.p; ++k) {
    s.next_round();
    s.send(mod(rank + k, a.p), whole(in_buffer, a.count));
    s.recv(mod(rank - k, a.p), whole(out_buffer, a.count), combine::reduce_in_left);
  }
  return s;
}

// The same without the first copy: the first message lands by copy, later ones add. Every
// rank's own input is missing.
schedule forgets_own(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, a.count);
  for (int k = 1; k < a.p; ++k) {
    s.next_round();
    s.send(mod(rank + k, a.p), whole(in_buffer, a.count));
    s.recv(mod(rank - k, a.p), whole(out_buffer, a.count), k == 1 ? combine::copy : combine::reduce_in_left);
  }
  return s;
}

// reads_in_late plus one more round with k = 1: rank r - 1's input is added twice.
schedule adds_twice(const coll_args& a, int rank) {
  schedule s = reads_in_late(a, rank);
  if (a.p > 1) {
    s.next_round();
    s.send(mod(rank + 1, a.p), whole(in_buffer, a.count));
    s.recv(mod(rank - 1, a.p), whole(out_buffer, a.count), combine::reduce_in_left);
  }
  return s;
}

// Bcast: the root sends to rank v in round v - 1 (forgetting to shift by the root), while
// every other rank waits in the round of its distance from the root. Right for root 0 only.
schedule sends_to_wrong_rank(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  for (int v = 1; v < a.p; ++v) {
    s.next_round();
    if (rank == a.root && v != a.root)
      s.send(v, whole(out_buffer, a.count));
    else if (rank != a.root && mod(rank - a.root, a.p) == v)
      s.recv(a.root, whole(out_buffer, a.count));
  }
  return s;
}

// Bcast from rank 0 whatever the root: the ranks agree with each other, the data is wrong.
schedule ignores_root(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  for (int v = 1; v < a.p; ++v) {
    s.next_round();
    if (rank == 0) s.send(v, whole(out_buffer, a.count));
    if (rank == v) s.recv(0, whole(out_buffer, a.count));
  }
  return s;
}

// Gather: every rank sends one element more than its block (reading past `in`).
schedule reads_past_buffer(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, rank == a.root ? a.count * a.p : 0);
  for (int v = 0; v < a.p; ++v) {
    if (v == a.root) continue;
    s.next_round();
    if (rank == v) s.send(a.root, {in_buffer, 0, a.count + 1});
    if (rank == a.root) s.recv(v, {out_buffer, a.count * v, a.count + 1});
  }
  if (rank == a.root) s.copy(whole(in_buffer, a.count), {out_buffer, a.count * a.root, a.count});
  return s;
}

// Bcast whose root sends to two ranks in one round (not one-ported).
schedule two_sends_in_a_round(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  s.next_round();
  for (int v = 0; v < a.p; ++v)
    if (v != a.root) {
      if (rank == a.root) s.send(v, whole(out_buffer, a.count));
      if (rank == v) s.recv(a.root, whole(out_buffer, a.count));
    }
  return s;
}

// Reduce to the root, which takes its own input first and then adds the others' from the
// highest rank down, each on the right: 0, p-1, ..., 1. Right only if the operator commutes.
schedule wrong_order(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, rank == a.root ? a.count : 0);
  if (rank == a.root) s.copy(whole(in_buffer, a.count), whole(out_buffer, a.count));
  for (int k = 1; k < a.p; ++k) {
    const int from = mod(a.root - k, a.p);
    s.next_round();
    if (rank == from) s.send(a.root, whole(in_buffer, a.count));
    if (rank == a.root) s.recv(from, whole(out_buffer, a.count), combine::reduce_in_right);
  }
  return s;
}

// Barrier: one round, each rank tells its right neighbour. Nobody hears from the others.
schedule half_barrier(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, 0);
  if (a.p > 1) {
    s.next_round();
    s.send(mod(rank + 1, a.p), {});
    s.recv(mod(rank - 1, a.p), {});
  }
  return s;
}

// reads_in_late made right: in place, the prologue keeps a copy of the input in a scratch
// buffer and the rounds send that. Counts the in-place builds it was asked for.
std::atomic<int> in_place_builds{0}, separate_builds{0};
schedule in_place_aware(const coll_args& a, int rank) {
  if (!a.in_place) {
    ++separate_builds;
    return reads_in_late(a, rank);
  }
  ++in_place_builds;
  schedule s(rank, a.p, a.count, a.count);
  const buffer_id mine = s.scratch(a.count);
  s.copy(whole(in_buffer, a.count), whole(mine, a.count));  // in is out: nothing else to copy
  for (int k = 1; k < a.p; ++k) {
    s.next_round();
    s.send(mod(rank + k, a.p), whole(mine, a.count));
    s.recv(mod(rank - k, a.p), whole(out_buffer, a.count), combine::reduce_in_left);
  }
  return s;
}

// The allreduce schedules add in no particular rank order: they say so.
template <collective C>
algorithm wrong(std::string_view name, schedule (*build)(const coll_args&, int)) {
  return {.name = name,
          .coll = C,
          .summary = "a deliberately wrong schedule (tests/test_semantics.cpp)",
          .needs_commutative = C == collective::allreduce,
          .build = build};
}

RANKLAB_REGISTER_ALGORITHM(wrong<collective::allreduce>("gallery_reads_in_late", reads_in_late));
RANKLAB_REGISTER_ALGORITHM(wrong<collective::allreduce>("gallery_forgets_own", forgets_own));
RANKLAB_REGISTER_ALGORITHM(wrong<collective::allreduce>("gallery_adds_twice", adds_twice));
RANKLAB_REGISTER_ALGORITHM(wrong<collective::bcast>("gallery_wrong_rank", sends_to_wrong_rank));
RANKLAB_REGISTER_ALGORITHM(wrong<collective::bcast>("gallery_ignores_root", ignores_root));
RANKLAB_REGISTER_ALGORITHM(wrong<collective::gather>("gallery_reads_past", reads_past_buffer));
RANKLAB_REGISTER_ALGORITHM(wrong<collective::bcast>("gallery_two_sends", two_sends_in_a_round));
RANKLAB_REGISTER_ALGORITHM(wrong<collective::reduce>("gallery_wrong_order", wrong_order));
RANKLAB_REGISTER_ALGORITHM(wrong<collective::barrier>("gallery_half_barrier", half_barrier));
RANKLAB_REGISTER_ALGORITHM(wrong<collective::allreduce>("gallery_in_place_aware", in_place_aware));

const algorithm& entry(collective c, std::string_view name) {
  const algorithm* a = registry::find(c, name);
  REQUIRE(a != nullptr);
  return *a;
}

coll_args args_of(collective c, int p, std::uint64_t count, int root = 0, bool in_place = false,
                  bool commutative = true) {
  coll_args a;
  a.coll = c;
  a.p = p;
  a.count = count;
  a.root = root;
  a.in_place = in_place;
  a.commutative = commutative;
  return a;
}

semantic_report semantics_of(collective c, std::string_view name, const coll_args& a) {
  return check_semantics(build_all(entry(c, name), a), a);
}

std::string all_problems(const verify_summary& s) {
  std::string text;
  for (const verify_failure& f : s.failures)
    for (const std::string& p : f.problems) text += p + "\n";
  return text;
}

bool contains(const std::string& text, std::string_view what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST_SUITE("semantic check: the gallery of wrong algorithms") {
  TEST_CASE("reading `in` after the prologue is right out of place and wrong in place, with the read named") {
    for (int p : {3, 5, 8}) {  // at p = 2 the one round sends the input before anything lands
      INFO("p = ", p);
      CHECK(semantics_of(collective::allreduce, "gallery_reads_in_late", args_of(collective::allreduce, p, 3)).ok);
      const semantic_report in_place =
          semantics_of(collective::allreduce, "gallery_reads_in_late", args_of(collective::allreduce, p, 3, 0, true));
      REQUIRE_FALSE(in_place.ok);
      std::string text;
      for (const auto& line : in_place.problems) text += line + "\n";
      INFO(text);
      CHECK(contains(text, "reads in[0] after writing out[0]"));
      CHECK(contains(text, "in place they are one element"));
      REQUIRE(in_place.first.has_value());
      CHECK(in_place.first->expected == fmt::format("element 0 combined over ranks 0..{}", p - 1));
    }
    // The sweep names the failing calls: every one in place, none out of place.
    const verify_summary s = verify_algorithm(entry(collective::allreduce, "gallery_reads_in_late"), 4);
    REQUIRE_FALSE(s.ok());
    for (const verify_failure& f : s.failures) CHECK(f.args.in_place);
  }

  TEST_CASE("a missing own contribution is named, rank by rank") {
    const semantic_report r =
        semantics_of(collective::allreduce, "gallery_forgets_own", args_of(collective::allreduce, 5, 2));
    REQUIRE_FALSE(r.ok);
    REQUIRE(r.first.has_value());
    CHECK(r.first->rank == 0);
    CHECK(r.first->index == 0);
    CHECK(r.first->expected == "element 0 combined over ranks 0..4");
    CHECK(r.first->got == "element 0 combined over ranks 1..4");
    CHECK(r.wrong_elements == 10);  // every element of every rank
    CHECK(contains(r.problems.at(1), "missing: rank 0"));
    CHECK(contains(r.problems.at(2), "rank 1, out[0]"));
    CHECK(contains(r.problems.at(2), "missing: rank 1"));
  }

  TEST_CASE("a contribution added twice is named") {
    const semantic_report r =
        semantics_of(collective::allreduce, "gallery_adds_twice", args_of(collective::allreduce, 4, 1));
    REQUIRE_FALSE(r.ok);
    REQUIRE(r.first.has_value());
    CHECK(r.first->got == "an invalid combination (rank 3's contribution to element 0 twice)");
  }

  TEST_CASE("a send to the wrong rank fails the structure for every root but 0") {
    const algorithm& a = entry(collective::bcast, "gallery_wrong_rank");
    const verify_summary s = verify_algorithm(a, 5);
    REQUIRE_FALSE(s.ok());
    for (const verify_failure& f : s.failures) CHECK(f.args.root != 0);
    INFO(all_problems(s));
    CHECK(contains(all_problems(s), "which does not receive from it"));
    CHECK(verify_algorithm(a, 5, {.root = 0}).ok());
  }

  TEST_CASE("a broadcast from the wrong root: the ranks agree, the data is not the root's") {
    const semantic_report r =
        semantics_of(collective::bcast, "gallery_ignores_root", args_of(collective::bcast, 4, 2, /*root=*/2));
    REQUIRE_FALSE(r.ok);
    REQUIRE(r.first.has_value());
    CHECK(r.first->rank == 0);
    CHECK(r.first->expected == "rank 2's element 0");
    CHECK(r.first->got == "what out[0] held before the call");
    CHECK(contains(r.problems.at(2), "rank 1, out[0]: expected rank 2's element 0, got what rank 0's out[0]"));
  }

  TEST_CASE("reading past a buffer is a structural finding with the bounds") {
    const verify_summary s = verify_algorithm(entry(collective::gather, "gallery_reads_past"), 3, {.root = 1});
    REQUIRE_FALSE(s.ok());
    INFO(all_problems(s));
    CHECK(contains(all_problems(s), "send [0, 2) exceeds buffer 0 of 1 elements"));
  }

  TEST_CASE("two sends in one round: the schedule refuses it, and the sweep reports the builder") {
    const verify_summary s = verify_algorithm(entry(collective::bcast, "gallery_two_sends"), 3, {.root = 0});
    REQUIRE_FALSE(s.ok());
    INFO(all_problems(s));
    CHECK(contains(all_problems(s), "the builder throws"));
    CHECK(contains(all_problems(s), "send"));
  }

  TEST_CASE("the wrong order is caught for a non-commutative operator only") {
    CHECK(semantics_of(collective::reduce, "gallery_wrong_order", args_of(collective::reduce, 4, 1, 0)).ok);
    const semantic_report r =
        semantics_of(collective::reduce, "gallery_wrong_order", args_of(collective::reduce, 4, 1, 0, false, false));
    REQUIRE_FALSE(r.ok);
    REQUIRE(r.first.has_value());
    CHECK(r.first->got == "element 0 combined in the order 0, 3, 2, 1");
    CHECK(contains(r.problems.at(1), "in the wrong order for an operator that is not commutative"));
    // Root 3: 3, 2, 1, 0 is wrong as well; p = 2 has one order only, which is right at root 0.
    CHECK_FALSE(
        semantics_of(collective::reduce, "gallery_wrong_order", args_of(collective::reduce, 4, 1, 3, false, false)).ok);
    CHECK(
        semantics_of(collective::reduce, "gallery_wrong_order", args_of(collective::reduce, 2, 1, 0, false, false)).ok);
  }

  TEST_CASE("a barrier that lets ranks leave before the others entered") {
    const semantic_report r =
        semantics_of(collective::barrier, "gallery_half_barrier", args_of(collective::barrier, 3, 0));
    REQUIRE_FALSE(r.ok);
    REQUIRE_FALSE(r.problems.empty());
    CHECK(contains(r.problems.front(), "rank 0 can leave the barrier before rank 1 has entered it"));
    CHECK(semantics_of(collective::barrier, "gallery_half_barrier", args_of(collective::barrier, 2, 0)).ok);
  }
}

TEST_SUITE("semantic check: verdicts") {
  TEST_CASE("run_check verifies first: a broken schedule is not run, its findings are returned") {
    for (auto ex : {executor_kind::threads, executor_kind::sequential}) {
      const call bad = make_call(collective::bcast, 4, 8, 2, datatype_of<int>(), ops::sum, {"gallery_wrong_rank"});
      const check_result r = run_check(bad, ex);
      CHECK_FALSE(r.verified);
      CHECK_FALSE(r.report.ok);
      CHECK(contains(r.difference, "which does not receive from it"));
      const call missing =
          make_call(collective::allreduce, 3, 4, 0, datatype_of<int>(), ops::sum, {"gallery_forgets_own"});
      const check_result m = run_check(missing, ex);
      CHECK_FALSE(m.verified);
      CHECK(contains(m.difference, "missing: rank 0"));
    }
  }

  TEST_CASE("run_check in place: the reference with one buffer per rank") {
    for (collective c : {collective::allreduce, collective::scan, collective::exscan})
      for (int p : {1, 2, 5}) {
        call cl = make_call(c, p, 7, 0, datatype_of<int>(), ops::sum);
        cl.args.in_place = true;
        for (auto ex : {executor_kind::threads, executor_kind::sequential}) {
          const check_result r = run_check(cl, ex);
          INFO(name(c), " p = ", p, ": ", r.difference);
          CHECK(r.verified);
        }
      }
    call shifted = make_call(collective::allreduce, 4, 3, 0, datatype_of<int>(), ops::sum, {"gallery_reads_in_late"});
    CHECK(run_check(shifted, executor_kind::threads).verified);
    shifted.args.in_place = true;
    const check_result r = run_check(shifted, executor_kind::threads);
    CHECK_FALSE(r.verified);
    CHECK(contains(r.difference, "after writing out[0]"));
  }

  TEST_CASE("comm calls in place build the in-place schedule: coll_args::in_place reaches the builder") {
    const verify_summary aware = verify_algorithm(entry(collective::allreduce, "gallery_in_place_aware"), 6);
    INFO(all_problems(aware));
    CHECK(aware.ok());
    in_place_builds = separate_builds = 0;
    run(5, [](comm& c) {
      std::vector<int> x(3, c.rank() + 1), y(3, 0);
      c.allreduce(x, y, ops::sum, {"gallery_in_place_aware"});
      c.allreduce(x, ops::sum, {"gallery_in_place_aware"});
      for (int v : y) CHECK(v == 15);
      for (int v : x) CHECK(v == 15);
    });
    CHECK(separate_builds == 5);  // once per rank each: the schedule cache keeps them apart
    CHECK(in_place_builds == 5);
  }

  TEST_CASE("the definitions: every collective's right answer passes, p = 1 included") {
    for (const algorithm* a : registry::all()) {
      if (a->name.starts_with("gallery_")) continue;
      for (int p : {1, 3})
        if (!verify_algorithm(*a, p, {.every_root = false}).ok()) {
          FAIL_CHECK(name(a->coll), "/", a->name, " p = ", p, ": ",
                     verify_algorithm(*a, p, {.every_root = false}).failures.front().problems.front());
        }
    }
  }

  TEST_CASE("in place where the collective has no in-place form is a usage error") {
    coll_args a = args_of(collective::bcast, 3, 1);
    a.in_place = true;
    CHECK_THROWS_AS(validate(a), usage_error);
  }
}
