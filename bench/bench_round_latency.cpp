// Round latency of ranklab's one-ported sendrecv: 2 ranks exchanging messages of 8 B to
// 16 MiB back to back, and a p-rank ring of 8-byte rounds. Same conventions as the MPI
// peers in bench/peers (calibrated batches of >= 20 ms, 7 batches, median of the slowest
// rank's mean per round), same CSV lines, so scripts/compare_pingpong.sh can put them side
// by side. A memcpy of the same size, measured in the same run, is the bandwidth bound.
//
//   bench_round_latency [--sizes 8,64,...] [--ring P] [--table] [--batches N]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "bench/timing.hpp"
#include "rank_timing.hpp"
#include "ranklab/ranklab.hpp"

namespace {

using namespace ranklab::tools::bench;

struct options {
  std::vector<std::size_t> sizes = {8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20, 16 << 20};
  int ring = 0;  // ranks of the ring test; 0: the 2-rank exchange
  int batches = 7;
  bool table = false;
};

// Runs `body(iterations)` on every rank in calibrated batches (the calibrated count, no
// time target); returns the median over batches of the slowest rank's seconds per iteration.
template <class Body>
double measure(ranklab::comm& c, int batches, Body&& body) {
  auto time_batch = [&](std::int64_t iterations) { return slowest_rank_seconds(c, iterations, body); };
  const timing_options o{0, batches, 0.02, std::int64_t{1} << 24, true};
  return median(measure_batches(time_batch, o).batch_seconds);
}

double memcpy_seconds(std::size_t bytes) {
  std::vector<char> a(bytes, 1), b(bytes, 2);
  long iterations = 1;
  double s = 0;
  for (;;) {
    const auto t0 = clock_type::now();
    for (long i = 0; i < iterations; ++i) {
      std::memcpy(b.data(), a.data(), bytes);
      asm volatile("" ::"r"(b.data()) : "memory");
    }
    s = seconds_since(t0);
    if (s >= 0.02) break;
    iterations *= 2;
  }
  return s / static_cast<double>(iterations);
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  arguments args(argc, argv, "[--sizes 8,64,4Ki,1Mi] [--ring P] [--batches N] [--table]");
  const bool ok = args.parse([&] {
    if (args.option({"--sizes"}))
      o.sizes = args.sizes();
    else if (args.option({"--ring"}))
      o.ring = std::stoi(args.value());
    else if (args.option({"--batches"}))
      o.batches = std::stoi(args.value());
    else if (args.is({"--table"}))
      o.table = true;
    else
      return false;
    return true;
  });
  if (!ok) return args.usage();
  fmt::print("impl,test,p,bytes,usec_per_round,bandwidth_MBps\n");
  if (o.ring > 0) {
    std::vector<double> per_rank(static_cast<std::size_t>(o.ring));
    ranklab::run(o.ring, [&](ranklab::comm& c) {
      const int r = c.rank(), p = c.size();
      std::uint64_t token = static_cast<std::uint64_t>(r), got = 0;
      per_rank[static_cast<std::size_t>(c.rank())] = measure(c, o.batches, [&](std::int64_t iterations) {
        for (std::int64_t i = 0; i < iterations; ++i) {
          c.sendrecv((r + 1) % p, std::span(&token, 1), (r + p - 1) % p, std::span(&got, 1));
          token = got;
        }
      });
    });
    const double us = per_rank[0] * 1e6;
    fmt::print("ranklab,ring,{},8,{:.3f},{:.1f}\n", o.ring, us, 8 / us);
    return 0;
  }
  struct row {
    std::size_t bytes;
    double seconds, memcpy_seconds;
  };
  std::vector<row> rows;
  for (std::size_t bytes : o.sizes) {
    std::vector<double> per_rank(2);
    std::vector<std::byte> send(bytes, std::byte{1}), recv(bytes);
    std::vector<std::byte> send1(bytes, std::byte{2}), recv1(bytes);
    ranklab::run(2, [&](ranklab::comm& c) {
      auto& s = c.rank() == 0 ? send : send1;
      auto& r = c.rank() == 0 ? recv : recv1;
      const int other = 1 - c.rank();
      per_rank[static_cast<std::size_t>(c.rank())] = measure(c, o.batches, [&](std::int64_t iterations) {
        for (std::int64_t i = 0; i < iterations; ++i) c.sendrecv(other, s, other, r);
      });
    });
    const double us = per_rank[0] * 1e6;
    const double mc = memcpy_seconds(bytes);
    rows.push_back({bytes, per_rank[0], mc});
    fmt::print("ranklab,sendrecv,2,{},{:.3f},{:.1f}\n", bytes, us, static_cast<double>(bytes) / us);
    fmt::print("ranklab,memcpy,1,{},{:.3f},{:.1f}\n", bytes, mc * 1e6, static_cast<double>(bytes) / (mc * 1e6));
    std::fflush(stdout);
  }
  if (o.table) {
    fmt::print("\n{:>10} {:>12} {:>12} {:>14} {:>14} {:>10}\n", "bytes", "round us", "memcpy us", "round MB/s",
               "memcpy MB/s", "vs memcpy");
    for (const row& r : rows)
      fmt::print("{:>10} {:>12.3f} {:>12.3f} {:>14.1f} {:>14.1f} {:>9.0f}%\n", r.bytes, r.seconds * 1e6,
                 r.memcpy_seconds * 1e6, r.bytes / (r.seconds * 1e6), r.bytes / (r.memcpy_seconds * 1e6),
                 100.0 * r.memcpy_seconds / r.seconds);
  }
  return 0;
}
