// Gather, shared-memory direct (outside the one-ported model): the root copies every other
// rank's block straight from that rank's send buffer into its receive buffer, between two
// fences; its own block it copies locally first. Any root.
// Fences, as in allreduce_direct.cpp: the first keeps the root from reading a send buffer
// before its owner has entered the call (buffers published, input final); the last keeps
// every rank in the call until the root has read its send buffer. Between them only the
// root's receive buffer is written, and nobody else reads it: two fences are the minimum.
// (Only the root reads, but a fence is one round either way.) In place is not supported.
// Rounds: 2 (fences, schedule::fence; none when p = 1 or m = 0).
// Cost: 2 fences (about (1 + (p-1)/4) alpha each, detail::fence_alphas) + (p-1) beta m, m =
// bytes of a block (the root copies alone).
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const std::uint64_t n = a.count;
  const bool root = rank == a.root;
  auto into = [&](int j) { return region{out_buffer, block_offset(a, j), n}; };
  const region in{in_buffer, 0, n};
  if (root) s.copy(in, into(rank));
  if (a.p == 1 || n == 0) return s;
  s.fence();  // every send buffer is published and final
  if (root)
    for (int k = 1; k < a.p; ++k) {
      const int j = (rank + k) % a.p;
      s.remote(j, in, into(j));
    }
  s.fence();  // nobody returns while the root still reads its send buffer
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double block = static_cast<double>(a.count * elem);
  return 2 * detail::fence_alphas(a.p) * m.alpha + m.beta * (a.p - 1) * block;
}

const algorithm info{
    .name = "direct",
    .coll = collective::gather,
    .summary = "shared memory (outside the one-ported model): the root copies every block straight from its "
               "owner's send buffer between two fences; cost 2 fences + (p-1) beta m",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
