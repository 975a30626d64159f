// The calls of `ranklab bench` (see workload.hpp).
#include "bench/workload.hpp"

#include <algorithm>
#include <vector>

namespace ranklab::tools::bench {

bool uses_int32(collective c) { return is_reduction(c); }

std::uint64_t reported_bytes(collective c, std::uint64_t requested) {
  if (c == collective::barrier) return 0;
  if (uses_int32(c)) return std::max<std::uint64_t>(requested / 4, 1) * 4;
  return requested;
}

std::uint64_t result_bytes(collective c, int p, std::uint64_t bytes) {
  const auto P = static_cast<std::uint64_t>(p);
  switch (c) {
    case collective::allgather:
    case collective::allgatherv:
    case collective::gather:
    case collective::gatherv:
    case collective::alltoall:
    case collective::alltoallv:
      return P * bytes;
    case collective::barrier:
      return 0;
    default:
      return bytes;
  }
}

std::vector<memcpy_baseline> memcpy_baselines(collective c, int p, std::uint64_t bytes) {
  if (c == collective::barrier) return {};
  const std::uint64_t copy = result_bytes(c, p, bytes);
  return {{"memcpy", copy, 1}, {"memcpy2", copy, 2}};
}

call make_regular_call(collective c, int p, std::uint64_t count, const datatype& type, std::string_view algo_name,
                       int root) {
  const algo choice{algo_name};
  if (!has_vector_counts(c)) return make_call(c, p, count, root, type, ops::sum, choice);
  const auto P = static_cast<std::size_t>(p);
  const std::vector<std::uint64_t> counts(c == collective::alltoallv ? P * P : P, count);
  return make_vcall(c, p, counts, {}, root, type, ops::sum, choice);
}

call make_bench_call(collective c, int p, std::uint64_t bytes, std::string_view algo_name) {
  const datatype type = uses_int32(c) ? datatype_of<std::int32_t>() : datatype_of<std::uint8_t>();
  const std::uint64_t n = c == collective::barrier ? 0 : reported_bytes(c, bytes) / type.size;
  return make_regular_call(c, p, n, type, algo_name);
}

const std::vector<collective>& mpi_bench_collectives() {
  static const std::vector<collective> colls{
      collective::bcast,      collective::reduce,         collective::allreduce,           collective::allgather,
      collective::allgatherv, collective::reduce_scatter, collective::reduce_scatter_block};
  return colls;
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
