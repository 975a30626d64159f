// The OpenMP baseline (see omp_baseline.hpp): buffers laid out as for the ranks (check.hpp's
// test_data), one kernel per collective run by every thread of one parallel region.
#include "bench/omp_baseline.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "bench/lockstep.hpp"
#include "ranklab/check.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ranklab::tools::bench {

std::string openmp_environment() {
  std::string out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view v(*e);
    if (v.starts_with("OMP_") || v.starts_with("GOMP_") || v.starts_with("KMP_")) {
      if (!out.empty()) out += ' ';
      out += v;
    }
  }
  return out.empty() ? "none (the runtime's defaults)" : out;
}

#ifndef _OPENMP

bool openmp_available() { return false; }

std::string openmp_runtime() { return "not built (no OpenMP found at configure time)"; }

std::optional<impl_result> measure_openmp(const call&, const timing_options&, bool) { return std::nullopt; }

#else

bool openmp_available() { return true; }

std::string openmp_runtime() {
  const long v = _OPENMP;
  const char* spec = v >= 202111 ? "5.2" : v >= 202011 ? "5.1" : v >= 201811 ? "5.0" : v >= 201511 ? "4.5" : "< 4.5";
#if defined(__clang__)
  const std::string rt = fmt::format("libomp (clang {}.{})", __clang_major__, __clang_minor__);
#elif defined(__GNUC__)
  const std::string rt = fmt::format("libgomp (GCC {}.{}.{})", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  const std::string rt = "unknown runtime";
#endif
  return fmt::format("{}, OpenMP {} (_OPENMP {})", rt, spec, v);
}

namespace {

using u32 = std::uint32_t;  // int32 sums wrap: add as unsigned
constexpr std::size_t line = 64;

std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

void copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

u32* words(std::byte* b) { return reinterpret_cast<u32*>(b); }
const u32* words(const std::byte* b) { return reinterpret_cast<const u32*>(b); }

// Thread r's slice [lo, hi) of n int32: 1/p each, in whole cache lines so that no two
// threads write the same line.
struct range {
  std::size_t lo = 0, hi = 0;
};
range slice(std::size_t n, int p, int r) {
  const std::size_t chunk = round_up((n + static_cast<std::size_t>(p) - 1) / static_cast<std::size_t>(p), line / 4);
  const std::size_t lo = std::min(n, chunk * static_cast<std::size_t>(r));
  return {lo, std::min(n, lo + chunk)};
}

void omp_sync() {
#pragma omp barrier
}

struct alignas(64) padded_parity {
  unsigned value = 0;
};

// One call of the collective as every thread of the team performs it (see the header).
class omp_kernel {
 public:
  omp_kernel(const call& c, test_data& d)
      : a_(c.args), d_(d), es_(c.type.size), p_(c.args.p), root_(c.args.root), n_(c.args.count) {
    const auto P = static_cast<std::size_t>(p_);
    if (is_reduction(a_.coll) && es_ != sizeof(u32))
      throw std::invalid_argument("the OpenMP baseline sums int32 (the bench's reductions)");
    if (a_.coll == collective::alltoallv) {  // where r's block from j sits in j's input and in r's output
      send_from_.assign(P * P, 0);
      recv_at_.assign(P * P, 0);
      for (std::size_t j = 0; j < P; ++j)
        for (std::size_t r = 1; r < P; ++r)
          send_from_[j * P + r] = send_from_[j * P + r - 1] + a_.counts[j * P + r - 1];
      for (std::size_t r = 0; r < P; ++r)
        for (std::size_t j = 1; j < P; ++j) recv_at_[r * P + j] = recv_at_[r * P + j - 1] + a_.counts[(j - 1) * P + r];
    }
    std::size_t most = 0;
    for (int k = 0; k < p_; ++k)
      if (contributes(k)) most = std::max(most, contribution_bytes(k));
    posted_ = a_.coll != collective::barrier && most <= openmp_posted_max_bytes;
    parity_.resize(P);
    if (posted_) {
      stride_ = round_up(std::max<std::size_t>(most, 1), line);
      slots_.reset(static_cast<std::byte*>(std::aligned_alloc(line, 2 * P * stride_)));
      if (!slots_) throw std::bad_alloc();
      std::memset(slots_.get(), 0, 2 * P * stride_);
    }
  }

  bool posted() const { return posted_; }

  void operator()(int r) {
    if (a_.coll == collective::barrier) {
      omp_sync();
      return;
    }
    if (posted_) {
      unsigned& parity = parity_[static_cast<std::size_t>(r)].value;
      if (contributes(r)) copy(slot(parity, r), contribution(r), contribution_bytes(r));
      omp_sync();
      work(r, parity);
      parity ^= 1u;
    } else {
      omp_sync();
      work(r, 0);
      omp_sync();
    }
  }

 private:
  struct freer {
    void operator()(std::byte* b) const { std::free(b); }
  };

  bool contributes(int k) const {
    switch (a_.coll) {
      case collective::barrier:
        return false;
      case collective::bcast:
      case collective::scatter:
      case collective::scatterv:
        return k == root_;
      default:
        return true;
    }
  }
  // What rank k brings to the call: its input; for bcast the root's buffer (its output).
  const std::byte* contribution(int k) const {
    return a_.coll == collective::bcast ? d_.out[static_cast<std::size_t>(k)].data()
                                        : d_.in[static_cast<std::size_t>(k)].data();
  }
  std::size_t contribution_bytes(int k) const {
    return a_.coll == collective::bcast ? n_ * es_ : d_.in[static_cast<std::size_t>(k)].size();
  }
  std::byte* slot(unsigned parity, int k) const {
    return slots_.get() + (parity * static_cast<std::size_t>(p_) + static_cast<std::size_t>(k)) * stride_;
  }
  std::byte* out(int k) const { return d_.out[static_cast<std::size_t>(k)].data(); }

  // dst[0..len) = sum over ranks k < upto of k's contribution [from, from + len), int32.
  template <class Src>
  void sum(u32* dst, const Src& src, int upto, std::size_t from, std::size_t len) const {
    if (len == 0) return;
    std::memcpy(dst, words(src(0)) + from, len * sizeof(u32));
    for (int k = 1; k < upto; ++k) {
      const u32* x = words(src(k)) + from;
      for (std::size_t i = 0; i < len; ++i) dst[i] += x[i];
    }
  }

  void work(int r, unsigned parity) {
    const bool posted = posted_;
    auto src = [&](int k) -> const std::byte* { return posted ? slot(parity, k) : contribution(k); };
    const std::size_t es = es_;
    switch (a_.coll) {
      case collective::barrier:
        return;
      case collective::bcast:
        if (r != root_) copy(out(r), src(root_), n_ * es);
        return;
      case collective::reduce:
      case collective::allreduce: {
        const bool all = a_.coll == collective::allreduce;
        if (posted) {
          if (all || r == root_) sum(words(out(r)), src, p_, 0, n_);
          return;
        }
        const range s = slice(n_, p_, r);
        const int dest = all ? r : root_;
        sum(words(out(dest)) + s.lo, src, p_, s.lo, s.hi - s.lo);
        if (all)
          for (int j = 0; j < p_; ++j)
            if (j != r) copy(words(out(j)) + s.lo, words(out(r)) + s.lo, (s.hi - s.lo) * sizeof(u32));
        return;
      }
      case collective::scan:
      case collective::exscan: {
        const int shift = a_.coll == collective::exscan ? 1 : 0;  // exscan: out[r] = in[0] + ... + in[r-1]
        if (posted) {
          if (const int upto = r + 1 - shift; upto > 0) sum(words(out(r)), src, upto, 0, n_);
          return;
        }
        if (p_ <= shift) return;  // exscan on one rank: nothing to compute
        const range s = slice(n_, p_, r);
        const std::size_t len = s.hi - s.lo;
        if (len == 0) return;
        copy(words(out(shift)) + s.lo, words(src(0)) + s.lo, len * sizeof(u32));
        for (int k = 1 + shift; k < p_; ++k) {
          u32* o = words(out(k)) + s.lo;
          const u32* prev = words(out(k - 1)) + s.lo;
          const u32* x = words(src(k - shift)) + s.lo;
          for (std::size_t i = 0; i < len; ++i) o[i] = prev[i] + x[i];
        }
        return;
      }
      case collective::reduce_scatter:
      case collective::reduce_scatter_block:
        sum(words(out(r)), src, p_, block_offset(a_, r), block_count(a_, r));
        return;
      case collective::allgather:
      case collective::allgatherv:
        for (int j = 0; j < p_; ++j) copy(out(r) + block_offset(a_, j) * es, src(j), block_count(a_, j) * es);
        return;
      case collective::gather:
      case collective::gatherv:
        if (!posted)
          copy(out(root_) + block_offset(a_, r) * es, src(r), block_count(a_, r) * es);
        else if (r == root_)
          for (int j = 0; j < p_; ++j) copy(out(r) + block_offset(a_, j) * es, src(j), block_count(a_, j) * es);
        return;
      case collective::scatter:
      case collective::scatterv:
        copy(out(r), src(root_) + block_offset(a_, r) * es, block_count(a_, r) * es);
        return;
      case collective::alltoall:
        for (int j = 0; j < p_; ++j) copy(out(r) + j * n_ * es, src(j) + r * n_ * es, n_ * es);
        return;
      case collective::alltoallv: {
        const auto P = static_cast<std::size_t>(p_), R = static_cast<std::size_t>(r);
        for (std::size_t j = 0; j < P; ++j)
          copy(out(r) + recv_at_[R * P + j] * es, src(static_cast<int>(j)) + send_from_[j * P + R] * es,
               a_.counts[j * P + R] * es);
        return;
      }
    }
  }

  const coll_args a_;
  test_data& d_;
  const std::size_t es_;
  const int p_, root_;
  const std::size_t n_;
  bool posted_ = false;
  std::size_t stride_ = 0;
  std::unique_ptr<std::byte, freer> slots_;  // [2][p] slots of stride_ bytes
  std::vector<padded_parity> parity_;        // each thread's current slot set
  std::vector<std::uint64_t> send_from_, recv_at_;
};

}  // namespace

std::optional<impl_result> measure_openmp(const call& c, const timing_options& o, bool check) {
  validate(c.args);
  const int p = c.args.p;
  test_data d = bench_data(c, check);
  omp_kernel kernel(c, d);
  impl_result res;
  res.checked = check;
  if (c.args.coll != collective::barrier)
    res.selected = kernel.posted() ? "posted slots, one barrier per call" : "in place, two barriers per call";
  std::vector<padded_double> per_thread(static_cast<std::size_t>(p));
  int team_size = 0;
  bool ok = true;
  std::string difference;
  // One region for the checked call, the warm-up and every batch: the team is made once.
#pragma omp parallel num_threads(p)
  {
#pragma omp single
    team_size = omp_get_num_threads();
    // (the single's implicit barrier: every thread sees team_size)
    if (team_size == p) {
      const int r = omp_get_thread_num();
      kernel(r);  // the checked call
#pragma omp barrier
      if (check) {
#pragma omp single
        {
          try {
            difference = compare(c, d);
          } catch (const std::exception& e) {
            difference = e.what();
          }
          ok = difference.empty();
        }
      }
      if (ok) {
        auto run = [&](std::int64_t iters) {
          const auto t0 = clock_type::now();
          for (std::int64_t i = 0; i < iters; ++i) kernel(r);
          return seconds_since(t0);
        };
        measurement m = measure_in_lockstep(static_cast<std::size_t>(r), per_thread, omp_sync, run, o);
        if (r == 0) res.m = std::move(m);
      }
    }
  }
  if (team_size != p)
    throw std::runtime_error(
        fmt::format("OpenMP made a team of {} threads, not {} (OMP_THREAD_LIMIT, OMP_DYNAMIC?)", team_size, p));
  if (check && ok) {
    // Back-to-back calls must leave the same result: a kernel that raced with its own next
    // call would show here.
    difference = compare(c, d);
    if (!difference.empty()) difference = "after the timed calls: " + difference;
    ok = difference.empty();
  }
  res.verified = check && ok;
  res.difference = difference;
  res.timed = ok;
  return res;
}

#endif

}  // namespace ranklab::tools::bench
