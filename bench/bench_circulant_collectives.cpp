// The circulant collectives against the other registered algorithms, on the thread
// executor through the comm API (comm::run_collective with a call):
//   bcast       circulant vs binomial vs scatter + allgather compositions (scatter_allgather,
//               scatter_ring, scatter_ring_tuned) when registered;
//   allreduce   circulant vs recursive_doubling vs rabenseifner / ring when registered
//               (int32 sum, bytes/4 elements, as the MPI peer);
//   allgatherv  circulant vs every other registered allgatherv algorithm that accepts the
//               call, three count patterns (the same as bench/peers/mpi_collectives.c, so
//               the figures compare with MPI_Allgatherv): the total is always p*bytes;
//               regular: bytes each; irregular: rank i has (i+1)*base, base = 2*bytes/(p+1),
//               the rest to rank p-1; degenerate: rank 0 has p*bytes, the others nothing.
// Timing as the MPI peers (tools/bench/timing.hpp): the iteration count is doubled until
// one batch takes >= 20 ms (warm-up), then `batches` batches of back-to-back calls with a
// barrier only between batches, each batch at least 20 ms and together about --time
// seconds; a batch's figure is the max over ranks of the per-call mean; the median over
// batches is reported. Every configuration is checked once before it is timed.
//
// Output: CSV lines `ranklab,<coll>,<algo>,<mode>,<p>,<bytes>,<usec>` as they are measured
// (mode "regular" for bcast and allreduce), then a table per collective and mode: µs per
// call and the ratio to circulant (> 1: circulant is faster).
//
//   bench_circulant_collectives [--coll bcast,allreduce,allgatherv] [--p 2,3,4,8,16]
//       [--sizes 8,1Ki,64Ki,1Mi,16Mi] [--modes regular,irregular,degenerate]
//       [--algos a,b,...] [--time SEC] [--batches N] [--quick] [--no-table] [--no-check]
//       [--max-memory BYTES] [--blocks N]
// --blocks N fixes circulant's number of blocks n (default: the cost model's choice).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "bench/timing.hpp"
#include "cli/option_parse.hpp"
#include "ranklab/ranklab.hpp"

namespace {

using namespace ranklab;
using namespace ranklab::tools::bench;
using ranklab::tools::parse_size;
using ranklab::tools::size_label;

// The options as the usage line shows them.
constexpr std::string_view synopsis =
    "[--coll bcast,allreduce,allgatherv] [--p 2,3,4,8,16] [--sizes 8,1Ki,64Ki,1Mi,16Mi]\n"
    "          [--modes regular,irregular,degenerate] [--algos a,b] [--time SEC] [--batches N]\n"
    "          [--quick] [--no-table] [--no-check] [--max-memory BYTES] [--blocks N]";

struct options {
  std::vector<std::string> colls = {"bcast", "allreduce", "allgatherv"};
  std::vector<int> ps = {2, 3, 4, 8, 16};
  std::vector<std::size_t> sizes = {8, 1024, 64 << 10, 1 << 20, 16 << 20};
  std::vector<std::string> modes = {"regular", "irregular", "degenerate"};
  std::vector<std::string> algos;  // empty: the defaults per collective
  double seconds = 0.2;            // measured time per configuration, over all batches
  int batches = 7;
  bool table = true;
  bool check = true;
  std::size_t max_memory = std::size_t{2} << 30;  // buffers of all ranks together
  int blocks = 0;                                 // circulant's n (algo_params::blocks); 0: the cost model chooses
};

// ---- one configuration --------------------------------------------------------------------
struct config {
  collective coll = collective::bcast;
  std::string mode = "regular";
  int p = 2;
  std::size_t bytes = 8;  // per rank, as reported (allreduce: rounded to whole ints)
};

// Allgatherv counts in bytes, exactly as gv_counts() in bench/peers/mpi_collectives.c.
std::vector<std::uint64_t> gv_counts(const std::string& mode, int p, std::size_t bytes) {
  const auto total = static_cast<std::int64_t>(p) * static_cast<std::int64_t>(bytes);
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(p));
  std::int64_t acc = 0;
  for (int i = 0; i < p; ++i) {
    std::int64_t ci = static_cast<std::int64_t>(bytes);
    if (mode == "irregular") {
      const std::int64_t base = 2 * static_cast<std::int64_t>(bytes) / (p + 1);
      ci = i == p - 1 ? total - acc : static_cast<std::int64_t>(i + 1) * base;
    } else if (mode == "degenerate") {
      ci = i == 0 ? total : 0;
    }
    counts[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(ci);
    acc += ci;
  }
  return counts;
}

call call_for(const config& cf, std::string_view algo_name, int blocks = 0) {
  algo choice{algo_name};
  if (algo_name == "circulant") choice.params.blocks = blocks;
  if (cf.coll == collective::allreduce)
    return make_call(cf.coll, cf.p, cf.bytes / sizeof(std::int32_t), 0, datatype_of<std::int32_t>(), ops::sum, choice);
  if (cf.coll == collective::allgatherv)
    return make_vcall(cf.coll, cf.p, gv_counts(cf.mode, cf.p, cf.bytes), {}, 0, datatype_of<std::uint8_t>(), ops::sum,
                      choice);
  return make_call(cf.coll, cf.p, cf.bytes, 0, datatype_of<std::uint8_t>(), ops::sum, choice);
}

// Bytes of all ranks' buffers together.
std::size_t memory_of(const config& cf) {
  const auto p = static_cast<std::size_t>(cf.p);
  switch (cf.coll) {
    case collective::bcast:
      return p * cf.bytes;
    case collective::allreduce:
      return 2 * p * cf.bytes;
    default:
      return p * p * cf.bytes + p * cf.bytes;  // every out holds p*bytes; the ins p*bytes
  }
}

std::uint8_t byte_pattern(int rank, std::size_t i) { return static_cast<std::uint8_t>(rank * 31 + i * 7 + 3); }

// One rank's buffers for a call, filled with a pattern whose result is easy to check.
struct rank_data {
  std::vector<std::uint8_t> in, out;
  std::vector<std::int32_t> in_i, out_i;

  rank_data(const call& c, int rank) {
    const int p = c.args.p;
    switch (c.args.coll) {
      case collective::bcast:
        out.resize(c.args.count);
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = rank == 0 ? byte_pattern(0, i) : 0;
        break;
      case collective::allreduce:
        in_i.resize(c.args.count);
        out_i.assign(c.args.count, 0);
        for (std::size_t i = 0; i < in_i.size(); ++i) in_i[i] = static_cast<std::int32_t>(i % 1000) + rank;
        break;
      default: {  // allgatherv
        in.resize(c.args.counts[static_cast<std::size_t>(rank)]);
        for (std::size_t i = 0; i < in.size(); ++i) in[i] = byte_pattern(rank, i);
        std::uint64_t total = 0;
        for (auto n : c.args.counts) total += n;
        out.assign(total, 0);
        (void)p;
      }
    }
  }
  const void* in_ptr() const { return in_i.empty() ? static_cast<const void*>(in.data()) : in_i.data(); }
  void* out_ptr() { return out_i.empty() ? static_cast<void*>(out.data()) : out_i.data(); }

  // Number of wrong elements after one call.
  std::size_t wrong(const call& c) const {
    const int p = c.args.p;
    std::size_t bad = 0;
    switch (c.args.coll) {
      case collective::bcast:
        for (std::size_t i = 0; i < out.size(); ++i) bad += out[i] != byte_pattern(0, i);
        break;
      case collective::allreduce:
        for (std::size_t i = 0; i < out_i.size(); ++i)
          bad += out_i[i] != static_cast<std::int32_t>(i % 1000) * p + p * (p - 1) / 2;
        break;
      default: {
        std::size_t at = 0;
        for (int j = 0; j < p; ++j) {
          const std::uint64_t n = c.args.counts[static_cast<std::size_t>(j)];
          for (std::size_t i = 0; i < n; ++i) bad += out[at + i] != byte_pattern(j, i);
          at += n;
        }
      }
    }
    return bad;
  }
};

// Seconds per call of `iterations` back-to-back calls, max over ranks (the same on all).
double time_batch(comm& cm, const call& c, rank_data& d, std::int64_t iterations) {
  cm.barrier();
  const auto t0 = clock_type::now();
  for (std::int64_t i = 0; i < iterations; ++i) cm.run_collective(c, d.in_ptr(), d.out_ptr());
  double s = seconds_since(t0) / static_cast<double>(iterations);
  cm.allreduce(std::span(&s, 1), ops::max);
  return s;
}

struct outcome {
  std::optional<double> seconds;  // empty: failed or skipped
  std::string note;
};

outcome measure(const config& cf, std::string_view algo, const options& o) {
  const call c = call_for(cf, algo, o.blocks);
  const timing_options timing{o.seconds, o.batches, 0.02, std::int64_t{1} << 24, true};
  std::vector<double> result(static_cast<std::size_t>(cf.p), 0.0);
  std::atomic<std::size_t> wrong{0};
  team_options topt = team_options::from_environment();
  // Ranks descheduled on a loaded machine are not deadlocked.
  topt.deadlock_timeout = std::max(topt.deadlock_timeout, std::chrono::milliseconds(20000));
  outcome out;
  try {
    run(
        cf.p,
        [&](comm& cm) {
          rank_data d(c, cm.rank());  // allocated and touched by the rank's own thread
          if (o.check) {
            cm.barrier();
            cm.run_collective(c, d.in_ptr(), d.out_ptr());
            wrong += d.wrong(c);
          }
          // The calibration is also the warm-up.
          const measurement m =
              measure_batches([&](std::int64_t iterations) { return time_batch(cm, c, d, iterations); }, timing);
          result[static_cast<std::size_t>(cm.rank())] = median(m.batch_seconds);
        },
        topt);
  } catch (const std::exception& e) {
    out.note = e.what();
    return out;
  }
  if (wrong > 0) {
    out.note = fmt::format("WRONG RESULT: {} wrong elements", wrong.load());
    return out;
  }
  out.seconds = result[0];
  return out;
}

// The algorithms to compare for a collective (registered and meeting the preconditions).
std::vector<std::string> algorithms_for(const config& cf, const options& o) {
  std::vector<std::string> wanted = o.algos;
  if (wanted.empty()) {
    if (cf.coll == collective::bcast)
      wanted = {"circulant", "binomial", "scatter_allgather", "scatter_ring", "scatter_ring_tuned"};
    else if (cf.coll == collective::allreduce)
      wanted = {"circulant", "recursive_doubling", "rabenseifner", "ring"};
    else
      for (const algorithm* a : registry::for_collective(cf.coll)) wanted.emplace_back(a->name);
  }
  // circulant first: the ratios refer to it.
  std::stable_partition(wanted.begin(), wanted.end(), [](const std::string& s) { return s == "circulant"; });
  const call c = call_for(cf, "circulant");
  std::vector<std::string> out;
  for (const std::string& w : wanted) {
    const algorithm* a = registry::find(cf.coll, w);
    if (a == nullptr || !meets_preconditions(*a, c.args)) continue;
    out.push_back(w);
  }
  return out;
}

struct row_key {
  std::string coll, mode;
  int p;
  std::size_t bytes;
  auto operator<=>(const row_key&) const = default;
};

void print_row(const row_key& key, const std::map<std::string, outcome>& results,
               const std::vector<std::string>& cols) {
  fmt::print("{:>3} {:>6}", key.p, size_label(key.bytes));
  const auto circ = results.find("circulant");
  const std::optional<double> base = circ != results.end() ? circ->second.seconds : std::nullopt;
  for (const auto& a : cols) {
    const auto it = results.find(a);
    if (it == results.end()) {
      fmt::print(" {:>24}", "-");
    } else if (!it->second.seconds) {
      fmt::print(" {:>24}", it->second.note.starts_with("WRONG") ? "WRONG" : "error");
    } else {
      const double us = *it->second.seconds * 1e6;
      const std::string ratio = base && *base > 0 ? fmt::format("[{:.2f}]", *it->second.seconds / *base) : "";
      fmt::print(" {:>24}", fmt::format("{:.2f} {}", us, ratio));
    }
  }
  fmt::print("\n");
}

// One table per collective and mode, in the order measured.
void print_tables(const std::map<row_key, std::map<std::string, outcome>>& rows,
                  const std::vector<std::pair<std::string, std::string>>& groups,
                  const std::map<std::string, std::vector<std::string>>& algos_of) {
  for (const auto& [coll, mode] : groups) {
    const std::vector<std::string>& cols = algos_of.at(coll + " " + mode);
    fmt::print("\n{} ({}): µs per call; in brackets: time / circulant's (> 1: circulant faster)\n", coll, mode);
    fmt::print("{:>3} {:>6}", "p", "bytes");
    for (const auto& a : cols) fmt::print(" {:>24}", a);
    fmt::print("\n");
    for (const auto& [key, results] : rows) {
      if (key.coll != coll || key.mode != mode) continue;
      print_row(key, results, cols);
    }
  }
}

// The current argument into `o`; false if it is not an option of this program.
bool read_option(arguments& args, options& o) {
  if (args.option({"--coll", "--colls"}))
    o.colls = args.list();
  else if (args.option({"--p"}))
    o.ps = args.ints();
  else if (args.option({"--sizes"}))
    o.sizes = args.sizes();
  else if (args.option({"--modes", "--mode"})) {
    o.modes = args.list();
    if (o.modes == std::vector<std::string>{"all"}) o.modes = {"regular", "irregular", "degenerate"};
  } else if (args.option({"--algos"}))
    o.algos = args.list();
  else if (args.option({"--time"}))
    o.seconds = std::stod(args.value());
  else if (args.option({"--batches"}))
    o.batches = std::max(1, std::stoi(args.value()));
  else if (args.option({"--max-memory"}))
    o.max_memory = parse_size(args.value());
  else if (args.option({"--blocks"}))
    o.blocks = std::stoi(args.value());
  else if (args.is({"--quick"})) {
    o.ps = {2, 4, 8};
    o.sizes = {8, 64 << 10, 1 << 20};
    o.seconds = 0.1;
    o.batches = 5;
  } else if (args.is({"--no-table"}))
    o.table = false;
  else if (args.is({"--no-check"}))
    o.check = false;
  else
    return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  arguments args(argc, argv, synopsis);
  if (!args.parse([&] { return read_option(args, o); })) return args.usage();

  std::map<row_key, std::map<std::string, outcome>> rows;
  std::map<std::string, std::vector<std::string>> algos_of;  // "coll mode" -> columns
  std::vector<std::pair<std::string, std::string>> groups;   // (coll, mode) in measured order
  int failures = 0;
  fmt::print("impl,coll,algo,mode,p,bytes,usec\n");
  std::fflush(stdout);
  for (const std::string& coll_name : o.colls) {
    const auto coll = collective_from_name(coll_name);
    if (!coll || (*coll != collective::bcast && *coll != collective::allreduce && *coll != collective::allgatherv)) {
      fmt::print(stderr, "error: --coll takes bcast, allreduce, allgatherv (got {})\n", coll_name);
      return 2;
    }
    const std::vector<std::string> modes =
        *coll == collective::allgatherv ? o.modes : std::vector<std::string>{"regular"};
    for (const std::string& mode : modes) {
      for (int p : o.ps) {
        for (std::size_t size : o.sizes) {
          config cf{*coll, mode, p, size};
          if (*coll == collective::allreduce) cf.bytes = std::max<std::size_t>(1, size / 4) * 4;  // as the peer
          if (memory_of(cf) > o.max_memory) {
            fmt::print(stderr, "# skipped {} {} p={} bytes={}: {} MiB of buffers > --max-memory\n", coll_name, mode, p,
                       cf.bytes, memory_of(cf) >> 20);
            continue;
          }
          const std::string group = coll_name + " " + mode;
          if (std::find(groups.begin(), groups.end(), std::pair(coll_name, mode)) == groups.end())
            groups.emplace_back(coll_name, mode);
          for (const std::string& algo : algorithms_for(cf, o)) {
            auto& cols = algos_of[group];
            if (std::find(cols.begin(), cols.end(), algo) == cols.end()) cols.push_back(algo);
            const outcome r = measure(cf, algo, o);
            rows[{coll_name, mode, p, cf.bytes}][algo] = r;
            if (r.seconds) {
              fmt::print("ranklab,{},{},{},{},{},{:.4f}\n", coll_name, algo, mode, p, cf.bytes, *r.seconds * 1e6);
            } else {
              ++failures;
              fmt::print(stderr, "# {} {} {} p={} bytes={}: {}\n", coll_name, algo, mode, p, cf.bytes, r.note);
            }
            std::fflush(stdout);
          }
        }
      }
    }
  }
  if (o.table) print_tables(rows, groups, algos_of);
  if (failures) fmt::print(stderr, "# {} configuration(s) failed or gave wrong results\n", failures);
  return failures ? 1 : 0;
}
