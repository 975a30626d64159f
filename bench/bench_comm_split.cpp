// What communicators cost (docs/communicators.md):
//   * split: comm::split(rank % 2, rank) and the new comm's end, per call, at each p;
//   * dup: comm::dup() and its end;
//   * the same collective on the team and on a comm of the same ranks made by split,
//     alternating batch by batch in one run: 8-byte and 64 KiB allreduce (int32 sum, auto)
//     at each p, so that any overhead of a sub-comm shows as a ratio next to noise.
// Times as `ranklab bench` does (calibrated batches, the slowest rank's mean per call, the
// median and range over batches). Prints markdown with the load average before and after;
// scripts/compare_split.sh runs it beside MPI_Comm_split of Open MPI and MPICH.
//
//   bench_comm_split [--p 2,4,8,16] [--batches N] [--execution auto|threads|fibers]
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "bench/timing.hpp"
#include "rank_timing.hpp"
#include "ranklab/ranklab.hpp"

namespace {

using namespace ranklab::tools::bench;

struct figures {
  std::vector<double> us;  // per batch, microseconds per call
};

std::string range(const figures& f) {
  if (f.us.empty()) return "-";
  return fmt::format("{:.2f} ({:.2f}-{:.2f})", median(f.us), *std::min_element(f.us.begin(), f.us.end()),
                     *std::max_element(f.us.begin(), f.us.end()));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ps{2, 4, 8, 16};
  int batches = 7;
  ranklab::team_options options = ranklab::team_options::from_environment();
  arguments args(argc, argv, "[--p 2,4,8,16] [--batches N] [--execution auto|threads|fibers]");
  const bool ok = args.parse([&] {
    if (args.option({"--p"}))
      ps = args.ints();
    else if (args.option({"--batches"}))
      batches = std::stoi(args.value());
    else if (args.option({"--execution"}))
      options.execution = ranklab::execution_from_name(args.value());
    else
      return false;
    return true;
  });
  if (!ok || batches < 1) return args.usage();
  options.deadlock_timeout = std::chrono::milliseconds(60000);  // a loaded machine is slow, not stuck

  fmt::print("# Communicators: cost of split and dup, and collectives on a sub-comm\n\n");
  fmt::print("load average before: {}\n\n", load_average());
  fmt::print(
      "| p | execution | split + end, us | dup + end, us | allreduce 8 B team / sub-comm, us | ratio | "
      "allreduce 64 KiB team / sub-comm, us | ratio |\n");
  fmt::print("|---|---|---|---|---|---|---|---|\n");
  const timing_options t{0, 1, 0.02, std::int64_t{1} << 22, true};
  for (int p : ps) {
    figures split, dup, team_small, sub_small, team_large, sub_large;
    ranklab::team team(p, options);
    ranklab::run(team, [&](ranklab::comm& c) {
      auto record = [&](figures& f, auto&& body) {
        const auto m = measure_batches([&](std::int64_t n) { return slowest_rank_seconds(c, n, body); }, t);
        if (c.rank() == 0) f.us.push_back(m.batch_seconds.front() * 1e6);
      };
      ranklab::comm same = *c.split(0, c.rank());  // the team's ranks, as a comm of their own
      std::vector<std::int32_t> small_in{c.rank(), 1}, small_out(2);
      std::vector<std::int32_t> large_in(16384, c.rank()), large_out(16384);
      for (int b = 0; b < batches; ++b) {
        record(split, [&](std::int64_t n) {
          for (std::int64_t i = 0; i < n; ++i) (void)c.split(c.rank() % 2, c.rank());
        });
        record(dup, [&](std::int64_t n) {
          for (std::int64_t i = 0; i < n; ++i) (void)c.dup();
        });
        // Team and sub-comm in turn, batch by batch: the same machine state for both.
        record(team_small, [&](std::int64_t n) {
          for (std::int64_t i = 0; i < n; ++i) c.allreduce(small_in, small_out, ranklab::ops::sum);
        });
        record(sub_small, [&](std::int64_t n) {
          for (std::int64_t i = 0; i < n; ++i) same.allreduce(small_in, small_out, ranklab::ops::sum);
        });
        record(team_large, [&](std::int64_t n) {
          for (std::int64_t i = 0; i < n; ++i) c.allreduce(large_in, large_out, ranklab::ops::sum);
        });
        record(sub_large, [&](std::int64_t n) {
          for (std::int64_t i = 0; i < n; ++i) same.allreduce(large_in, large_out, ranklab::ops::sum);
        });
      }
    });
    fmt::print("| {} | {} | {} | {} | {} / {} | {:.2f} | {} / {} | {:.2f} |\n", p, ranklab::name(team.execution()),
               range(split), range(dup), range(team_small), range(sub_small),
               median(sub_small.us) / median(team_small.us), range(team_large), range(sub_large),
               median(sub_large.us) / median(team_large.us));
  }
  fmt::print("\nload average after: {}\n", load_average());
  fmt::print(
      "\nFigures: median (min-max) over {} batches of the slowest rank's mean per call. ratio: sub-comm / team.\n",
      batches);
  return 0;
}
