// Interleaved batches with the peers' convention (see interleaved.hpp).
#include "interleaved.hpp"

#include <algorithm>

namespace ranklab::mpi_bench {

namespace {

struct state {
  long iters = 1;
  double calib_per_call = 0;
  double spent = 0;      // seconds this variant has taken (max over ranks), calibration included
  bool stopped = false;  // out of budget: no further batches
  std::vector<double> batches;
};

// One batch of v; adds its duration to s.spent. Returns seconds per call (max over ranks).
double batch(timed_variant& v, state& s, long iters, MPI_Comm comm) {
  double elapsed = 0;
  const double t0 = MPI_Wtime();
  const double per_call = peer_time_batch_at(v.kernel, v.context, iters, comm, t0, &elapsed);
  s.spent += elapsed;
  return per_call;
}

// peer_measure_ex's calibration and batch size, for one variant.
void calibrate(const peer_opts& o, timed_variant& v, state& s, long cap, double budget, MPI_Comm comm) {
  if (o.fixed_iters > 0) {
    s.iters = o.fixed_iters;
    s.calib_per_call = batch(v, s, std::min(s.iters, 4L), comm);  // warm-up
    return;
  }
  long iters = 1;
  double per_call = 0;
  for (;;) {
    per_call = batch(v, s, iters, comm);
    if (per_call * static_cast<double>(iters) >= PEER_CALIB_SECONDS || iters >= cap) break;
    if (peer_over_budget(budget, s.spent, per_call, 2 * iters)) {
      v.result.cut = 1;
      break;
    }
    iters = std::min(2 * iters, cap);
  }
  s.calib_per_call = per_call;
  const double want = o.target_seconds / o.batches / (per_call > 0 ? per_call : 1e-9);
  s.iters = static_cast<long>(std::clamp(want, 1.0, static_cast<double>(cap)));
}

}  // namespace

void measure_interleaved(const peer_opts& o, std::vector<timed_variant>& variants, MPI_Comm comm) {
  const double budget = peer_budget(&o);
  const long cap = o.max_iters > 0 && o.max_iters < PEER_MAX_ITERS ? o.max_iters : PEER_MAX_ITERS;
  std::vector<state> states(variants.size());
  for (std::size_t i = 0; i < variants.size(); ++i) calibrate(o, variants[i], states[i], cap, budget, comm);
  for (int b = 0; b < o.batches; ++b)
    for (std::size_t i = 0; i < variants.size(); ++i) {
      timed_variant& v = variants[i];
      state& s = states[i];
      if (s.stopped) continue;
      const double pred = s.batches.empty() ? s.calib_per_call : s.batches.back();
      long iters = s.iters;
      // peer_measure_ex's rule: stop once the next batch would end past the budget, except
      // that a first batch shrinks to what fits, at least one call (with --iters it runs as is).
      if (peer_over_budget(budget, s.spent, pred, iters)) {
        v.result.cut = 1;
        if (!s.batches.empty() || (o.fixed_iters == 0 && s.spent + pred > budget)) {
          s.stopped = true;
          continue;
        }
        if (o.fixed_iters == 0) iters = std::max(1L, static_cast<long>((budget - s.spent) / (pred > 0 ? pred : 1e-9)));
      }
      s.iters = iters;
      s.batches.push_back(batch(v, s, iters, comm));
    }
  for (std::size_t i = 0; i < variants.size(); ++i) {
    timed_variant& v = variants[i];
    state& s = states[i];
    v.result.iters = s.iters;
    v.result.batches = static_cast<int>(s.batches.size());
    v.result.elapsed = s.spent;
    // Not even one call fitted after calibration: the calibration batch is the figure.
    v.seconds = s.batches.empty() ? s.calib_per_call : peer_median(s.batches.data(), v.result.batches);
  }
}

}  // namespace ranklab::mpi_bench
