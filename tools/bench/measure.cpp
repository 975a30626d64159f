// Timing of ranklab calls and of the memcpy baselines (see measure.hpp).
#include "bench/measure.hpp"

#include <atomic>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include "ranklab/check.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::tools::bench {

test_data bench_data(const call& c, bool check) {
  if (check) return make_test_data(c, 1);
  test_data d;
  for (int r = 0; r < c.args.p; ++r) {
    const buffer_extent e = buffer_extents(c.args, r);
    d.in.emplace_back(e.in * c.type.size);
    d.out.emplace_back(e.out * c.type.size);
    for (std::size_t i = 0; i < d.in.back().size(); ++i)
      d.in.back()[i] = std::byte(static_cast<unsigned char>(i * 7 + r));
  }
  return d;
}

team_options measuring_team_options(std::chrono::milliseconds patience) {
  team_options o = team_options::from_environment();
  o.deadlock_timeout = std::max(o.deadlock_timeout, patience);
  return o;
}

impl_result measure_ranklab(const call& c, const timing_options& o, bool check) {
  validate(c.args);
  test_data d = bench_data(c, check);
  auto buffers = d.buffers();
  impl_result res;
  res.checked = check;
  bool ok = true;
  run(
      c.args.p,
      [&](comm& cm) {
        const int r = cm.rank();
        const void* in = buffers[r].in;
        void* out = buffers[r].out;
        cm.run_collective(c, in, out);  // the checked call; also builds the schedule
        if (r == 0 && cm.last_algorithm() != nullptr) res.selected = std::string(cm.last_algorithm()->name);
        if (check) {
          cm.barrier();  // every rank's result is complete
          if (r == 0) {
            res.difference = compare(c, d);
            ok = res.difference.empty();
          }
          cm.barrier();
          if (!ok) return;
        }
        auto time_batch = [&](std::int64_t iters) {
          cm.barrier();
          const auto t0 = clock_type::now();
          for (std::int64_t i = 0; i < iters; ++i) cm.run_collective(c, in, out);
          const double local = seconds_since(t0) / static_cast<double>(iters);
          double global = 0;
          cm.allreduce(std::span<const double>(&local, 1), std::span<double>(&global, 1), ops::max);
          return global;
        };
        measurement m = measure_batches(time_batch, o);
        if (r == 0) res.m = std::move(m);
      },
      measuring_team_options(std::chrono::milliseconds(20000)));
  res.verified = check && ok;
  res.timed = ok;
  return res;
}

measurement measure_memcpy(std::uint64_t bytes, int threads, const timing_options& o) {
  const std::size_t n = static_cast<std::size_t>(std::max<std::uint64_t>(bytes, 1));
  std::vector<std::byte> src(n, std::byte{1}), dst(n, std::byte{0});
  threads = std::max(1, threads);
  const std::size_t share = (n + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
  auto copy_share = [&](int t, std::int64_t iters) {
    const std::size_t at = std::min(n, share * static_cast<std::size_t>(t));
    const std::size_t len = std::min(share, n - at);
    for (std::int64_t i = 0; i < iters; ++i) {
      std::memcpy(dst.data() + at, src.data() + at, len);
      std::atomic_signal_fence(std::memory_order_seq_cst);  // keep every copy
    }
  };
  // Helper threads wait for the next batch (a new generation) and report when done.
  std::atomic<std::int64_t> generation{0};  // -1: quit
  std::atomic<std::int64_t> batch_iters{0};
  std::atomic<int> done{0};
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t)
    helpers.emplace_back([&, t] {
      std::int64_t seen = 0;
      for (;;) {
        std::int64_t g;
        while ((g = generation.load(std::memory_order_acquire)) == seen) generation.wait(g, std::memory_order_acquire);
        if (g < 0) return;
        seen = g;
        copy_share(t, batch_iters.load(std::memory_order_relaxed));
        done.fetch_add(1, std::memory_order_acq_rel);
        done.notify_all();
      }
    });
  auto time_batch = [&](std::int64_t iters) {
    const auto t0 = clock_type::now();
    if (threads > 1) {
      done.store(0, std::memory_order_relaxed);
      batch_iters.store(iters, std::memory_order_relaxed);
      generation.fetch_add(1, std::memory_order_release);
      generation.notify_all();
    }
    copy_share(0, iters);
    if (threads > 1) {
      int d;
      while ((d = done.load(std::memory_order_acquire)) < threads - 1) done.wait(d, std::memory_order_acquire);
    }
    return seconds_since(t0) / static_cast<double>(iters);
  };
  measurement m = measure_batches(time_batch, o);
  generation.store(-1, std::memory_order_release);
  generation.notify_all();
  for (auto& h : helpers) h.join();
  return m;
}

}  // namespace ranklab::tools::bench
