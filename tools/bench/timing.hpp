// Timing statistics and the calibrated batch loop of every ranklab measurement: `ranklab
// bench`, `ranklab tune` and the programs in bench/ (which include this header through
// bench/CMakeLists.txt). The conventions are the MPI peers' (bench/peers/peer_common.h), so
// that a figure of ranklab and one of Open MPI or MPICH mean the same thing:
//   warm-up/calibration: the iteration count doubles until one batch takes >= calib_seconds
//   (20 ms); then `batches` batches of back-to-back calls, together about target_seconds, with
//   a barrier only between batches; a batch's figure is the max over ranks of the per-call
//   mean; the median (and min, max) over batches is reported.
// Header-only and free of the library, so that the bench/ programs and the unit tests need
// nothing else.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace ranklab::tools::bench {

using clock_type = std::chrono::steady_clock;

inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// The middle value; for an even count the mean of the two middle values; 0 when empty.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct batch_stats {
  double median = 0, min = 0, max = 0;
};

inline batch_stats summarize(const std::vector<double>& v) {
  if (v.empty()) return {};
  return {median(v), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

struct timing_options {
  double target_seconds = 0.2;  // all batches of one configuration together
  int batches = 7;
  double calib_seconds = 0.02;  // a calibration batch at least this long ends the doubling
  std::int64_t max_iters = 100000000;
  // Batches never shorter than the calibration batch (the bench/ programs' rule; with
  // target_seconds 0 every batch repeats the calibrated count).
  bool at_least_calibrated = false;
};

struct measurement {
  std::vector<double> batch_seconds;  // per call, one figure per batch
  std::int64_t iterations = 0;        // calls per batch
  batch_stats usec;                   // over batches, microseconds per call
};

// Calibrates and runs the batches. time_batch(iters) runs `iters` calls and returns seconds
// per call; with several ranks every rank calls this in lockstep and time_batch returns the
// max over ranks, so that all ranks agree on the iteration count.
template <class TimeBatch>
measurement measure_batches(TimeBatch&& time_batch, const timing_options& o) {
  std::int64_t iters = 1;
  double per_call = 0;
  for (;;) {
    per_call = time_batch(iters);
    if (per_call * static_cast<double>(iters) >= o.calib_seconds || iters >= o.max_iters) break;
    iters *= 2;
  }
  const double want = o.target_seconds / o.batches / std::max(per_call, 1e-9);
  measurement m;
  m.iterations = static_cast<std::int64_t>(std::clamp(want, 1.0, static_cast<double>(o.max_iters)));
  if (o.at_least_calibrated) m.iterations = std::max(m.iterations, iters);
  for (int b = 0; b < o.batches; ++b) m.batch_seconds.push_back(time_batch(m.iterations));
  std::vector<double> us;
  for (double s : m.batch_seconds) us.push_back(s * 1e6);
  m.usec = summarize(us);
  return m;
}

}  // namespace ranklab::tools::bench
