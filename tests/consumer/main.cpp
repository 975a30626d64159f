// The install/consumer test's program: 4 ranks do an allreduce and a bcast through the
// installed library and check the results; exit status 0 only if every rank got them right.
#include <ranklab/ranklab.hpp>

#include <atomic>
#include <cstdio>
#include <exception>
#include <vector>

int main() {
  constexpr int p = 4;
  constexpr int n = 1000;
  std::atomic<int> wrong{0};
  try {
    ranklab::run(p, [&](ranklab::comm& c) {
      // allreduce: rank r contributes r*1000 + i at position i.
      std::vector<long long> in(n), out(n, -1);
      for (int i = 0; i < n; ++i) in[i] = c.rank() * 1000LL + i;
      c.allreduce(in, out, ranklab::ops::sum);
      for (int i = 0; i < n; ++i)
        if (out[i] != 1000LL * (p * (p - 1) / 2) + static_cast<long long>(p) * i) ++wrong;

      // bcast from rank 2.
      std::vector<double> data(n, -1.0);
      if (c.rank() == 2)
        for (int i = 0; i < n; ++i) data[i] = 0.5 * i;
      c.bcast(data, 2);
      for (int i = 0; i < n; ++i)
        if (data[i] != 0.5 * i) ++wrong;
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: ranklab::run failed: %s\n", e.what());
    return 2;
  }
  if (wrong != 0) {
    std::fprintf(stderr, "consumer: %d wrong elements\n", wrong.load());
    return 1;
  }
  std::printf("consumer: allreduce and bcast on %d ranks verified\n", p);
  return 0;
}
