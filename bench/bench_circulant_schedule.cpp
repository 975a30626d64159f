// Cost of computing the circulant broadcast schedules (J. L. Träff, "Optimal Broadcast
// Schedules in Logarithmic Time with Applications to Broadcast, All-Broadcast, Reduction
// and All-Reduction", Table 4): nanoseconds per rank for receive + send schedule, O(log p)
// algorithms against the O(log^2 p) reference (send[k] = receive schedule of rank r +
// skip[k], entry k), averaged over ranks and over the p of a range as in the paper (per p:
// time / ranks, then the mean over p). Large ranges are sampled: evenly spaced p, evenly
// spaced ranks per p.
//
// usage: bench_circulant_schedule [--budget=RANKS_PER_RANGE] [--ps=P_PER_RANGE] [--reps=N]
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ranklab/circulant.hpp"

namespace circ = ranklab::circulant;

namespace {

struct range {
  std::string name;
  std::int64_t lo, hi;  // p in [lo, hi)
};

struct sample {
  std::int64_t p;
  std::vector<std::int64_t> ranks;
};

struct options {
  std::int64_t budget = 400'000;  // ranks per range
  int ps = 200;                   // values of p per range
  int reps = 3;                   // best of, for the fast algorithm
};

std::vector<sample> make_samples(const range& rg, const options& o) {
  const std::int64_t count = std::min<std::int64_t>(o.ps, rg.hi - rg.lo);
  const std::int64_t per_p = std::max<std::int64_t>(1, o.budget / count);
  std::vector<sample> out;
  for (std::int64_t i = 0; i < count; ++i) {
    sample s{rg.lo + (rg.hi - rg.lo) * i / count, {}};
    const std::int64_t m = std::min(per_p, s.p);
    for (std::int64_t j = 0; j < m; ++j) s.ranks.push_back(s.p * j / m);
    out.push_back(std::move(s));
  }
  return out;
}

using clock_type = std::chrono::steady_clock;

// Mean over the sampled p of (time for the sampled ranks / number of ranks), in ns.
template <class Fn>
double ns_per_rank(const std::vector<sample>& samples, Fn&& schedules, int reps, long& sink) {
  double best = 1e300;
  for (int rep = 0; rep < reps; ++rep) {
    double sum = 0;
    for (const auto& smp : samples) {
      const circ::skips s(smp.p);
      const auto start = clock_type::now();
      for (std::int64_t r : smp.ranks) sink += schedules(s, r);
      const double ns = std::chrono::duration<double, std::nano>(clock_type::now() - start).count();
      sum += ns / static_cast<double>(smp.ranks.size());
    }
    best = std::min(best, sum / static_cast<double>(samples.size()));
  }
  return best;
}

int new_schedules(const circ::skips& s, std::int64_t r) {
  std::array<int, circ::max_q> recv, send;
  circ::recv_schedule(s, r, recv);
  circ::send_schedule(s, r, send);
  return recv[0] + send[static_cast<std::size_t>(s.q > 0 ? s.q - 1 : 0)];
}

int reference_schedules(const circ::skips& s, std::int64_t r) {
  std::array<int, circ::max_q> recv, send;
  circ::recv_schedule(s, r, recv);
  circ::send_schedule_reference(s, r, send);
  return recv[0] + send[static_cast<std::size_t>(s.q > 0 ? s.q - 1 : 0)];
}

double violations_per_rank(const std::vector<sample>& samples) {
  std::int64_t ranks = 0, violations = 0;
  std::array<int, circ::max_q> send;
  for (const auto& smp : samples) {
    const circ::skips s(smp.p);
    for (std::int64_t r : smp.ranks) {
      circ::schedule_stats st;
      circ::send_schedule(s, r, send, &st);
      violations += st.violations;
      ++ranks;
    }
  }
  return static_cast<double>(violations) / static_cast<double>(ranks);
}

bool read_flag(const char* arg, const char* name, std::int64_t& out) {
  const std::size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  out = std::atoll(arg + n + 1);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::int64_t v = 0;
    if (read_flag(argv[i], "--budget", v) && v > 0)
      o.budget = v;
    else if (read_flag(argv[i], "--ps", v) && v > 0)
      o.ps = static_cast<int>(v);
    else if (read_flag(argv[i], "--reps", v) && v > 0)
      o.reps = static_cast<int>(v);
    else {
      fmt::print(stderr, "usage: {} [--budget=RANKS_PER_RANGE] [--ps=P_PER_RANGE] [--reps=N]\n", argv[0]);
      return 2;
    }
  }
  const std::int64_t k = 1000;
  const std::vector<range> ranges = {
      {"[1, 17000)", 1, 17000},
      {"2^16 +- 1000", (1 << 16) - k, (1 << 16) + k},
      {"2^20 +- 1000", (1 << 20) - k, (1 << 20) + k},
      {"2^24 +- 1000", (1 << 24) - k, (1 << 24) + k},
      {"2^31 - 2000 .. 2^31 - 1", circ::max_p - 2 * k + 1, circ::max_p + 1},
  };
  fmt::print("circulant schedules: ns per rank for receive + send schedule (mean over ranks, then over p)\n");
  fmt::print("sampling per range: {} values of p, {} ranks in all; fast algorithm best of {}\n\n", o.ps, o.budget,
             o.reps);
  fmt::print("{:<26} {:>6} {:>12} {:>16} {:>10} {:>12}\n", "p range", "q", "O(log p) ns", "O(log^2 p) ns", "ratio",
             "viol/rank");
  long sink = 0;
  for (const auto& rg : ranges) {
    const auto samples = make_samples(rg, o);
    const double fast = ns_per_rank(samples, new_schedules, o.reps, sink);
    const double slow = ns_per_rank(samples, reference_schedules, 1, sink);
    const std::string q = fmt::format("{}..{}", circ::skips(rg.lo).q, circ::skips(rg.hi - 1).q);
    fmt::print("{:<26} {:>6} {:>12.1f} {:>16.1f} {:>9.1f}x {:>12.2f}\n", rg.name, q, fast, slow, slow / fast,
               violations_per_rank(samples));
  }
  fmt::print("\n(checksum {})\n", sink);
  return 0;
}
