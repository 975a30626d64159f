// The cost model of `ranklab tune`, measured: alpha and beta from ping-pong between two rank
// threads, fitted by least squares on relative error (split into size bands where one line
// fits poorly: eager inline messages against descriptor copies, caches), and gamma from the
// sum kernel's throughput. Every figure is the fastest of many short batches: a calibration
// wants the machine's own cost, and other processes on a shared machine only ever add time.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "ranklab/selection.hpp"

namespace ranklab::tools::tune {

struct sample {
  double bytes = 0;
  double seconds = 0;
};

// One-way times from ping-pong between ranks 0 and 1 per size: the fastest of the batches.
std::vector<sample> ping_pong(const std::vector<std::uint64_t>& sizes, int batches, double batch_seconds);

// The same between two rank threads pinned to cores a and b (a team of max(a, b) + 1 ranks,
// bound compactly, the two in a comm of their own; `tune --levels`). With `reduce`, each
// side adds what it receives into its own float64 vector before it sends that vector back:
// one way is then alpha + (beta + gamma) m. Sizes are whole float64 elements with `reduce`.
struct pair_exchange {
  int core_a = 0, core_b = 1;
  bool reduce = false;
};
struct pair_timing {
  std::vector<sample> samples;
  bool bound = false;  // both threads ran pinned to their cores (else the figures are of unbound threads)
};
pair_timing time_pair(const std::vector<std::uint64_t>& sizes, int batches, double batch_seconds,
                      const pair_exchange& how);

struct line_fit {
  double alpha = 0, beta = 0, max_rel_error = 0, sum_sq_rel = 0;
};

// Least squares of t = alpha + beta * bytes on relative error (weights 1/t^2), so that small
// messages count as much as large ones; alpha and beta are kept non-negative.
line_fit fit_line(std::span<const sample> pts);

// The max relative error above which the sizes are split into bands.
inline constexpr double poor_fit = 0.20;

// The size bands of the model when the line through all samples fits poorly (`whole`);
// empty when one line serves (no split helps). The last band reaches any size.
std::vector<cost_band> fit_bands(std::span<const sample> pts, const line_fit& whole);

// Seconds per byte of the sum kernel on int32, float32 and float64 (gamma is their median).
struct kernel_rates {
  double int32 = 0, float32 = 0, float64 = 0;
};
kernel_rates reduction_rates(int batches, double batch_seconds);

// gamma from one-way times of plain and reducing exchanges at the same sizes: the median
// over sizes of at least min_bytes of (reducing - plain) / bytes; 0 when no size gives a
// positive figure (noise above the reduction's own cost).
double reduction_gamma(std::span<const sample> plain, std::span<const sample> reducing, double min_bytes = 1024);

}  // namespace ranklab::tools::tune
