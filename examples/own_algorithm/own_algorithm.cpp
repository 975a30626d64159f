// A broadcast of one's own, outside ranklab's tree, with the public API only: the root
// sends the whole buffer to every other rank in turn (p - 1 rounds, (p - 1)(alpha + beta m)).
// The builder returns one rank's schedule; RANKLAB_REGISTER_ALGORITHM adds it to the
// registry when the program loads, and from then on it is an algorithm like the others:
// the verifier checks its schedules, run_check runs it on both executors against the
// sequential reference, and comm::bcast calls it by name.
#include <ranklab/ranklab.hpp>

#include <atomic>
#include <cstdio>
#include <exception>
#include <vector>

namespace {

// Rank v of the relabelling that puts the root at 0, as a real rank.
int absolute(int v, int root, int p) { return (v + root) % p; }

ranklab::schedule build_star(const ranklab::coll_args& a, int rank) {
  ranklab::schedule s(rank, a.p, 0, a.count);  // bcast: in place in the out buffer
  const ranklab::region all{ranklab::out_buffer, 0, a.count};
  for (int v = 1; v < a.p; ++v) {
    s.next_round();
    const int to = absolute(v, a.root, a.p);
    if (rank == a.root)
      s.send(to, all);
    else if (rank == to)
      s.recv(a.root, all);
  }
  s.trim();
  return s;
}

double star_cost(const ranklab::coll_args& a, std::size_t elem, const ranklab::cost_model& m) {
  return (a.p - 1) * (m.alpha + m.beta * static_cast<double>(a.count * elem));
}

const ranklab::algorithm star{
    .name = "example_star",
    .serves = {ranklab::collective::bcast},
    .summary = "root sends to each rank in turn: p-1 rounds, (p-1)(alpha + beta m)",
    .build = build_star,
    .cost = star_cost,
};
RANKLAB_REGISTER_ALGORITHM(star);

}  // namespace

int main() {
  int failed = 0;
  const ranklab::algorithm* found = ranklab::registry::find(ranklab::collective::bcast, "example_star");
  if (found == nullptr) {
    std::fprintf(stderr, "own_algorithm: example_star is not registered\n");
    return 1;
  }
  try {
    // The whole sweep of the verifier at each p: every root, counts 0, 1 and uneven.
    for (int p = 1; p <= 16; ++p) {
      const ranklab::verify_summary s = ranklab::verify_algorithm(*found, p);
      if (!s.ok()) {
        std::fprintf(stderr, "own_algorithm: p=%d: %s: %s\n", p,
                     ranklab::describe_verified_call(s.failures.front().args).c_str(),
                     s.failures.front().problems.front().c_str());
        ++failed;
      }
    }
    // The verifier on all ranks' schedules, and both executors against the reference.
    for (int p : {1, 2, 3, 5, 8}) {
      for (int root : {0, p - 1}) {
        const ranklab::call c = ranklab::make_call(ranklab::collective::bcast, p, 100, root,
                                                   ranklab::datatype_of<int>(), ranklab::ops::sum, {"example_star"});
        // Structure and results (ranklab/semantics.hpp): what every rank's out ends up holding.
        const ranklab::verify_report v = ranklab::verify(ranklab::build_all(*found, c.args), c.args);
        if (!v.ok || v.rounds != static_cast<std::size_t>(p - 1)) {
          std::fprintf(stderr, "own_algorithm: p=%d root=%d: verifier: %s (%zu rounds)\n", p, root,
                       v.problems.empty() ? "wrong round count" : v.problems.front().c_str(), v.rounds);
          ++failed;
        }
        for (auto executor : {ranklab::executor_kind::sequential, ranklab::executor_kind::threads}) {
          const ranklab::check_result r = ranklab::run_check(c, executor);
          if (!r.verified || r.algo == nullptr || r.algo->name != found->name) {
            std::fprintf(stderr, "own_algorithm: p=%d root=%d: %s\n", p, root, r.difference.c_str());
            ++failed;
          }
        }
      }
    }
    // Called by name like any other algorithm.
    std::atomic<int> wrong{0};
    ranklab::run(4, [&](ranklab::comm& c) {
      std::vector<double> data(64, c.rank() == 3 ? 1.5 : 0.0);
      c.bcast(data, 3, {"example_star"});
      for (double x : data)
        if (x != 1.5) ++wrong;
      if (c.last_algorithm() == nullptr || c.last_algorithm()->name != "example_star") ++wrong;
    });
    if (wrong != 0) {
      std::fprintf(stderr, "own_algorithm: comm::bcast: %d wrong\n", wrong.load());
      ++failed;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "own_algorithm: %s\n", e.what());
    return 2;
  }
  if (failed != 0) return 1;
  std::printf("own_algorithm: example_star verified for p = 1..8 on both executors and run by comm::bcast\n");
  return 0;
}
