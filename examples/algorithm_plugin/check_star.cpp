// Checks the `star` broadcast of libstar_bcast.so in a program that either links the library
// (star_linked) or has it loaded at run time: by RANKLAB_PLUGINS, or, given its path as the
// argument, by ranklab::load_plugin. The program itself names nothing of the library: what
// it finds in the registry came from there.
#include <ranklab/ranklab.hpp>

#include <atomic>
#include <cstdio>
#include <exception>
#include <vector>

namespace {

int failures = 0;

void fail(const char* what, int p, int root) {
  std::fprintf(stderr, "check_star: p=%d root=%d: %s\n", p, root, what);
  ++failures;
}

// Every rank's schedule through the verifier, and the call on both executors against the
// sequential reference, for p = 1..16 and the roots 0, p/2 and p - 1.
void check_schedules(const ranklab::algorithm& star) {
  for (int p = 1; p <= 16; ++p) {
    for (int root : {0, p / 2, p - 1}) {
      const ranklab::call c = ranklab::make_call(ranklab::collective::bcast, p, 100, root, ranklab::datatype_of<int>(),
                                                 ranklab::ops::sum, {"star"});
      const ranklab::verify_report v = ranklab::verify(ranklab::build_all(star, c.args));
      if (!v.ok) fail(v.problems.empty() ? "verifier" : v.problems.front().c_str(), p, root);
      if (v.rounds != static_cast<std::size_t>(p - 1) || v.messages != static_cast<std::uint64_t>(p - 1))
        fail("not p - 1 rounds and messages", p, root);
      for (auto executor : {ranklab::executor_kind::sequential, ranklab::executor_kind::threads}) {
        const ranklab::check_result r = ranklab::run_check(c, executor);
        if (!r.verified || r.algo != &star) fail(r.difference.empty() ? "not star" : r.difference.c_str(), p, root);
      }
    }
  }
}

// comm::bcast by name: every rank ends with the root's values.
void check_comm_bcast() {
  constexpr int p = 5, root = 3, count = 64;
  std::atomic<int> wrong{0};
  ranklab::run(p, [&](ranklab::comm& c) {
    std::vector<int> data(count);
    for (int i = 0; i < count; ++i) data[i] = c.rank() * 1000 + i;
    c.bcast(data, root, {"star"});
    for (int i = 0; i < count; ++i)
      if (data[i] != root * 1000 + i) ++wrong;
    if (c.last_algorithm() == nullptr || c.last_algorithm()->name != "star") ++wrong;
  });
  if (wrong != 0) fail("comm::bcast: wrong values or not star", p, root);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1) {
      const auto added = ranklab::load_plugin(argv[1]);
      if (added.size() != 1 || added[0]->name != "star") fail("load_plugin did not return star alone", 0, 0);
      if (ranklab::load_plugin(argv[1]) != added) fail("a second load_plugin added something", 0, 0);
    }
    const ranklab::algorithm* star = ranklab::registry::find(ranklab::collective::bcast, "star");
    if (star == nullptr) {
      std::fprintf(stderr, "check_star: no bcast 'star': libstar_bcast.so is neither linked nor loaded\n");
      return 1;
    }
    check_schedules(*star);
    check_comm_bcast();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "check_star: %s\n", e.what());
    return 2;
  }
  if (failures != 0) return 1;
  std::printf("check_star: star verified for p = 1..16 on both executors and run by comm::bcast\n");
  return 0;
}
