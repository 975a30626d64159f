// Scatter, shared-memory direct (outside the one-ported model): every non-root copies its
// block straight from the root's send buffer into its receive buffer, between two fences,
// all at once; the root copies its own block locally first. Any root.
// Fences, as in allreduce_direct.cpp: the first keeps anyone from reading the root's send
// buffer before the root has entered the call (buffers published, input final); the last
// keeps the root in the call until everyone has read its block. Between them only receive
// buffers are written, each by its owner, and nobody reads them: two fences are the
// minimum. In place is not supported.
// Rounds: 2 (fences, schedule::fence; none when p = 1 or m = 0).
// Cost: 2 fences (about (1 + (p-1)/4) alpha each, detail::fence_alphas) + beta m, m = bytes
// of a block (all ranks copy in parallel).
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const std::uint64_t n = a.count;
  const region mine{in_buffer, block_offset(a, rank), n};
  const region out{out_buffer, 0, n};
  if (rank == a.root) s.copy(mine, out);
  if (a.p == 1 || n == 0) return s;
  s.fence();  // the root's send buffer is published and final
  if (rank != a.root) s.remote(a.root, mine, out);
  s.fence();  // the root does not return while its send buffer is still read
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return 2 * detail::fence_alphas(a.p) * m.alpha + m.beta * static_cast<double>(a.count * elem);
}

const algorithm info{
    .name = "direct",
    .coll = collective::scatter,
    .summary = "shared memory (outside the one-ported model): every rank copies its block straight from the "
               "root's send buffer between two fences; cost 2 fences + beta m",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
