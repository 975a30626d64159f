// The measured cost model of `ranklab tune` (see cost_fit.hpp).
#include "tune/cost_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench/measure.hpp"
#include "bench/timing.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/datatype.hpp"

namespace ranklab::tools::tune {

namespace {

using bench::clock_type;
using bench::seconds_since;

constexpr std::size_t min_band_points = 3;

// Splits the sizes where one line fits poorly: at the split minimising the summed squared
// relative error of the two sides, if that at least halves it, recursively (depth 2: at
// most 4 bands of at least 3 sizes each).
void split_bands(std::span<const sample> pts, int depth, std::vector<cost_band>& out) {
  const line_fit whole = fit_line(pts);
  if (depth == 0 || pts.size() < 2 * min_band_points || whole.max_rel_error <= poor_fit) {
    out.push_back(cost_band{static_cast<std::uint64_t>(pts.back().bytes), whole.alpha, whole.beta});
    return;
  }
  std::size_t best = 0;
  double best_err = 0.5 * whole.sum_sq_rel;
  for (std::size_t i = min_band_points; i + min_band_points <= pts.size(); ++i) {
    const double err = fit_line(pts.first(i)).sum_sq_rel + fit_line(pts.subspan(i)).sum_sq_rel;
    if (err < best_err) best = i, best_err = err;
  }
  if (best == 0) {
    out.push_back(cost_band{static_cast<std::uint64_t>(pts.back().bytes), whole.alpha, whole.beta});
    return;
  }
  split_bands(pts.first(best), depth - 1, out);
  split_bands(pts.subspan(best), depth - 1, out);
}

template <class T>
double kernel_seconds_per_byte(const datatype& t, int batches, double batch_seconds) {
  constexpr std::size_t n = 8192;  // 32-64 KiB per operand: the reduction runs from cache
  std::vector<T> in(n, T(1)), inout(n, T(0));
  const reduce_kernel k = kernel_for(ops::sum, t);
  auto pass = [&](std::uint64_t reps) {
    for (std::uint64_t i = 0; i < reps; ++i) k(in.data(), inout.data(), n, nullptr);
  };
  pass(8);
  auto t0 = clock_type::now();
  pass(8);
  const auto reps =
      static_cast<std::uint64_t>(std::clamp(batch_seconds / std::max(seconds_since(t0) / 8, 1e-9), 1.0, 1e6));
  double per_byte = 1e30;  // the fastest batch, as for ping-pong
  for (int b = 0; b < batches; ++b) {
    t0 = clock_type::now();
    pass(reps);
    per_byte = std::min(per_byte, seconds_since(t0) / static_cast<double>(reps * n * sizeof(T)));
  }
  // Keep the result observable so the loop is not optimised away.
  if (inout[0] == T(-1)) std::fputs("", stderr);
  return per_byte;
}

}  // namespace

// The fastest batch also because a ping-pong stalls whenever either thread loses its core.
std::vector<sample> ping_pong(const std::vector<std::uint64_t>& sizes, int batches, double batch_seconds) {
  std::vector<std::vector<double>> times(sizes.size());
  const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
  run(
      2,
      [&](comm& cm) {
        std::vector<std::byte> buf(std::max<std::size_t>(largest, 1));
        const int peer = 1 - cm.rank();
        auto exchange = [&](std::size_t bytes, std::uint64_t k) {
          const std::span<std::byte> msg(buf.data(), bytes);
          for (std::uint64_t i = 0; i < k; ++i) {
            if (cm.rank() == 0) {
              cm.send(peer, msg);
              cm.recv(peer, msg);
            } else {
              cm.recv(peer, msg);
              cm.send(peer, msg);
            }
          }
        };
        // Sizes are interleaved batch by batch, so that a burst of load on the machine hits
        // one batch of every size rather than all batches of one size.
        std::vector<std::uint64_t> iters(sizes.size());
        for (std::size_t s = 0; s < sizes.size(); ++s) {
          exchange(sizes[s], 3);  // warm-up: mailboxes, caches, page faults
          cm.barrier();
          const auto t0 = clock_type::now();
          exchange(sizes[s], 4);
          std::uint64_t k = static_cast<std::uint64_t>(
              std::clamp(batch_seconds / std::max(seconds_since(t0) / 4, 1e-9), 1.0, 20000.0));
          cm.bcast(std::span(&k, 1), 0);
          iters[s] = k;
        }
        for (int b = 0; b < batches; ++b)
          for (std::size_t s = 0; s < sizes.size(); ++s) {
            cm.barrier();
            const auto t0 = clock_type::now();
            exchange(sizes[s], iters[s]);
            if (cm.rank() == 0) times[s].push_back(seconds_since(t0) / (2.0 * static_cast<double>(iters[s])));
          }
      },
      bench::measuring_team_options(std::chrono::milliseconds(10000)));
  std::vector<sample> out;
  for (std::size_t s = 0; s < sizes.size(); ++s)
    out.push_back({static_cast<double>(sizes[s]), *std::min_element(times[s].begin(), times[s].end())});
  return out;
}

line_fit fit_line(std::span<const sample> pts) {
  double s = 0, sx = 0, sxx = 0, sy = 0, sxy = 0;
  for (const sample& q : pts) {
    const double w = 1.0 / std::max(q.seconds * q.seconds, 1e-30);
    s += w, sx += w * q.bytes, sxx += w * q.bytes * q.bytes, sy += w * q.seconds, sxy += w * q.bytes * q.seconds;
  }
  line_fit f;
  const double det = s * sxx - sx * sx;
  f.beta = det > 0 ? (s * sxy - sx * sy) / det : 0;
  f.alpha = s > 0 ? (sy - f.beta * sx) / s : 0;
  if (f.alpha < 0) f.alpha = 0, f.beta = sxx > 0 ? sxy / sxx : 0;
  if (f.beta < 0) f.beta = 0, f.alpha = s > 0 ? sy / s : 0;
  for (const sample& q : pts) {
    const double rel = (f.alpha + f.beta * q.bytes - q.seconds) / std::max(q.seconds, 1e-30);
    f.max_rel_error = std::max(f.max_rel_error, std::abs(rel));
    f.sum_sq_rel += rel * rel;
  }
  return f;
}

std::vector<cost_band> fit_bands(std::span<const sample> pts, const line_fit& whole) {
  std::vector<cost_band> bands;
  if (whole.max_rel_error <= poor_fit) return bands;
  split_bands(pts, 2, bands);
  bands.back().max_bytes = unbounded_bytes;
  if (bands.size() == 1) bands.clear();  // no split helped: the global fit is the model
  return bands;
}

kernel_rates reduction_rates(int batches, double batch_seconds) {
  return {kernel_seconds_per_byte<std::int32_t>(datatype_of<std::int32_t>(), batches, batch_seconds),
          kernel_seconds_per_byte<float>(datatype_of<float>(), batches, batch_seconds),
          kernel_seconds_per_byte<double>(datatype_of<double>(), batches, batch_seconds)};
}

}  // namespace ranklab::tools::tune
