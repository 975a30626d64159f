// The measured cost model of `ranklab tune` (see cost_fit.hpp).
#include "tune/cost_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>

#include "bench/measure.hpp"
#include "bench/timing.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/datatype.hpp"
#include "ranklab/team.hpp"

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

namespace {

// Ping-pong (or the reducing exchange) between ranks 0 and 1 of `cm`, every size, the
// fastest batch's one-way time into times[size]. Sizes are interleaved batch by batch, so
// that a burst of load on the machine hits one batch of every size rather than all batches
// of one size. The fastest batch also because a ping-pong stalls whenever either thread
// loses its core.
void exchange_sizes(comm& cm, const std::vector<std::uint64_t>& sizes, int batches, double batch_seconds, bool reduce,
                    std::vector<std::vector<double>>& times) {
  const std::size_t largest = std::max<std::size_t>(*std::max_element(sizes.begin(), sizes.end()), 1);
  std::vector<std::byte> buf(largest);
  std::vector<double> acc(reduce ? largest / sizeof(double) + 1 : 0, 0.0);
  const reduce_kernel k = reduce ? kernel_for(ops::sum, datatype_of<double>()) : reduce_kernel{};
  const int peer = 1 - cm.rank();
  auto exchange = [&](std::size_t bytes, std::uint64_t n) {
    const std::span<std::byte> msg(buf.data(), bytes);
    const std::span<const std::byte> own(reinterpret_cast<const std::byte*>(acc.data()), reduce ? bytes : 0);
    const std::size_t elements = bytes / sizeof(double);
    auto take = [&] {  // what came in, added into this side's vector
      if (reduce) k(buf.data(), acc.data(), elements, nullptr);
    };
    for (std::uint64_t i = 0; i < n; ++i) {
      if (cm.rank() == 0) {
        reduce ? cm.send(peer, own) : cm.send(peer, std::span<const std::byte>(msg));
        cm.recv(peer, msg);
        take();
      } else {
        cm.recv(peer, msg);
        take();
        reduce ? cm.send(peer, own) : cm.send(peer, std::span<const std::byte>(msg));
      }
    }
  };
  std::vector<std::uint64_t> iters(sizes.size());
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    exchange(sizes[s], 3);  // warm-up: mailboxes, caches, page faults
    cm.barrier();
    const auto t0 = clock_type::now();
    exchange(sizes[s], 4);
    std::uint64_t n = static_cast<std::uint64_t>(
        std::clamp(batch_seconds / std::max(seconds_since(t0) / 4, 1e-9), 1.0, 20000.0));
    cm.bcast(std::span(&n, 1), 0);
    iters[s] = n;
  }
  for (int b = 0; b < batches; ++b)
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      cm.barrier();
      const auto t0 = clock_type::now();
      exchange(sizes[s], iters[s]);
      if (cm.rank() == 0) times[s].push_back(seconds_since(t0) / (2.0 * static_cast<double>(iters[s])));
    }
  // Keep the sums observable so the reductions are not optimised away.
  if (reduce && acc[0] == -1.0) std::fputs("", stderr);
}

std::vector<sample> fastest(const std::vector<std::uint64_t>& sizes, const std::vector<std::vector<double>>& times) {
  std::vector<sample> out;
  for (std::size_t s = 0; s < sizes.size(); ++s)
    out.push_back({static_cast<double>(sizes[s]), *std::min_element(times[s].begin(), times[s].end())});
  return out;
}

}  // namespace

std::vector<sample> ping_pong(const std::vector<std::uint64_t>& sizes, int batches, double batch_seconds) {
  std::vector<std::vector<double>> times(sizes.size());
  run(
      2, [&](comm& cm) { exchange_sizes(cm, sizes, batches, batch_seconds, false, times); },
      bench::measuring_team_options(std::chrono::milliseconds(10000)));
  return fastest(sizes, times);
}

pair_timing time_pair(const std::vector<std::uint64_t>& sizes, int batches, double batch_seconds,
                      const pair_exchange& how) {
  std::vector<std::uint64_t> whole = sizes;
  if (how.reduce)
    for (std::uint64_t& b : whole) b = std::max<std::uint64_t>(sizeof(double), b / sizeof(double) * sizeof(double));
  std::vector<std::vector<double>> times(whole.size());
  team_options o = bench::measuring_team_options(std::chrono::milliseconds(10000));
  // Rank r on core r: the pair's ranks are on their cores, the others leave at once.
  o.binding = binding_policy::compact;
  o.execution = execution_mode::threads;
  o.topology.clear();
  const int p = std::max(how.core_a, how.core_b) + 1;
  team t(p, o);
  run(t, [&](comm& cm) {
    const std::array<int, 2> pair{how.core_a, how.core_b};
    if (cm.rank() != pair[0] && cm.rank() != pair[1]) return;
    std::optional<comm> two = cm.create(pair);
    exchange_sizes(*two, whole, batches, batch_seconds, how.reduce, times);
  });
  pair_timing out;
  out.samples = fastest(whole, times);
  const std::vector<binding_info> where = t.bindings();
  out.bound = where[static_cast<std::size_t>(how.core_a)].core == how.core_a &&
              where[static_cast<std::size_t>(how.core_b)].core == how.core_b;
  return out;
}

double reduction_gamma(std::span<const sample> plain, std::span<const sample> reducing, double min_bytes) {
  std::vector<double> per_byte;
  for (const sample& r : reducing)
    for (const sample& q : plain)
      if (q.bytes == r.bytes && r.bytes >= min_bytes && r.seconds > q.seconds)
        per_byte.push_back((r.seconds - q.seconds) / r.bytes);
  if (per_byte.empty()) return 0;
  return bench::median(per_byte);
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
