// What the bench/ programs that time ranks share: one batch of calls timed on every rank
// (the slowest rank's mean per call, which all ranks then agree on, as measure_batches
// needs), and the load average a result file must show.
#pragma once
#include <cstdint>
#include <fstream>
#include <span>
#include <string>

#include "bench/timing.hpp"
#include "ranklab/ranklab.hpp"

namespace ranklab::tools::bench {

// Runs body(iterations) on every rank between a barrier and the clock; returns the slowest
// rank's seconds per iteration, on every rank.
template <class Body>
double slowest_rank_seconds(ranklab::comm& c, std::int64_t iterations, Body&& body) {
  c.barrier();
  const auto t0 = clock_type::now();
  body(iterations);
  double s = seconds_since(t0) / static_cast<double>(iterations);
  c.allreduce(std::span(&s, 1), ranklab::ops::max);
  return s;
}

// The 1-, 5- and 15-minute load averages, "unknown" where /proc says nothing.
inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return in ? a + " " + b + " " + c : "unknown";
}

}  // namespace ranklab::tools::bench
