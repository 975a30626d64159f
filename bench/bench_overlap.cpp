// Overlap of nonblocking collectives with computation, the measure of A. D. Anenkov,
// "Implementation of J. Bruck's algorithm for the non-blocking Allgather operation in LibNBC":
//
//   overlap% = max(0, 100 - (t_total - t_comp) / t_pure * 100)
//
//   t_pure   start + wait with nothing in between (the blocking equivalent);
//   t_comp   a busy loop of floating-point work alone, calibrated to take about t_pure;
//   t_total  start; the same busy loop; wait.
//
// 100% means the collective completed entirely behind the computation; 0% means it ran
// after it (or the overlapped run cost even more). t_comp is measured alone, so anything
// that slows the computation down while a request is outstanding (a progress thread
// sharing the core, test() calls) counts against the overlap. Values above 100 are noise
// (t_total < t_comp).
//
// Modes (progress):
//   test    no progress thread; the computation is cut into --tests + 1 equal slices with
//           one request::test() between consecutive slices (default 3 test() calls);
//   thread  team_options::progress_thread = true; the computation runs in one piece
//           without test() calls;
//   wait    no thread, no test(): progress only at start and wait (baseline).
//
// Measurement (same as bench/peers/mpi_overlap.c): every timed piece starts after a barrier
// and is timed on each rank; its time is the max over ranks. After a warm-up, the busy loop
// is calibrated to t_pure with all ranks computing at once (so under oversubscription it is
// calibrated to wall time under the same contention as the measured runs); then n
// iterations each time pure, comp and total in turn (interleaved, so that a change of the
// machine's load affects the three alike), and each figure is the median over the n
// iterations. n comes from one probe iteration so that the loop takes about --time
// seconds (default 0.06; min 5, max 1000 iterations).
//
// Output: CSV lines impl,coll,mode,p,bytes,t_pure_us,t_comp_us,t_total_us,overlap_pct
// (impl = ranklab-<algorithm as requested>; bytes = the per-rank contribution: allgather's
// send block, allreduce's vector of doubles), then with --table a human-readable table
// that also names the algorithm "auto" chose.
//
//   bench_overlap [--colls allgather,allreduce] [--sizes 8,1Ki,64Ki,1Mi] [--procs 2,4,8]
//                 [--algos auto,circulant] [--modes test,thread] [--tests 3] [--time 0.06]
//                 [--table] [--no-header]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "bench/timing.hpp"
#include "peers/overlap_compute.h"
#include "ranklab/ranklab.hpp"

namespace {

using namespace ranklab::tools::bench;
using ranklab::tools::size_label;

// The options as the usage line shows them.
constexpr std::string_view synopsis =
    "[--colls allgather,allreduce] [--sizes 8,1Ki,64Ki,1Mi] [--procs 2,4,8]\n"
    "          [--algos auto,circulant] [--modes test,thread,wait] [--tests N] [--time SEC]\n"
    "          [--table] [--no-header]";

struct options {
  std::vector<std::string> colls = {"allgather", "allreduce"};
  std::vector<std::size_t> sizes = {8, 1024, 64 * 1024, 1 << 20};
  std::vector<int> procs = {2, 4, 8};
  std::vector<std::string> algos = {"auto", "circulant"};
  std::vector<std::string> modes = {"test", "thread"};
  int tests = 3;
  double loop_seconds = 0.06;
  bool table = false;
  bool header = true;
};

struct result {
  std::string impl, coll, mode;
  int p = 0;
  std::size_t bytes = 0;
  double t_pure = 0, t_comp = 0, t_total = 0;
  std::string chosen;  // the algorithm that ran
  int iterations = 0;
};

double overlap_pct(double t_pure, double t_comp, double t_total) {
  if (t_pure <= 0) return 0;
  return std::max(0.0, 100.0 - (t_total - t_comp) / t_pure * 100.0);
}

// Units per second of one thread running alone (the starting point of the calibration
// under contention).
double units_per_second() {
  std::uint64_t units = 1000;
  for (;;) {
    const auto t0 = clock_type::now();
    overlap_compute(units);
    const double s = seconds_since(t0);
    if (s >= 0.01) return static_cast<double>(units) / s;
    units *= 2;
  }
}

// ---- one rank's measurement of one (coll, size) ------------------------------------------
struct rank_bench {
  ranklab::comm& c;
  const options& o;
  std::string coll;
  std::string algo_name;
  std::string mode;
  double rate = 0;          // units per second (single thread)
  std::uint64_t units = 0;  // of computation per iteration, calibrated to t_pure

  std::vector<std::byte> gather_in, gather_out;
  std::vector<double> reduce_in, reduce_out;

  ranklab::request start() {
    const ranklab::algo a{algo_name};
    if (coll == "allgather") return c.iallgather(gather_in, gather_out, a);
    return c.iallreduce(reduce_in, reduce_out, ranklab::ops::sum, a);
  }

  // Runs `n` iterations of `body` (each after a barrier, each timed); returns the times,
  // max over ranks per iteration (identical on every rank).
  template <class Body>
  double timed(Body&& body) {
    c.barrier();
    const auto t0 = clock_type::now();
    body();
    return seconds_since(t0);
  }

  template <class Body>
  std::vector<double> phase(int n, Body&& body) {
    std::vector<double> t(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) t[static_cast<std::size_t>(i)] = timed(body);
    c.allreduce(t, ranklab::ops::max);
    return t;
  }

  int slices() const { return mode == "test" ? o.tests + 1 : 1; }

  // The computation of one iteration, cut into slices (with test() between them in mode
  // test when a request is given).
  void compute_sliced(std::uint64_t units, ranklab::request* r) {
    const int k = slices();
    for (int s = 0; s < k; ++s) {
      overlap_compute(units / static_cast<std::uint64_t>(k));
      if (r != nullptr && s + 1 < k) r->test();
    }
  }

  // The warm-up results must be right: a benchmark of a wrong answer measures nothing.
  void check(std::size_t bytes) const {
    const int p = c.size();
    bool ok = true;
    if (coll == "allgather") {
      for (int r = 0; r < p && ok; ++r)
        ok = bytes == 0 ||
             gather_out[static_cast<std::size_t>(r) * bytes + bytes - 1] == std::byte{static_cast<unsigned char>(r)};
    } else {
      ok = reduce_out.back() == p * (p + 1) / 2.0;
    }
    if (!ok)
      throw std::runtime_error(
          fmt::format("rank {}: wrong {} result (algorithm {}, {} bytes)", c.rank(), coll, algo_name, bytes));
  }

  result run(std::size_t bytes) {
    const int p = c.size();
    if (coll == "allgather") {
      gather_in.assign(bytes, std::byte{static_cast<unsigned char>(c.rank())});
      gather_out.assign(bytes * static_cast<std::size_t>(p), std::byte{0});
    } else {
      const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(double));
      reduce_in.assign(n, 1.0 + c.rank());
      reduce_out.assign(n, 0.0);
    }
    auto pure = [&] { start().wait(); };
    auto comp = [&] { compute_sliced(units, nullptr); };
    auto total = [&] {
      ranklab::request r = start();
      compute_sliced(units, mode == "test" ? &r : nullptr);
      r.wait();
    };

    // Warm-up (schedule cache, first touch), then t_pure for the calibration: 5 iterations,
    // more (up to 50, ~5 ms) when they are short.
    phase(2, pure);
    check(bytes);
    double target = median(phase(5, pure));
    const int short_n = std::clamp(static_cast<int>(0.005 / (target + 20e-6)), 5, 50);
    if (short_n > 5) target = median(phase(short_n, pure));

    result res;
    {  // the algorithm that runs (phase() ends with an allreduce, so ask right after a start)
      ranklab::request r = start();
      res.chosen = c.last_algorithm() ? std::string(c.last_algorithm()->name) : algo_name;
      r.wait();
    }

    // Calibrate the busy loop to t_pure with every rank computing at once (at most 4x per
    // pass, so that one disturbed pass cannot throw it far off).
    units = std::max<std::uint64_t>(static_cast<std::uint64_t>(slices()), static_cast<std::uint64_t>(target * rate));
    for (int pass = 0; pass < 3; ++pass) {
      const double t = median(phase(short_n, comp));
      if (t <= 0) break;
      const double scale = std::clamp(target / t, 0.25, 4.0);
      if (scale > 0.9 && scale < 1.1) break;
      units = std::max<std::uint64_t>(static_cast<std::uint64_t>(slices()),
                                      static_cast<std::uint64_t>(static_cast<double>(units) * scale));
    }

    // Iterations: one probe iteration of the loop below (wall time, barriers included, max
    // over ranks) sets n so that the loop takes about --time seconds.
    double probe = 0;
    {
      c.barrier();
      const auto t0 = clock_type::now();
      timed(pure);
      timed(comp);
      timed(total);
      probe = seconds_since(t0);
      c.allreduce(std::span(&probe, 1), ranklab::ops::max);
    }
    const int n = std::clamp(static_cast<int>(o.loop_seconds / probe), 5, 1000);
    res.iterations = n;

    // The measurement: pure, comp and total interleaved, so that a change of the machine's
    // load during the run affects the three alike.
    std::vector<double> t(3 * static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      t[static_cast<std::size_t>(3 * i)] = timed(pure);
      t[static_cast<std::size_t>(3 * i + 1)] = timed(comp);
      t[static_cast<std::size_t>(3 * i + 2)] = timed(total);
    }
    c.allreduce(t, ranklab::ops::max);
    std::vector<double> kind[3];
    for (std::size_t i = 0; i < t.size(); ++i) kind[i % 3].push_back(t[i]);
    res.t_pure = median(kind[0]);
    res.t_comp = median(kind[1]);
    res.t_total = median(kind[2]);
    return res;
  }
};

void print_csv(const result& r) {
  fmt::print("{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.1f}\n", r.impl, r.coll, r.mode, r.p, r.bytes, r.t_pure * 1e6,
             r.t_comp * 1e6, r.t_total * 1e6, overlap_pct(r.t_pure, r.t_comp, r.t_total));
  std::fflush(stdout);
}

void print_table(const std::vector<result>& rows) {
  fmt::print("\n{:<18} {:<10} {:<7} {:>3} {:>6} {:>11} {:>11} {:>11} {:>9}  {}\n", "impl", "coll", "mode", "p", "bytes",
             "t_pure us", "t_comp us", "t_total us", "overlap%", "algorithm (iterations)");
  for (const result& r : rows)
    fmt::print("{:<18} {:<10} {:<7} {:>3} {:>6} {:>11.1f} {:>11.1f} {:>11.1f} {:>9.1f}  {} ({})\n", r.impl, r.coll,
               r.mode, r.p, size_label(r.bytes), r.t_pure * 1e6, r.t_comp * 1e6, r.t_total * 1e6,
               overlap_pct(r.t_pure, r.t_comp, r.t_total), r.chosen, r.iterations);
}

// The current argument into `o`; false if it is not an option of this program.
bool read_option(arguments& args, options& o) {
  if (args.option({"--colls"}))
    o.colls = args.list();
  else if (args.option({"--sizes"}))
    o.sizes = args.sizes();
  else if (args.option({"--procs"}))
    o.procs = args.ints();
  else if (args.option({"--algos"}))
    o.algos = args.list();
  else if (args.option({"--modes"}))
    o.modes = args.list();
  else if (args.option({"--tests"}))
    o.tests = std::stoi(args.value());
  else if (args.option({"--time"}))
    o.loop_seconds = std::stod(args.value());
  else if (args.is({"--table"}))
    o.table = true;
  else if (args.is({"--no-header"}))
    o.header = false;
  else
    return false;
  return true;
}

bool valid(const options& o) {
  for (const auto& c : o.colls)
    if (c != "allgather" && c != "allreduce") return false;
  for (const auto& m : o.modes)
    if (m != "test" && m != "thread" && m != "wait") return false;
  return o.tests >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  arguments args(argc, argv, synopsis);
  options o;
  if (!args.parse([&] { return read_option(args, o); }) || !valid(o)) return args.usage();

  const double rate = units_per_second();
  if (o.header) fmt::print("impl,coll,mode,p,bytes,t_pure_us,t_comp_us,t_total_us,overlap_pct\n");
  std::vector<result> rows;
  for (const auto& coll : o.colls) {
    for (int p : o.procs) {
      for (const auto& algo_name : o.algos) {
        for (const auto& mode : o.modes) {
          ranklab::team_options topt = ranklab::team_options::from_environment();
          topt.progress_thread = mode == "thread";
          std::vector<result> got(o.sizes.size());
          try {
            ranklab::run(
                p,
                [&](ranklab::comm& c) {
                  rank_bench b{c, o, coll, algo_name, mode, rate, 0, {}, {}, {}, {}};
                  for (std::size_t k = 0; k < o.sizes.size(); ++k) {
                    result r = b.run(o.sizes[k]);
                    if (c.rank() == 0) got[k] = std::move(r);
                  }
                },
                topt);
          } catch (const std::exception& e) {
            fmt::print(stderr, "bench_overlap: {} {} p={} {}: {}\n", coll, algo_name, p, mode, e.what());
            continue;
          }
          for (std::size_t k = 0; k < o.sizes.size(); ++k) {
            result& r = got[k];
            r.impl = "ranklab-" + algo_name;
            r.coll = coll;
            r.mode = mode;
            r.p = p;
            r.bytes = o.sizes[k];
            print_csv(r);
            rows.push_back(r);
          }
        }
      }
    }
  }
  if (o.table) print_table(rows);
  return 0;
}
