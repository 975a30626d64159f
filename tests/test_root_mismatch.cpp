// Ranks of one comm that disagree about an (in-range) root of a rooted collective (bcast,
// reduce, gather(v), scatter(v)) get a mismatch_error that says so, whichever way the
// runtime finds out — a message's header, a peer's signature at a fence or a direct read,
// the deadlock detector, the messages left undelivered when the ranks return — and for
// every registered algorithm and auto:
//   "root mismatch in bcast #3: ranks 0, 2, 3 passed root 1, rank 1 passed root 2"
// (in a sub-comm with the comm and the ranks' team ranks). Each path knows a subset of the
// ranks (the two that met, the stuck ones and the senders of waiting messages): the tests
// check that every rank named is named with the root it passed and that two roots are
// named, and that every rank is released. Nothing depends on timing: the detector only
// fires when every rank is stuck, whatever the timeout (kept short to keep the suite fast).
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "ranklab/ranklab.hpp"
#include "test_support.hpp"

namespace {

using namespace ranklab;
using namespace ranklab::testing;
using namespace std::chrono_literals;

team_options quick_detection() {
  team_options o = team_options::from_environment();  // the suite's execution mode
  o.deadlock_timeout = 60ms;
  return o;
}

std::vector<std::uint64_t> v_counts(int p, std::uint64_t block) {
  std::vector<std::uint64_t> v;
  for (int j = 0; j < p; ++j) v.push_back(block + static_cast<std::uint64_t>(j % 3));
  return v;
}

// The call's arguments as every rank passes them but the root (for the preconditions).
coll_args args_of(collective coll, int p, std::uint64_t block) {
  coll_args a;
  a.coll = coll;
  a.p = p;
  a.elem_size = sizeof(std::int32_t);
  if (has_vector_counts(coll))
    a.counts = v_counts(p, block);
  else
    a.count = coll == collective::bcast || coll == collective::reduce ? block * static_cast<std::uint64_t>(p) : block;
  return a;
}

// One call of `coll` with `root` on buffers large enough whichever rank is the root.
void call_rooted(comm& c, collective coll, int root, std::string_view algorithm, std::uint64_t block) {
  const int p = c.size();
  const algo a{algorithm};
  const std::vector<std::uint64_t> counts = v_counts(p, block);
  std::uint64_t total = 0;
  for (std::uint64_t n : counts) total += n;
  std::vector<std::int32_t> in(total, c.rank() + 1), out(total, 0);
  const std::uint64_t whole = block * static_cast<std::uint64_t>(p);
  const std::uint64_t mine = counts[static_cast<std::size_t>(c.rank())];
  switch (coll) {
    case collective::bcast:
      c.bcast(std::span(out).first(whole), root, a);
      break;
    case collective::reduce:
      c.reduce(std::span(in).first(whole), std::span(out).first(whole), ops::sum, root, a);
      break;
    case collective::gather:
      c.gather(std::span(in).first(block), std::span(out).first(whole), root, a);
      break;
    case collective::scatter:
      c.scatter(std::span(in).first(whole), std::span(out).first(block), root, a);
      break;
    case collective::gatherv:
      c.gatherv(std::span(in).first(mine), out, counts, root, {}, a);
      break;
    case collective::scatterv:
      c.scatterv(in, std::span(out).first(mine), counts, root, {}, a);
      break;
    default:
      FAIL("not a rooted collective: ", name(coll));
  }
}

// How each rank ended: "ok", or the exception class it ended with.
struct endings {
  std::vector<std::string> kind;
  explicit endings(int p) : kind(static_cast<std::size_t>(p), "not run") {}
  template <class F>
  void record(int rank, F&& fn) {
    std::string& k = kind[static_cast<std::size_t>(rank)];
    try {
      fn();
      k = "ok";
    } catch (const mismatch_error&) {
      k = "mismatch_error";
      throw;
    } catch (const remote_failure&) {
      k = "remote_failure";
      throw;
    } catch (const deadlock_error&) {
      k = "deadlock_error";
      throw;
    } catch (...) {
      k = "other";
      throw;
    }
  }
};

struct outcome {
  bool mismatch = false;  // run() threw a mismatch_error
  std::string what;
  std::vector<std::string> kinds;
};

template <class F>
outcome run_recorded(int p, F fn) {
  endings e(p);
  outcome o;
  try {
    run(p, [&](comm& c) { e.record(c.rank(), [&] { fn(c); }); }, quick_detection());
    o.what = "(no error)";
  } catch (const mismatch_error& x) {
    o.mismatch = true;
    o.what = x.what();
  } catch (const std::exception& x) {
    o.what = std::string("not a mismatch_error: ") + x.what();
  }
  o.kinds = e.kind;
  return o;
}

// The groups of the report's first root mismatch: comm rank -> root passed (and team rank).
struct named_rank {
  int root;
  std::optional<int> team_rank;
};
std::map<int, named_rank> named_in(const std::string& what, std::string_view coll, std::uint32_t call) {
  std::map<int, named_rank> named;
  const std::string head = fmt::format("root mismatch in {} #{}", coll, call);
  const std::size_t at = what.find(head);
  if (at == std::string::npos) return named;
  std::string text = what.substr(at + head.size());
  text = text.substr(std::min(text.size(), text.find(':') + 1));  // past " in comm #1 of ... ranks (...)"
  for (const char* end : {"; ", " (their", " (rank "})
    if (const std::size_t cut = text.find(end); cut != std::string::npos) text.resize(cut);
  static const std::regex group(R"(ranks? ([0-9][0-9, ]*?)(?: \(team ranks? ([0-9][0-9, ]*)\))? passed root ([0-9]+))");
  const auto numbers = [](const std::string& list) {
    std::vector<int> v;
    std::size_t i = 0;
    while (i < list.size()) {
      v.push_back(std::stoi(list.substr(i)));
      i = list.find(", ", i);
      if (i == std::string::npos) break;
      i += 2;
    }
    return v;
  };
  for (std::sregex_iterator it(text.begin(), text.end(), group), end; it != end; ++it) {
    const std::vector<int> ranks = numbers((*it)[1].str());
    const std::vector<int> teams = (*it)[2].matched ? numbers((*it)[2].str()) : std::vector<int>{};
    const int root = std::stoi((*it)[3].str());
    for (std::size_t i = 0; i < ranks.size(); ++i)
      named[ranks[i]] = {root, i < teams.size() ? std::optional<int>(teams[i]) : std::nullopt};
  }
  return named;
}

// Checks the report against the roots the ranks passed (`roots[r]`, comm ranks) and that
// every rank of the team ended with the error or was released by it. `team_of`: a comm
// rank's team rank, for a sub-comm.
void check_report(const outcome& o, std::string_view coll, std::uint32_t call, const std::vector<int>& roots,
                  const std::vector<int>& team_of = {}) {
  INFO("run threw: ", o.what);
  CHECK(o.mismatch);
  CHECK(contains(o.what, fmt::format("root mismatch in {} #{}", coll, call)));
  const std::map<int, named_rank> named = named_in(o.what, coll, call);
  std::set<int> roots_named;
  for (const auto& [rank, n] : named) {
    CAPTURE(rank);
    REQUIRE(rank >= 0);
    REQUIRE(rank < static_cast<int>(roots.size()));
    CHECK(n.root == roots[static_cast<std::size_t>(rank)]);
    CHECK(contains(o.what, fmt::format("passed root {}", n.root)));
    roots_named.insert(n.root);
    if (!team_of.empty()) {
      CHECK(n.team_rank == team_of[static_cast<std::size_t>(rank)]);
    } else {
      CHECK(!n.team_rank);
    }
  }
  CHECK(roots_named.size() >= 2);
  if (!team_of.empty()) CHECK(contains(o.what, "team rank"));
  for (std::size_t r = 0; r < o.kinds.size(); ++r) {
    CAPTURE(r);
    INFO("rank ended with ", o.kinds[r]);
    CHECK((o.kinds[r] == "mismatch_error" || o.kinds[r] == "remote_failure" || o.kinds[r] == "ok"));
  }
}

// The disagreements: a root per rank.
struct disagreement {
  std::string label;
  std::vector<int> roots;
};
std::vector<disagreement> disagreements(int p) {
  std::vector<disagreement> d;
  const auto all = [p](int root) { return std::vector<int>(static_cast<std::size_t>(p), root); };
  // One rank names another root (not itself, except at p = 2).
  auto one = all(0);
  one[static_cast<std::size_t>(p - 1)] = p == 2 ? 1 : p / 2;
  d.push_back({"rank p-1 alone names another root", one});
  // One rank thinks it is the root: two ranks act as the root.
  auto self = all(p == 2 ? 0 : p - 1);
  self[1] = 1;
  d.push_back({"rank 1 alone names itself", self});
  // Two groups: even ranks root 0, odd ranks root p-1.
  auto halves = all(0);
  for (int r = 1; r < p; r += 2) halves[static_cast<std::size_t>(r)] = p - 1;
  d.push_back({"even ranks root 0, odd ranks root p-1", halves});
  return d;
}

std::vector<std::string> algorithms_of(collective coll) {
  std::vector<std::string> names{"auto"};
  for (const algorithm* a : registry::for_collective(coll)) names.emplace_back(a->name);
  return names;
}

bool runs(collective coll, const std::string& algorithm, const coll_args& a) {
  if (algorithm == "auto") return true;
  const ranklab::algorithm* found = registry::find(coll, algorithm);
  REQUIRE(found);
  for (int root = 0; root < a.p; ++root) {  // every root a rank passes below must be accepted
    coll_args r = a;
    r.root = root;
    if (!meets_preconditions(*found, r)) return false;
  }
  return true;
}

void check_every_algorithm(collective coll) {
  const std::string coll_name(name(coll));
  for (const std::string& algorithm : algorithms_of(coll)) {
    for (int p : {2, 3, 5, 8}) {
      // Small blocks (eager messages, fence payloads), and at p = 3 blocks that travel by
      // descriptor, whose senders wait for their receivers.
      for (std::uint64_t block : p == 3 ? std::vector<std::uint64_t>{4, 3000} : std::vector<std::uint64_t>{4}) {
        if (!runs(coll, algorithm, args_of(coll, p, block))) continue;
        for (const disagreement& d : disagreements(p)) {
          CAPTURE(coll_name);
          CAPTURE(algorithm);
          CAPTURE(p);
          CAPTURE(block);
          CAPTURE(d.label);
          const outcome o = run_recorded(p, [&](comm& c) {
            call_rooted(c, coll, d.roots[static_cast<std::size_t>(c.rank())], algorithm, block);
          });
          check_report(o, coll_name, 1, d.roots);
        }
      }
    }
  }
}

}  // namespace

TEST_SUITE("root mismatch") {
  TEST_CASE("root mismatch: bcast, every algorithm and auto -> mismatch_error naming ranks and roots") {
    check_every_algorithm(collective::bcast);
  }
  TEST_CASE("root mismatch: reduce, every algorithm and auto -> mismatch_error naming ranks and roots") {
    check_every_algorithm(collective::reduce);
  }
  TEST_CASE("root mismatch: gather, every algorithm and auto -> mismatch_error naming ranks and roots") {
    check_every_algorithm(collective::gather);
  }
  TEST_CASE("root mismatch: gatherv, every algorithm and auto -> mismatch_error naming ranks and roots") {
    check_every_algorithm(collective::gatherv);
  }
  TEST_CASE("root mismatch: scatter, every algorithm and auto -> mismatch_error naming ranks and roots") {
    check_every_algorithm(collective::scatter);
  }
  TEST_CASE("root mismatch: scatterv, every algorithm and auto -> mismatch_error naming ranks and roots") {
    check_every_algorithm(collective::scatterv);
  }

  TEST_CASE("root mismatch: the report names the call's number, not the first call's") {
    // Two calls that agree, then the one that does not: #3.
    const std::vector<int> roots{0, 2, 0, 0};
    const outcome o = run_recorded(4, [&](comm& c) {
      call_rooted(c, collective::bcast, 1, "binomial", 4);
      call_rooted(c, collective::gather, 3, "linear", 4);
      call_rooted(c, collective::bcast, roots[static_cast<std::size_t>(c.rank())], "linear", 4);
    });
    check_report(o, "bcast", 3, roots);
  }

  TEST_CASE("root mismatch in a sub-comm: comm and team ranks named, every rank of every comm released") {
    // Team ranks 1, 3, 5, 7 form comm ranks 0..3 and disagree there; team ranks 0, 2, 4, 6
    // make the same call correctly in theirs; then every rank meets at a team barrier, which
    // the failure releases.
    const std::vector<int> roots{1, 1, 2, 1};  // comm rank 2 (team rank 5) differs
    const std::vector<int> team_of{1, 3, 5, 7};
    for (collective coll : {collective::bcast, collective::reduce, collective::gather, collective::gatherv,
                            collective::scatter, collective::scatterv}) {
      const std::string coll_name(name(coll));
      for (const std::string& algorithm : algorithms_of(coll)) {
        if (!runs(coll, algorithm, args_of(coll, 4, 4))) continue;
        CAPTURE(coll_name);
        CAPTURE(algorithm);
        const outcome o = run_recorded(8, [&](comm& c) {
          comm s = *c.split(c.rank() % 2, c.rank());
          const int root = c.rank() % 2 ? roots[static_cast<std::size_t>(s.rank())] : 1;
          call_rooted(s, coll, 0, algorithm, 4);  // agreed: #1
          call_rooted(s, coll, root, algorithm, 4);
          c.barrier();
        });
        check_report(o, coll_name, 2, roots, team_of);
        CHECK(contains(o.what, "in comm #"));
      }
    }
  }
}
