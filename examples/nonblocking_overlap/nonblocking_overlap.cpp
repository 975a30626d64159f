// Overlapping communication with computation: each rank starts an allreduce and a bcast
// (iallreduce, ibcast: they return requests), computes on data of its own meanwhile,
// testing the requests now and then so that they advance, and waits for both before it
// reads their buffers. Every result is checked.
#include <ranklab/ranklab.hpp>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

int main() {
  constexpr int p = 4;
  constexpr int n = 1 << 14;
  std::atomic<int> wrong{0};
  std::atomic<long> tests{0};
  try {
    ranklab::run(p, [&](ranklab::comm& c) {
      const int r = c.rank();
      std::vector<std::int64_t> in(n), sum(n, -1);
      for (int i = 0; i < n; ++i) in[i] = r * 3 + i;
      std::vector<float> table(n, 0.0f);
      if (r == 2)
        for (int i = 0; i < n; ++i) table[i] = 0.25f * static_cast<float>(i);

      std::array<ranklab::request, 2> requests{c.iallreduce(in, sum, ranklab::ops::sum), c.ibcast(table, 2)};

      // Computation that touches neither in/sum nor table until the requests completed.
      double local = 0;
      for (int chunk = 0; chunk < 64; ++chunk) {
        for (int i = 0; i < 2000; ++i) local += std::sqrt(static_cast<double>(chunk * 2000 + i + r));
        if (ranklab::test_all(requests)) break;  // test_all advances them too
        ++tests;
      }
      ranklab::wait_all(requests);

      for (int i = 0; i < n; ++i)
        if (sum[i] != static_cast<std::int64_t>(p) * i + 3 * p * (p - 1) / 2) ++wrong;
      for (int i = 0; i < n; ++i)
        if (table[i] != 0.25f * static_cast<float>(i)) ++wrong;
      if (!(local > 0)) ++wrong;
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nonblocking_overlap: %s\n", e.what());
    return 2;
  }
  if (wrong != 0) {
    std::fprintf(stderr, "nonblocking_overlap: %d wrong elements\n", wrong.load());
    return 1;
  }
  std::printf("nonblocking_overlap: iallreduce + ibcast on %d ranks verified (%ld tests while computing)\n", p,
              tests.load());
  return 0;
}
