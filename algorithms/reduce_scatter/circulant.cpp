// Reduce_scatter(_block), round-optimal on a circulant graph: the all-broadcast of
// J. L. Träff, "Optimal Broadcast Schedules in Logarithmic Time with Applications to
// Broadcast, All-Broadcast, Reduction and All-Reduction" run backwards with combining,
// i.e. p simultaneous reductions, rank j the root of its own block. Every partial block is
// sent and received once. Commutative operators only (combination follows the schedule);
// deterministic. See docs/algorithms.md, "reduce_scatter".
// Rounds: n - 1 + q, q = ceil(log2 p). Cost: (n - 1 + q)(alpha + (beta + gamma)(p-1)/p M/n),
// M the input size.
#include "circulant/circulant_collectives.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const auto parts = detail::block_parts(a);
  const detail::root_part& mine = parts[static_cast<std::size_t>(rank)];
  const std::uint64_t total = total_count(a);
  if (a.p == 1 || total == 0) {
    s.copy(region{in_buffer, mine.offset, mine.count}, region{out_buffer, 0, mine.count});
    return s;
  }
  // Partial results of every block accumulate in scratch; this rank's block is final at the end.
  const buffer_id acc = s.scratch(total);
  s.copy(region{in_buffer, 0, total}, region{acc, 0, total});
  detail::all_broadcast_rounds(s, a, parts, acc, detail::circulant_direction::reduce);
  s.copy(region{acc, mine.offset, mine.count}, region{out_buffer, 0, mine.count});
  s.trim();
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::block_all_broadcast_cost(a, elem, true, m);
}

const algorithm info{
    .name = "circulant",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary =
        "round-optimal reduce-scatter: the circulant all-broadcast backwards, n-1+q rounds, "
        "(n-1+q)(alpha + (beta+gamma)(p-1)M/(p n))",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
