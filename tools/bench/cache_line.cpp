// The cache-line round trip between two cores (see cache_line.hpp).
#include "bench/cache_line.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <exception>

#include "bench/peers.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/team.hpp"

namespace ranklab::tools::bench {

namespace {

// The line bounced between the cores, alone in its 64 bytes.
struct alignas(64) bounced_line {
  std::atomic<std::uint64_t> value{0};
};

constexpr std::uint64_t stop = ~std::uint64_t{0};

// The second thread: answers every odd value v with v + 1 until told to stop. It spins
// without pausing, as the floor is what the two cores can do.
void echo(bounced_line& line) {
  std::uint64_t seen = 0;
  for (;;) {
    std::uint64_t v;
    while ((v = line.value.load(std::memory_order_acquire)) == seen || (v % 2 == 0 && v != stop)) {
    }
    if (v == stop) return;
    seen = v + 1;
    line.value.store(seen, std::memory_order_release);
  }
}

}  // namespace

cache_line_figures measure_cache_line(const timing_options& o) {
  cache_line_figures f;
  if (available_cores() < 2 || machine().cores < 2) {
    f.note = "one core: no second core to bounce a line to";
    return f;
  }
  team_options opts = team_options::from_environment();
  opts.binding = binding_policy::compact;  // rank r on core r, first hardware thread of each
  opts.deadlock_timeout = std::max(opts.deadlock_timeout, std::chrono::milliseconds(60000));
  team t(2, opts);
  bounced_line line;
  measurement m;
  run(t, [&](comm& cm) {
    if (cm.rank() == 1) {
      echo(line);
      return;
    }
    std::uint64_t v = 0;
    auto time_batch = [&](std::int64_t iters) {
      const auto t0 = clock_type::now();
      for (std::int64_t i = 0; i < iters; ++i) {
        line.value.store(v + 1, std::memory_order_release);
        while (line.value.load(std::memory_order_acquire) != v + 2) {
        }
        v += 2;
      }
      return seconds_since(t0) / static_cast<double>(iters);
    };
    try {
      m = measure_batches(time_batch, o);
    } catch (...) {
      line.value.store(stop, std::memory_order_release);
      throw;
    }
    line.value.store(stop, std::memory_order_release);
  });
  const std::vector<binding_info> b = t.bindings();
  if (b.size() == 2 && b[0].core >= 0 && b[1].core >= 0 && b[0].core != b[1].core)
    f.placement = fmt::format("cores {} and {} (cpusets {} and {})", b[0].core, b[1].core, b[0].cpuset, b[1].cpuset);
  else
    f.placement =
        fmt::format("not pinned to two cores ({})", b.empty() || b[0].note.empty() ? "binding failed" : b[0].note);
  f.measured = true;
  f.round_trip_ns = m.usec.median * 1e3;
  f.crossing_ns = f.round_trip_ns / 2;
  f.min_ns = m.usec.min * 1e3;
  f.max_ns = m.usec.max * 1e3;
  f.batches = static_cast<int>(m.batch_seconds.size());
  return f;
}

void add_cache_line(nlohmann::ordered_json& machine, const cache_line_figures& f) {
  auto ns = [&](double v) {
    return f.measured ? nlohmann::ordered_json(std::round(v * 10) / 10) : nlohmann::ordered_json(nullptr);
  };
  machine["cache_line_round_trip_ns"] = ns(f.round_trip_ns);
  machine["cache_line_crossing_ns"] = ns(f.crossing_ns);
  if (f.measured)
    machine["cache_line_placement"] = f.placement;
  else
    machine["cache_line_note"] = f.note;
}

std::string describe(const cache_line_figures& f) {
  if (!f.measured) return "cache-line round trip: not measured (" + f.note + ")";
  return fmt::format(
      "cache-line round trip {:.1f} ns (one crossing {:.1f} ns; min {:.1f}, max {:.1f} over {} batches), {}",
      f.round_trip_ns, f.crossing_ns, f.min_ns, f.max_ns, f.batches, f.placement);
}

}  // namespace ranklab::tools::bench
