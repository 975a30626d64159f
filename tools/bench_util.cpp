// Pure helpers of `ranklab bench` (see bench_util.hpp).
#include "bench_util.hpp"

#include <algorithm>

namespace ranklab::tools::bench {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

batch_stats summarize(const std::vector<double>& v) {
  if (v.empty()) return {};
  return {median(v), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

bool uses_int32(collective c) { return is_reduction(c); }

std::uint64_t reported_bytes(collective c, std::uint64_t requested) {
  if (c == collective::barrier) return 0;
  if (uses_int32(c)) return std::max<std::uint64_t>(requested / 4, 1) * 4;
  return requested;
}

std::uint64_t result_bytes(collective c, int p, std::uint64_t bytes) {
  const auto P = static_cast<std::uint64_t>(p);
  switch (c) {
    case collective::allgather: case collective::allgatherv: case collective::gather:
    case collective::gatherv: case collective::alltoall: case collective::alltoallv:
      return P * bytes;
    case collective::barrier: return 0;
    default: return bytes;
  }
}

call make_bench_call(collective c, int p, std::uint64_t bytes, std::string_view algo) {
  call cl;
  cl.args.coll = c;
  cl.args.p = p;
  cl.args.root = 0;
  cl.choice.name = algo;
  cl.reduction = ops::sum;
  cl.type = uses_int32(c) ? datatype_of<std::int32_t>() : datatype_of<std::uint8_t>();
  const std::uint64_t n = c == collective::barrier ? 0 : reported_bytes(c, bytes) / cl.type.size;
  const auto P = static_cast<std::size_t>(p);
  switch (c) {
    case collective::allgatherv: case collective::gatherv: case collective::scatterv:
    case collective::reduce_scatter:
      cl.args.counts.assign(P, n);
      break;
    case collective::alltoallv: cl.args.counts.assign(P * P, n); break;
    default: cl.args.count = n; break;
  }
  cl.args.elem_size = cl.type.size;
  cl.args.commutative = true;
  return cl;
}

std::uint64_t buffer_bytes(const call& c) {
  std::uint64_t total = 0;
  for (int r = 0; r < c.args.p; ++r) {
    const buffer_extent e = buffer_extents(c.args, r);
    total += (e.in + e.out) * c.type.size;
  }
  return total;
}

}  // namespace ranklab::tools::bench
