// Timing of `ranklab bench`, with the conventions of the MPI peers (bench/peers/peer_common.h)
// so that every figure in a comparison means the same thing:
//   warm-up/calibration: the iteration count doubles until one batch takes >= calib_seconds
//   (20 ms); then `batches` batches of back-to-back calls, together about target_seconds, with
//   a barrier only between batches; a batch's figure is the max over ranks of the per-call
//   mean; the median (and min, max) over batches is reported.
// measure_ranklab times one call on a team of rank threads through comm::run_collective,
// after checking its result once against the sequential reference (check.hpp);
// measure_memcpy times the memcpy baselines (one thread, or two threads each copying half).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "ranklab/comm.hpp"

namespace ranklab::tools::bench {

struct timing_options {
  double target_seconds = 0.2;   // all batches of one configuration together
  int batches = 7;
  double calib_seconds = 0.02;   // a calibration batch at least this long ends the doubling
  std::int64_t max_iters = 100000000;
};

struct measurement {
  std::vector<double> batch_seconds;  // per call, one figure per batch
  std::int64_t iterations = 0;        // calls per batch
  batch_stats usec;                   // over batches, microseconds per call
};

// What an implementation's measurement of one configuration gave.
struct impl_result {
  measurement m;
  std::string selected;      // ranklab "auto": the algorithm the library picked
  bool checked = false;      // compared with the sequential reference
  bool verified = false;     // ... and equal to it
  std::string difference;    // the first difference when not verified
  bool timed = false;        // false: not timed (check failed)
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
  for (int b = 0; b < o.batches; ++b) m.batch_seconds.push_back(time_batch(m.iterations));
  std::vector<double> us;
  for (double s : m.batch_seconds) us.push_back(s * 1e6);
  m.usec = summarize(us);
  return m;
}

// The call on p rank threads (p = c.args.p). check: the first call's result is compared
// with the sequential reference before timing; a wrong result is not timed.
impl_result measure_ranklab(const call& c, const timing_options& o, bool check);

// memcpy of `bytes` bytes by one thread, or by `threads` threads each copying its share.
measurement measure_memcpy(std::uint64_t bytes, int threads, const timing_options& o);

}  // namespace ranklab::tools::bench
