// Gatherv (counts[j] elements from rank j, placed at block_offset j of the root's receive
// buffer), shared-memory direct (outside the one-ported model): the root copies every other
// rank's block straight from that rank's send buffer, between two fences; its own block it
// copies locally first. Any root; empty blocks are not read.
// Fences, as in allreduce_direct.cpp: the first keeps the root from reading a send buffer
// before its owner has entered the call (buffers published, input final); the last keeps
// every rank in the call until the root has read its send buffer. Between them only the
// root's receive buffer is written, and nobody else reads it: two fences are the minimum,
// none when every other rank's block is empty. In place is not supported.
// Rounds: 2 (fences, schedule::fence).
// Cost: 2 fences (about (1 + (p-1)/4) alpha each, detail::fence_alphas) + beta (N -
// N_root), N = bytes of the gathered result, N_root = the root's block (the root copies
// alone).
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const bool root = rank == a.root;
  auto in = [&](int j) { return region{in_buffer, 0, block_count(a, j)}; };
  auto into = [&](int j) { return region{out_buffer, block_offset(a, j), block_count(a, j)}; };
  if (root && block_count(a, rank) > 0) s.copy(in(rank), into(rank));
  if (total_count(a) == block_count(a, a.root)) return s;  // nothing to read (also p = 1)
  s.fence();  // every send buffer is published and final
  if (root)
    for (int k = 1; k < a.p; ++k) {
      const int j = (rank + k) % a.p;
      if (block_count(a, j) > 0) s.remote(j, in(j), into(j));
    }
  s.fence();  // nobody returns while the root still reads its send buffer
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double copied = static_cast<double>((total_count(a) - block_count(a, a.root)) * elem);
  return 2 * detail::fence_alphas(a.p) * m.alpha + m.beta * copied;
}

const algorithm info{
    .name = "direct",
    .coll = collective::gatherv,
    .summary = "shared memory (outside the one-ported model): the root copies every block straight from its "
               "owner's send buffer between two fences; cost 2 fences + beta (N - root's block)",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
