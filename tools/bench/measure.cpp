// Timing of ranklab calls and of the memcpy baselines (see measure.hpp).
#include "bench/measure.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <vector>

#include "bench/lockstep.hpp"
#include "ranklab/check.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::tools::bench {

test_data bench_data(const call& c, bool check) {
  test_data d;
  if (check) {
    d = make_test_data(c, 1);
  } else {
    for (int r = 0; r < c.args.p; ++r) {
      const buffer_extent e = buffer_extents(c.args, r);
      d.in.emplace_back(e.in * c.type.size);
      d.out.emplace_back(e.out * c.type.size);
      for (std::size_t i = 0; i < d.in.back().size(); ++i)
        d.in.back()[i] = std::byte(static_cast<unsigned char>(i * 7 + r));
    }
  }
  give_buffers_own_pages(d);
  return d;
}

void give_buffers_own_pages(test_data& d) {
  constexpr std::size_t own_page = 4096;
  for (auto* side : {&d.in, &d.out})
    for (auto& v : *side) v.reserve(std::max(v.size(), own_page) + own_page);
}

team_options measuring_team_options(std::chrono::milliseconds patience) {
  team_options o = team_options::from_environment();
  o.deadlock_timeout = std::max(o.deadlock_timeout, patience);
  return o;
}

impl_result measure_ranklab(const call& c, const timing_options& o, bool check, bool rewrite) {
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
        // What --rewrite rewrites: the data this rank sends, its input or a bcast root's buffer.
        std::span<std::byte> sent;
        if (rewrite) {
          const buffer_extent ext = buffer_extents(c.args, r);
          if (ext.in > 0)
            sent = {static_cast<std::byte*>(const_cast<void*>(in)), ext.in * c.type.size};
          else if (c.args.coll == collective::bcast && r == c.args.root)
            sent = {static_cast<std::byte*>(out), ext.out * c.type.size};
        }
        auto time_batch = [&](std::int64_t iters) {
          cm.barrier();
          const auto t0 = clock_type::now();
          for (std::int64_t i = 0; i < iters; ++i) {
            if (!sent.empty()) std::memset(sent.data(), static_cast<int>(i & 0x7f), sent.size());
            cm.run_collective(c, in, out);
          }
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

copy_range copy_share(std::uint64_t bytes, int threads, int t) {
  threads = std::max(1, threads);
  constexpr std::uint64_t line = 64;
  const auto T = static_cast<std::uint64_t>(threads);
  // Shares in whole cache lines (the last one takes the rest), so that no two threads
  // write the same line.
  const std::uint64_t share = (bytes + T - 1) / T;
  const std::uint64_t rounded = (share + line - 1) / line * line;
  const std::uint64_t at = std::min(bytes, rounded * static_cast<std::uint64_t>(t));
  const std::uint64_t end = t == threads - 1 ? bytes : std::min(bytes, at + rounded);
  return {at, end - at};
}

measurement measure_memcpy(std::uint64_t bytes, int threads, const timing_options& o) {
  threads = std::max(1, threads);
  const std::size_t n = static_cast<std::size_t>(std::max<std::uint64_t>(bytes, 1));
  // Page-aligned buffers, as large allocations of the ranks' buffers are; each thread
  // writes its own share first (below), as a NUMA-aware program would.
  const std::size_t alloc = (n + 4095) / 4096 * 4096;
  struct freer {
    void operator()(std::byte* b) const { std::free(b); }
  };
  const std::unique_ptr<std::byte, freer> src(static_cast<std::byte*>(std::aligned_alloc(4096, alloc)));
  const std::unique_ptr<std::byte, freer> dst(static_cast<std::byte*>(std::aligned_alloc(4096, alloc)));
  if (!src || !dst) throw std::bad_alloc();
  std::vector<padded_double> per_thread(static_cast<std::size_t>(threads));
  spin_barrier barrier(threads);
  measurement result;
  run_threads(threads, [&](int t) {
    const copy_range share = copy_share(n, threads, t);
    std::byte* const to = dst.get() + share.offset;
    const std::byte* const from = src.get() + share.offset;
    std::memset(src.get() + share.offset, 1, share.bytes);
    std::memset(to, 0, share.bytes);
    auto run = [&](std::int64_t iters) {
      const auto t0 = clock_type::now();
      for (std::int64_t i = 0; i < iters; ++i) {
        std::memcpy(to, from, share.bytes);
        std::atomic_signal_fence(std::memory_order_seq_cst);  // keep every copy
      }
      return seconds_since(t0);
    };
    measurement m = measure_in_lockstep(
        static_cast<std::size_t>(t), per_thread, [&] { barrier.arrive_and_wait(); }, run, o);
    if (t == 0) result = std::move(m);
  });
  return result;
}

}  // namespace ranklab::tools::bench
