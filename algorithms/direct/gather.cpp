// Gather(v), shared-memory direct (outside the one-ported model; the fence protocol is in
// direct/direct.hpp): between two fences every other rank writes its non-empty block
// straight from its send buffer to its place (block_offset) in the root's receive buffer
// (schedule::push), while the root copies its own, all between the same two fences. The
// copies run in parallel: the root
// copying every block itself (as this algorithm did first) took a single core's time for
// all of them (1 MiB blocks at p = 2: 140 us against 34 for OpenMP's threads each storing
// theirs). The pushers write disjoint parts of the root's buffer, which nobody reads before
// the second fence. Any root. In place is not supported.
// Rounds: 2 fences. Cost: 2 F + beta max_j m_j (the largest block; every rank copies its
// own): 2 F + beta m for equal blocks of m bytes.
#include <algorithm>

#include "direct/direct.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  const bool root = rank == a.root;
  auto in = [&](int j) { return region{in_buffer, 0, block_count(a, j)}; };
  auto into = [&](int j) { return region{out_buffer, block_offset(a, j), block_count(a, j)}; };
  if (total_count(a) == block_count(a, a.root)) {  // nobody pushes (also p = 1)
    if (root) detail::copy_own(s, a, in(rank), into(rank));
    return s;
  }
  s.fence();  // publish
  // The root copies its own block while the others push theirs, not before the fence, where
  // they would wait for it (p = 2: 64 KiB blocks 3.0 -> 2.0 us, 1 MiB 64 -> 36 us).
  if (root)
    detail::copy_own(s, a, in(rank), into(rank));
  else if (block_count(a, rank) > 0)
    s.push(a.root, in(rank), into(rank));
  s.fence();  // withdraw
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  std::uint64_t largest = 0;
  for (int j = 0; j < a.p; ++j) largest = std::max(largest, block_count(a, j));
  return detail::fences_cost(2, a.p, m) + m.beta * static_cast<double>(largest * elem);
}

const algorithm info{
    .name = "direct",
    .serves = {collective::gather, collective::gatherv},
    .summary =
        "shared memory (outside the one-ported model): between two fences every rank writes its block "
        "straight into the root's receive buffer, in parallel; cost 2 fences + beta (largest block)",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
