// An application that starts its own std::threads and makes them the ranks of a team:
// half of them with team::run_as (attach, run, report a failure to the other ranks), the
// other half with team::attach, keeping the comm as long as they need it. Each rank checks
// an allreduce and a bcast; the exit status says whether all were right.
#include <ranklab/ranklab.hpp>

#include <atomic>
#include <cstdio>
#include <exception>
#include <thread>
#include <vector>

namespace {

constexpr int p = 4;
constexpr int n = 256;

// Rank r contributes r + i at position i; bcast sends rank 1's squares.
int work(ranklab::comm& c) {
  int wrong = 0;
  if (ranklab::this_rank() != c.rank()) ++wrong;
  std::vector<long> in(n), out(n, -1);
  for (int i = 0; i < n; ++i) in[i] = c.rank() + i;
  c.allreduce(in, out, ranklab::ops::sum);
  for (int i = 0; i < n; ++i)
    if (out[i] != static_cast<long>(p) * i + p * (p - 1) / 2) ++wrong;

  std::vector<int> data(n, -1);
  if (c.rank() == 1)
    for (int i = 0; i < n; ++i) data[i] = i * i;
  c.bcast(data, 1);
  for (int i = 0; i < n; ++i)
    if (data[i] != i * i) ++wrong;
  return wrong;
}

}  // namespace

int main() {
  // Application threads attach in execution mode threads (a team that would run its ranks
  // as fibers, e.g. auto with more ranks than cores, refuses attach).
  ranklab::team_options options = ranklab::team_options::from_environment();
  options.execution = ranklab::execution_mode::threads;
  ranklab::team team(p, options);

  std::atomic<int> wrong{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      try {
        if (r % 2 == 0) {
          team.run_as(r, [&](ranklab::comm& c) { wrong += work(c); });
        } else {
          ranklab::comm c = team.attach(r);  // the rank ends when c is destroyed
          wrong += work(c);
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "threads_attach: rank %d: %s\n", r, e.what());
        ++failures;
      }
    });
  for (std::thread& t : threads) t.join();

  if (failures != 0 || wrong != 0) {
    std::fprintf(stderr, "threads_attach: %d failures, %d wrong elements\n", failures.load(), wrong.load());
    return 1;
  }
  std::printf("threads_attach: %d application threads as ranks, allreduce and bcast verified\n", p);
  return 0;
}
