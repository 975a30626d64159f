// Broadcast, shared-memory direct (outside the one-ported model; the fence protocol is in
// direct/direct.hpp). Between two fences every non-root copies the root's buffer straight
// into its own, except the first 1/p of it, which the root, otherwise idle, pushes into
// every non-root: each of the p ranks then copies about (p-1)/p m, so at p = 2 both cores
// share the one copy. The root's buffer is only read; a non-root's buffer is written in
// disjoint parts, by itself and by the root, so the withdrawing fence also keeps every
// non-root in the call while the root still writes into it.
// Rounds: 2 fences. Cost: 2 F + beta (p-1)/p m.
#include "direct/direct.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1 || a.count == 0) return s;
  const std::uint64_t pushed = a.count / static_cast<std::uint64_t>(a.p);  // the root's share
  const region head{out_buffer, 0, pushed};
  const region rest{out_buffer, pushed, a.count - pushed};
  s.fence();  // publish
  if (rank == a.root) {
    if (pushed > 0)
      for (int k = 0; k < a.p; ++k)
        if (k != a.root) s.push(k, head, head);
  } else {
    s.remote(a.root, rest, rest);
  }
  s.fence();  // withdraw
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  return detail::fences_cost(2, a.p, m) + m.beta * bytes * (a.p - 1) / a.p;
}

const algorithm info{
    .name = "direct",
    .coll = collective::bcast,
    .summary = "shared memory: the non-roots copy from the root's buffer, the root pushes the first 1/p into each",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
