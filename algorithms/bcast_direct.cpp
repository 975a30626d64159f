// Broadcast, shared-memory direct (outside the one-ported model). After a fence every
// non-root copies the root's buffer straight into its own, except the first 1/p of it,
// which the root, otherwise idle, pushes into every non-root: each of the p ranks then
// copies about (p-1)/p m, so at p = 2 both cores share the one copy. A second fence keeps
// the root from returning while others still read, and every non-root in the call while
// the root still writes into it. Between the fences nobody writes what anyone reads: the
// root's buffer is only read; a non-root's buffer is written in disjoint parts, by itself
// and by the root.
// Rounds: 2 (fences, schedule::fence). Cost: 2 fences (about (1 + (p-1)/4) alpha each)
// + beta (p-1)/p m.
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  if (a.p == 1 || a.count == 0) return s;
  const std::uint64_t pushed = a.count / static_cast<std::uint64_t>(a.p);  // the root's share
  const region head{out_buffer, 0, pushed};
  const region rest{out_buffer, pushed, a.count - pushed};
  s.fence();  // every rank has entered: the root's buffer is final, the others' published
  if (rank == a.root) {
    if (pushed > 0)
      for (int k = 0; k < a.p; ++k)
        if (k != a.root) s.push(k, head, head);
  } else {
    s.remote(a.root, rest, rest);
  }
  s.fence();  // nobody reads or writes another rank's buffer any more
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  return 2 * detail::fence_alphas(a.p) * m.alpha + m.beta * bytes * (a.p - 1) / a.p;
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
