// The oneTBB baseline (see tbb_baseline.hpp): buffers laid out as for the ranks (check.hpp's
// test_data), one kernel per collective built from tbb::parallel_for.
#include "bench/tbb_baseline.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstring>
#include <functional>

#include "ranklab/check.hpp"

namespace ranklab::tools::bench {

namespace {

using u32 = std::uint32_t;  // int32 sums wrap: add as unsigned
constexpr std::size_t copy_chunk = 64 * 1024;
constexpr std::size_t reduce_grain = 4096;  // elements

struct chunk {
  std::byte* dst;
  const std::byte* src;
  std::size_t len;
};

void add_copy(std::vector<chunk>& v, std::byte* dst, const std::byte* src, std::size_t len) {
  for (std::size_t at = 0; at < len; at += copy_chunk)
    v.push_back({dst + at, src + at, std::min(copy_chunk, len - at)});
}

u32* words(std::vector<std::byte>& b) { return reinterpret_cast<u32*>(b.data()); }
const u32* words(const std::vector<std::byte>& b) { return reinterpret_cast<const u32*>(b.data()); }

// acc[0..n) = sum over ranks k < upto of in[k][at..at+n)
void sum_range(const test_data& d, int upto, std::size_t at, std::size_t n, u32* acc) {
  std::memcpy(acc, words(d.in[0]) + at, n * sizeof(u32));
  for (int k = 1; k < upto; ++k) {
    const u32* x = words(d.in[static_cast<std::size_t>(k)]) + at;
    for (std::size_t i = 0; i < n; ++i) acc[i] += x[i];
  }
}

// The kernel for c on d's buffers; empty for collectives without a counterpart.
std::function<void()> make_kernel(const call& c, test_data& d) {
  const coll_args& a = c.args;
  const int p = a.p;
  const auto P = static_cast<std::size_t>(p);
  const std::size_t es = c.type.size;
  const int root = a.root;
  using range = tbb::blocked_range<std::size_t>;
  switch (a.coll) {
    case collective::barrier:
      return {};
    case collective::reduce:
    case collective::allreduce: {
      const std::size_t n = a.count;
      const bool all = a.coll == collective::allreduce;
      const std::size_t dest = all ? 0 : static_cast<std::size_t>(root);
      return [&d, n, p, all, dest] {
        tbb::parallel_for(range(0, n, reduce_grain), [&](const range& rg) {
          u32* acc = words(d.out[dest]) + rg.begin();
          sum_range(d, p, rg.begin(), rg.size(), acc);
          if (all)
            for (int r = 1; r < p; ++r)
              std::memcpy(words(d.out[static_cast<std::size_t>(r)]) + rg.begin(), acc, rg.size() * sizeof(u32));
        });
      };
    }
    case collective::scan:
    case collective::exscan: {
      const std::size_t n = a.count;
      const int shift = a.coll == collective::exscan ? 1 : 0;  // exscan: out[r] = in[0] + ... + in[r-1]
      if (p <= shift) return [] {};                            // exscan on one rank: nothing to compute
      return [&d, n, p, shift] {
        tbb::parallel_for(range(0, n, reduce_grain), [&](const range& rg) {
          const std::size_t b = rg.begin(), len = rg.size();
          std::memcpy(words(d.out[static_cast<std::size_t>(shift)]) + b, words(d.in[0]) + b, len * sizeof(u32));
          for (int r = 1 + shift; r < p; ++r) {
            u32* o = words(d.out[static_cast<std::size_t>(r)]) + b;
            const u32* prev = words(d.out[static_cast<std::size_t>(r - 1)]) + b;
            const u32* x = words(d.in[static_cast<std::size_t>(r - shift)]) + b;
            for (std::size_t i = 0; i < len; ++i) o[i] = prev[i] + x[i];
          }
        });
      };
    }
    case collective::reduce_scatter:
    case collective::reduce_scatter_block: {
      std::vector<std::size_t> off(P + 1, 0);
      for (std::size_t r = 0; r < P; ++r) off[r + 1] = off[r] + block_count(a, static_cast<int>(r));
      const std::size_t total = off[P];
      return [&d, off, total, p, P] {
        tbb::parallel_for(range(0, total, reduce_grain), [&](const range& rg) {
          for (std::size_t r = 0; r < P; ++r) {
            const std::size_t lo = std::max(rg.begin(), off[r]), hi = std::min(rg.end(), off[r + 1]);
            if (lo < hi) sum_range(d, p, lo, hi - lo, words(d.out[r]) + (lo - off[r]));
          }
        });
      };
    }
    default:
      break;
  }
  // Copy collectives: a list of chunks, copied in parallel.
  std::vector<chunk> chunks;
  auto out = [&](std::size_t r) { return d.out[r].data(); };
  auto in = [&](std::size_t r) { return static_cast<const std::byte*>(d.in[r].data()); };
  const auto R = static_cast<std::size_t>(root);
  switch (a.coll) {
    case collective::bcast:
      for (std::size_t r = 0; r < P; ++r)
        if (r != R) add_copy(chunks, out(r), out(R), a.count * es);
      break;
    case collective::allgather:
    case collective::allgatherv:
    case collective::gather:
    case collective::gatherv: {
      const bool all = a.coll == collective::allgather || a.coll == collective::allgatherv;
      for (std::size_t r = 0; r < P; ++r) {
        if (!all && r != R) continue;
        for (int j = 0; j < p; ++j)
          add_copy(chunks, out(r) + block_offset(a, j) * es, in(static_cast<std::size_t>(j)), block_count(a, j) * es);
      }
      break;
    }
    case collective::scatter:
    case collective::scatterv:
      for (std::size_t r = 0; r < P; ++r)
        add_copy(chunks, out(r), in(R) + block_offset(a, static_cast<int>(r)) * es,
                 block_count(a, static_cast<int>(r)) * es);
      break;
    case collective::alltoall:
      for (std::size_t r = 0; r < P; ++r)
        for (std::size_t j = 0; j < P; ++j)
          add_copy(chunks, out(r) + j * a.count * es, in(j) + r * a.count * es, a.count * es);
      break;
    case collective::alltoallv:
      for (std::size_t r = 0; r < P; ++r) {
        std::uint64_t at = 0;
        for (std::size_t j = 0; j < P; ++j) {
          std::uint64_t from = 0;  // where j's data for r starts in j's input
          for (std::size_t k = 0; k < r; ++k) from += a.counts[j * P + k];
          const std::uint64_t n = a.counts[j * P + r];
          add_copy(chunks, out(r) + at * es, in(j) + from * es, n * es);
          at += n;
        }
      }
      break;
    default:
      return {};
  }
  return [chunks = std::move(chunks)] {
    tbb::parallel_for(range(0, chunks.size()), [&](const range& rg) {
      for (std::size_t i = rg.begin(); i < rg.end(); ++i) std::memcpy(chunks[i].dst, chunks[i].src, chunks[i].len);
    });
  };
}

}  // namespace

std::optional<impl_result> measure_tbb(const call& c, const timing_options& o, bool check) {
  validate(c.args);
  // Buffers as the ranks have them; the reference only when checking.
  test_data d = bench_data(c, check);
  const std::function<void()> kernel = make_kernel(c, d);
  if (!kernel) return std::nullopt;
  impl_result res;
  res.checked = check;
  kernel();
  if (check) {
    res.difference = compare(c, d);
    res.verified = res.difference.empty();
    if (!res.verified) return res;
  }
  d.expected.clear();
  d.expected.shrink_to_fit();
  auto time_batch = [&](std::int64_t iters) {
    const auto t0 = clock_type::now();
    for (std::int64_t i = 0; i < iters; ++i) kernel();
    return seconds_since(t0) / static_cast<double>(iters);
  };
  res.m = measure_batches(time_batch, o);
  res.timed = true;
  return res;
}

}  // namespace ranklab::tools::bench
