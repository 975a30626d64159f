// `ranklab bench --plot FILE.svg`: time per call against bytes per rank, log-log, one line
// per algorithm or implementation, one panel per (collective, p), written as plain SVG (no
// plotting dependency). The scale and tick helpers are pure and unit-tested.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bench/report.hpp"

namespace ranklab::tools::bench {

// Maps [lo, hi] (both > 0) logarithmically onto pixels [px_lo, px_hi].
struct log_scale {
  double lo = 1, hi = 10, px_lo = 0, px_hi = 1;
  double operator()(double v) const;
};

// Decades 10^k covering [lo, hi]; within at most two decades also 2 and 5 times them.
// Only ticks inside [lo, hi].
std::vector<double> log_ticks(double lo, double hi);
// Decade bounds around [lo, hi]: (10^floor(log10 lo), 10^ceil(log10 hi)), at least a decade apart.
std::pair<double, double> decade_bounds(double lo, double hi);
// Powers of two in [lo, hi], every 2^k-th so that there are at most max_ticks.
std::vector<std::uint64_t> size_ticks(std::uint64_t lo, std::uint64_t hi, int max_ticks = 8);

std::string render_svg(const bench_results& r);

}  // namespace ranklab::tools::bench
