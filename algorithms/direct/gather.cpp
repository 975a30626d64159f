// Gather(v), shared-memory direct (outside the one-ported model; the fence protocol is in
// direct/direct.hpp): between two fences the root copies every other rank's non-empty block
// straight from that rank's send buffer to its place (block_offset) in its receive buffer.
// Any root. Only the root reads, but a fence is one round either way. In place is not
// supported.
// Rounds: 2 fences. Cost: 2 F + beta (N - N_root), N = bytes of the gathered result, N_root
// = the root's block (the root copies alone): 2 F + (p-1) beta m for equal blocks of m bytes.
#include "direct/direct.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  const bool root = rank == a.root;
  auto in = [&](int j) { return region{in_buffer, 0, block_count(a, j)}; };
  auto into = [&](int j) { return region{out_buffer, block_offset(a, j), block_count(a, j)}; };
  if (root) detail::copy_own(s, a, in(rank), into(rank));
  if (total_count(a) == block_count(a, a.root)) return s;  // nothing to read (also p = 1)
  s.fence();                                               // publish
  if (root)
    detail::for_other_ranks(rank, a.p, [&](int j) {
      if (block_count(a, j) > 0) s.remote(j, in(j), into(j));
    });
  s.fence();  // withdraw
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double copied = static_cast<double>((total_count(a) - block_count(a, a.root)) * elem);
  return detail::fences_cost(2, a.p, m) + m.beta * copied;
}

const algorithm info{
    .name = "direct",
    .serves = {collective::gather, collective::gatherv},
    .summary =
        "shared memory (outside the one-ported model): the root copies every block straight from its "
        "owner's send buffer between two fences; cost 2 fences + beta (N - root's block), "
        "(p-1) beta m for equal blocks",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
