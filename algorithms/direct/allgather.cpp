// Allgather(v), shared-memory direct (outside the one-ported model; the fence protocol is in
// direct/direct.hpp): between two fences every rank copies every other rank's non-empty
// block straight from that rank's send buffer to its place (block_offset) in its own
// receive buffer. In place (in == out) is not defined for allgather(v) in ranklab.
// Rounds: 2 fences. Cost: 2 F + beta (N - min_r N_r), N = bytes of the gathered result,
// N_r = rank r's block (the rank with the smallest block copies most): 2 F + (p-1) beta m
// for equal blocks of m bytes.
#include <algorithm>

#include "direct/direct.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  auto block = [&](buffer_id b, int j) {
    return region{b, b == in_buffer ? 0 : block_offset(a, j), block_count(a, j)};
  };
  detail::copy_own(s, a, block(in_buffer, rank), block(out_buffer, rank));
  if (a.p == 1 || total_count(a) == 0) return s;
  s.fence();  // publish
  detail::for_other_ranks(rank, a.p, [&](int j) {
    if (block_count(a, j) > 0) s.remote(j, block(in_buffer, j), block(out_buffer, j));
  });
  s.fence();  // withdraw
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  std::uint64_t smallest = block_count(a, 0);
  for (int j = 1; j < a.p; ++j) smallest = std::min(smallest, block_count(a, j));
  const double copied = static_cast<double>((total_count(a) - smallest) * elem);
  return detail::fences_cost(2, a.p, m) + m.beta * copied;
}

const algorithm info{
    .name = "direct",
    .serves = {collective::allgather, collective::allgatherv},
    .summary =
        "shared memory (outside the one-ported model): every rank copies every block straight from its "
        "owner's send buffer between two fences; cost 2 fences + beta (N - smallest block), "
        "(p-1) beta m for equal blocks",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
