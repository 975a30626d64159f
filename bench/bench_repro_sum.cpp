// What reproducible sums cost (docs/reproducibility.md, docs/performance.md): for every size
// of doubles per rank and each p, side by side in one run (the variants alternating batch by
// batch, so that each sees the same machine):
//   * the global sum of a distributed array: a plain local sum (8 partial sums, as a tuned
//     BLAS sums) plus an allreduce of one double (ops::sum), against sum_reproducible (the
//     exact accumulator's add(span), then an allreduce of one 552-byte accumulator);
//   * the element-wise allreduce of the array: ops::sum on the doubles, against
//     allreduce_reproducible (each element an accumulator: 552 bytes instead of 8, converted
//     before and rounded after, in a vector it allocates per call), and the same on a
//     buffer of accumulators kept from call to call (to_repro, allreduce with
//     ops::repro_merge, from_repro); skipped where the accumulators would not fit in
//     --memory-gib (p ranks x 2 buffers x 552 bytes per element).
// Times as `ranklab bench` does (calibrated batches, the slowest rank's mean per call, the
// median over batches). Prints markdown with the load average before and after.
//
//   bench_repro_sum [--p 2,16] [--sizes 8,64,512,4KiB,...] [--batches N] [--memory-gib G]
//                   [--execution auto|threads|fibers]
#include <fmt/format.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "bench/timing.hpp"
#include "rank_timing.hpp"
#include "ranklab/ranklab.hpp"
#include "ranklab/repro_sum.hpp"

namespace {

using namespace ranklab::tools::bench;

struct figures {
  std::vector<double> us;  // per batch, microseconds per call
  bool skipped = false;
};

double med(const figures& f) { return median(f.us); }
std::string cell(const figures& f) {
  if (f.skipped) return "-";
  const double us = med(f);
  return us >= 10000 ? fmt::format("{:.0f}", us) : us >= 100 ? fmt::format("{:.1f}", us) : fmt::format("{:.2f}", us);
}
std::string ratio(const figures& a, const figures& b) {
  if (a.skipped || b.skipped || med(b) <= 0) return "-";
  return fmt::format("{:.1f}x", med(a) / med(b));
}
std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

// The same data on every run: doubles of both signs over 2^-20 .. 2^20.
std::vector<double> data(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> m(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = std::ldexp(m(rng), static_cast<int>(rng() % 41) - 20);
  return v;
}

// A plain sum with 8 partial sums (vectorizable, fixed order).
double plain_sum(const std::vector<double>& v) {
  double s[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= v.size(); i += 8)
    for (int k = 0; k < 8; ++k) s[k] += v[i + k];
  for (; i < v.size(); ++i) s[0] += v[i];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ps{2, 16};
  std::vector<std::uint64_t> sizes{8, 64, 512, 4096, 32768, 262144, 2097152, 16777216};
  int batches = 5;
  double memory_gib = 8;
  ranklab::team_options options = ranklab::team_options::from_environment();
  arguments args(argc, argv,
                 "[--p 2,16] [--sizes 8,64,...,16MiB] [--batches N] [--memory-gib G] "
                 "[--execution auto|threads|fibers]");
  const bool ok = args.parse([&] {
    if (args.option({"--p"}))
      ps = args.ints();
    else if (args.option({"--sizes"}))
      sizes = args.sizes();
    else if (args.option({"--batches"}))
      batches = std::stoi(args.value());
    else if (args.option({"--memory-gib"}))
      memory_gib = std::stod(args.value());
    else if (args.option({"--execution"}))
      options.execution = ranklab::execution_from_name(args.value());
    else
      return false;
    return true;
  });
  if (!ok || batches < 1) return args.usage();
  options.deadlock_timeout = std::chrono::milliseconds(600000);  // a loaded machine is slow, not stuck

  const ranklab::machine_info m = ranklab::machine();
  fmt::print("# Reproducible sums: cost against plain ops::sum\n\n");
  fmt::print("machine: {}; load average before: {}\n\n", m.description, load_average());
  fmt::print(
      "| p | execution | doubles per rank | global sum: plain, us | reproducible, us | ratio | "
      "element-wise allreduce: ops::sum, us | reproducible, us | ratio | reused accumulators, us | ratio |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|\n");
  const timing_options t{0, 1, 0.02, std::int64_t{1} << 22, true};
  for (int p : ps) {
    ranklab::team team(p, options);
    for (std::uint64_t bytes : sizes) {
      const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(double));
      figures sum_plain, sum_repro, ew_plain, ew_repro, ew_reused;
      const double accumulator_bytes = 2.0 * p * static_cast<double>(n) * sizeof(ranklab::repro_sum<double>);
      ew_repro.skipped = ew_reused.skipped = accumulator_bytes > memory_gib * (1u << 30);
      ranklab::run(team, [&](ranklab::comm& c) {
        const std::vector<double> local = data(n, 17 + static_cast<unsigned>(c.rank()));
        std::vector<double> out(n);
        std::vector<ranklab::repro_sum<double>> acc(ew_reused.skipped ? 0 : n);
        auto record = [&](figures& f, auto&& body) {
          const auto r = measure_batches([&](std::int64_t k) { return slowest_rank_seconds(c, k, body); }, t);
          if (c.rank() == 0) f.us.push_back(r.batch_seconds.front() * 1e6);
        };
        double sink = 0;
        for (int b = 0; b < batches; ++b) {
          record(sum_plain, [&](std::int64_t k) {
            for (std::int64_t i = 0; i < k; ++i) {
              double s = plain_sum(local);
              c.allreduce(std::span(&s, 1), ranklab::ops::sum);
              sink += s;
            }
          });
          record(sum_repro, [&](std::int64_t k) {
            for (std::int64_t i = 0; i < k; ++i) sink += ranklab::sum_reproducible(c, local);
          });
          record(ew_plain, [&](std::int64_t k) {
            for (std::int64_t i = 0; i < k; ++i) c.allreduce(local, out, ranklab::ops::sum);
          });
          if (!ew_repro.skipped) {
            record(ew_repro, [&](std::int64_t k) {
              for (std::int64_t i = 0; i < k; ++i) ranklab::allreduce_reproducible(c, local, out);
            });
            record(ew_reused, [&](std::int64_t k) {
              for (std::int64_t i = 0; i < k; ++i) {
                ranklab::to_repro(std::span<const double>(local), std::span(acc));
                c.allreduce(acc, ranklab::ops::repro_merge);
                ranklab::from_repro(std::span<const ranklab::repro_sum<double>>(acc), std::span(out));
              }
            });
          }
        }
        if (sink == 42.4242) fmt::print("");  // keeps the sums
      });
      fmt::print("| {} | {} | {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} |\n", p, ranklab::name(team.execution()),
                 n, size_text(bytes), cell(sum_plain), cell(sum_repro), ratio(sum_repro, sum_plain), cell(ew_plain),
                 cell(ew_repro), ratio(ew_repro, ew_plain), cell(ew_reused), ratio(ew_reused, ew_plain));
      std::fflush(stdout);
    }
  }
  fmt::print("\nload average after: {}\n", load_average());
  fmt::print(
      "\nFigures: median over {} batches of the slowest rank's mean per call, microseconds. ratio: reproducible / "
      "plain. Element-wise reproducible: '-' where p x 2 x 552 bytes per element exceed --memory-gib {}.\n",
      batches, memory_gib);
  return 0;
}
