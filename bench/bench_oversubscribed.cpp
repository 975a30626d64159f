// More ranks than cores: the same calls with ranks as threads and as fibers, side by side
// in one run (team_options::execution).
//   * 8-byte allreduce (int32 sum, auto) at each p: µs per call, as `ranklab bench` times
//     it (calibrated batches, the slowest rank's mean, the median over batches);
//   * a ring of --ring-rounds 8-byte sendrecv rounds at p = --ring-p: seconds for all;
//   * a barrier at p = --barrier-p in a child process: seconds from ranklab::run to its
//     return, and the child's peak resident memory (its ru_maxrss);
//   * deterministic mode: --replay runs of one traced program (p = 16: allreduce, a sendrecv
//     ring, bcast, barrier) with one seed, and how many traces equal the first, byte for byte.
// Threads are skipped above --max-thread-p (thousands of OS threads take minutes here).
// Prints markdown with the load average before and after; a figure under load is no result.
//
//   bench_oversubscribed [--p 4,16,64,256] [--ring-p 1024] [--ring-rounds 1000]
//                        [--barrier-p 4096] [--max-thread-p 256] [--replay 100] [--batches N]
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "bench/timing.hpp"
#include "rank_timing.hpp"
#include "ranklab/ranklab.hpp"

namespace {

using namespace ranklab::tools::bench;

struct options {
  std::vector<int> ps = {4, 16, 64, 256};
  int ring_p = 1024;
  int ring_rounds = 1000;
  int barrier_p = 4096;
  int max_thread_p = 256;
  int replay = 100;
  int batches = 7;
};

ranklab::team_options in_mode(ranklab::execution_mode m) {
  ranklab::team_options o = ranklab::team_options::from_environment();
  o.execution = m;
  o.deadlock_timeout = std::chrono::milliseconds(60000);  // a loaded machine is slow, not stuck
  return o;
}

double allreduce_us(int p, ranklab::execution_mode m, int batches) {
  double result = 0;
  ranklab::run(
      p,
      [&](ranklab::comm& c) {
        std::int32_t in[2] = {c.rank(), 1}, out[2] = {0, 0};
        auto time_batch = [&](std::int64_t iterations) {
          return slowest_rank_seconds(c, iterations, [&](std::int64_t n) {
            for (std::int64_t i = 0; i < n; ++i) c.allreduce(std::span(in), std::span(out), ranklab::ops::sum);
          });
        };
        const timing_options o{0, batches, 0.02, std::int64_t{1} << 24, true};
        const double s = median(measure_batches(time_batch, o).batch_seconds);
        if (c.rank() == 0) result = s * 1e6;
      },
      in_mode(m));
  return result;
}

double ring_seconds(int p, int rounds, ranklab::execution_mode m) {
  double result = 0;
  ranklab::run(
      p,
      [&](ranklab::comm& c) {
        const int r = c.rank();
        std::uint64_t token = static_cast<std::uint64_t>(r), got = 0;
        c.barrier();
        const auto t0 = clock_type::now();
        for (int i = 0; i < rounds; ++i) {
          c.sendrecv((r + 1) % p, std::span(&token, 1), (r + p - 1) % p, std::span(&got, 1));
          token = got;
        }
        c.barrier();
        if (r == 0) result = seconds_since(t0);
      },
      in_mode(m));
  return result;
}

struct barrier_figures {
  double seconds = 0;
  double peak_mib = 0;
  bool ok = false;
};

// In a child process, so that its peak memory is the barrier's alone.
barrier_figures barrier_in_child(int p, ranklab::execution_mode m) {
  int pipe_fd[2];
  if (pipe(pipe_fd) != 0) return {};
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fd[0]);
    double seconds = -1;
    try {
      const auto t0 = clock_type::now();
      ranklab::run(
          p, [](ranklab::comm& c) { c.barrier(); }, in_mode(m));
      seconds = seconds_since(t0);
    } catch (const std::exception& e) {
      fmt::print(stderr, "barrier at p = {}: {}\n", p, e.what());
    }
    [[maybe_unused]] const auto n = write(pipe_fd[1], &seconds, sizeof seconds);
    _exit(seconds < 0 ? 1 : 0);
  }
  close(pipe_fd[1]);
  barrier_figures f;
  double seconds = -1;
  const bool got = read(pipe_fd[0], &seconds, sizeof seconds) == sizeof seconds;
  close(pipe_fd[0]);
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  f.ok = got && seconds >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  f.seconds = seconds;
  f.peak_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  return f;
}

// The trace of one deterministic run, as JSON lines.
std::string deterministic_trace(std::uint64_t seed) {
  ranklab::team_options o = in_mode(ranklab::execution_mode::fibers);
  o.seed = seed;
  o.trace = true;
  ranklab::team t(16, o);
  ranklab::run(t, [](ranklab::comm& c) {
    const int r = c.rank(), p = c.size();
    std::int64_t v[3] = {r, 2 * r, 3 * r}, sum[3];
    c.allreduce(std::span(v), std::span(sum), ranklab::ops::sum);
    std::int64_t left = 0;
    c.sendrecv((r + 1) % p, std::span(v, 1), (r + p - 1) % p, std::span(&left, 1));
    c.bcast(std::span(sum), 5);
    c.barrier();
  });
  std::ostringstream out;
  t.write_trace_json_lines(out);
  return out.str();
}

std::string cell(double v, const char* format) { return v > 0 ? fmt::format(fmt::runtime(format), v) : "-"; }

}  // namespace

int main(int argc, char** argv) {
  options o;
  arguments args(argc, argv,
                 "[--p 4,16,64,256] [--ring-p P] [--ring-rounds N] [--barrier-p P] [--max-thread-p P] [--replay N] "
                 "[--batches N]");
  const bool ok = args.parse([&] {
    if (args.option({"--p"}))
      o.ps = args.ints();
    else if (args.option({"--ring-p"}))
      o.ring_p = std::stoi(args.value());
    else if (args.option({"--ring-rounds"}))
      o.ring_rounds = std::stoi(args.value());
    else if (args.option({"--barrier-p"}))
      o.barrier_p = std::stoi(args.value());
    else if (args.option({"--max-thread-p"}))
      o.max_thread_p = std::stoi(args.value());
    else if (args.option({"--replay"}))
      o.replay = std::stoi(args.value());
    else if (args.option({"--batches"}))
      o.batches = std::stoi(args.value());
    else
      return false;
    return true;
  });
  if (!ok) return args.usage();
  using ranklab::execution_mode;
  const std::string load_before = load_average();
  const int cores = ranklab::machine().cores;
  fmt::print("# ranks on {} cores: threads against fibers\n\n", cores);
  fmt::print("load average before: {}\n\n", load_before);
  fmt::print("| allreduce 8 B, p | threads us | fibers us | fibers/threads |\n| ---: | ---: | ---: | ---: |\n");
  for (int p : o.ps) {
    const double t = p <= o.max_thread_p ? allreduce_us(p, execution_mode::threads, o.batches) : 0;
    const double f = allreduce_us(p, execution_mode::fibers, o.batches);
    fmt::print("| {} | {} | {} | {} |\n", p, cell(t, "{:.2f}"), cell(f, "{:.2f}"), t > 0 ? cell(f / t, "{:.3f}") : "-");
    std::fflush(stdout);
  }
  if (o.ring_p > 0) {
    const double t = o.ring_p <= o.max_thread_p ? ring_seconds(o.ring_p, o.ring_rounds, execution_mode::threads) : 0;
    const double f = ring_seconds(o.ring_p, o.ring_rounds, execution_mode::fibers);
    fmt::print("\n| ring of {} sendrecv rounds, p | threads s | fibers s |\n| ---: | ---: | ---: |\n", o.ring_rounds);
    fmt::print("| {} | {} | {} |\n", o.ring_p, cell(t, "{:.3f}"), cell(f, "{:.3f}"));
  }
  if (o.barrier_p > 0) {
    fmt::print(
        "\n| one barrier, p | mode | seconds (run to return) | peak resident MiB |\n| ---: | --- | ---: | ---: |\n");
    for (auto m : {execution_mode::threads, execution_mode::fibers}) {
      if (m == execution_mode::threads && o.barrier_p > o.max_thread_p) continue;
      const barrier_figures b = barrier_in_child(o.barrier_p, m);
      fmt::print("| {} | {} | {} | {} |\n", o.barrier_p, ranklab::name(m), b.ok ? cell(b.seconds, "{:.3f}") : "failed",
                 b.ok ? cell(b.peak_mib, "{:.0f}") : "-");
    }
  }
  if (o.replay > 0) {
    const std::string first = deterministic_trace(2026);
    int same = 0;
    for (int i = 0; i < o.replay; ++i) same += deterministic_trace(2026) == first;
    fmt::print("\ndeterministic mode (seed 2026, p = 16, {} trace lines): {} of {} replays byte-identical\n",
               std::count(first.begin(), first.end(), '\n'), same, o.replay);
  }
  fmt::print("\nload average after: {}\n", load_average());
  return 0;
}
