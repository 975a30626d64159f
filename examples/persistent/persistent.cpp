// Persistent collectives, MPI-4 style: allreduce_init and bcast_init check the call,
// choose and build the schedule and resolve the buffers once; every start() runs the call
// again on the same buffers (their contents may change between runs, not their size), and
// wait() completes it. Each iteration's results are checked.
#include <ranklab/ranklab.hpp>

#include <atomic>
#include <cstdio>
#include <exception>
#include <vector>

int main() {
  constexpr int p = 4;
  constexpr int n = 512;
  constexpr int iterations = 20;
  std::atomic<int> wrong{0};
  try {
    ranklab::run(p, [&](ranklab::comm& c) {
      const int r = c.rank();
      std::vector<int> in(n), sum(n);
      std::vector<double> params(8);
      ranklab::persistent_request reduce = c.allreduce_init(in, sum, ranklab::ops::sum);
      ranklab::persistent_request share = c.bcast_init(params, 0);
      for (int it = 0; it < iterations; ++it) {
        for (int i = 0; i < n; ++i) in[i] = it * r + i;  // new contents, same buffer
        if (r == 0)
          for (int k = 0; k < 8; ++k) params[k] = it + 0.5 * k;
        reduce.start();
        share.start();
        reduce.wait();
        share.wait();
        for (int i = 0; i < n; ++i)
          if (sum[i] != it * (p * (p - 1) / 2) + p * i) ++wrong;
        for (int k = 0; k < 8; ++k)
          if (params[k] != it + 0.5 * k) ++wrong;
      }
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "persistent: %s\n", e.what());
    return 2;
  }
  if (wrong != 0) {
    std::fprintf(stderr, "persistent: %d wrong elements\n", wrong.load());
    return 1;
  }
  std::printf("persistent: allreduce_init + bcast_init started %d times on %d ranks, verified\n", iterations, p);
  return 0;
}
