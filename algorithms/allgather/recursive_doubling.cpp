// Allgather and allgatherv, recursive doubling (the 5DV050 lecture "Algorithms for Collective
// Communication": all-to-all broadcast on a hypercube; MPICH, Open MPI). In exchange round k
// every survivor swaps with survivor v XOR 2^k all blocks its aligned group of 2^k survivors
// has. Any p: with p' the largest power of two <= p and rem = p - p', ranks 2i and 2i+1
// (i < rem) fold into one survivor before the exchange rounds (the even rank hands its block
// over) and the odd rank hands everything back afterwards. Each group of survivors stands for
// a contiguous rank range, so every message is a list of that range's blocks; a rank's own
// block among them goes out from its send buffer, not from its copy in out
// (gathered_layout::sent).
// Rounds: log2 p (p a power of two), floor(log2 p) + 2 otherwise.
// Cost: rounds alpha + beta N (p-1)/p (+ beta N for the folding), N = bytes of the result.
// See docs/algorithms.md, "allgather".
#include "patterns/recursive_doubling.hpp"
#include "patterns/block_layout.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const detail::gathered_layout L(a);
  schedule s = L.start(a, rank);
  const detail::fold_plan f(a.p);
  // The blocks of the ranks that survivors [v, v + n) stand for.
  auto group_blocks = [&](int v, int n) { return L.range(f.first_rank(v), f.first_rank(v + n)); };
  auto group_sent = [&](int v, int n) { return L.sent_range(f.first_rank(v), f.first_rank(v + n), rank); };
  // What the folded-away rank `lost` lacks at the end: every block but its own, as `sender`
  // reads them (its own block from in; sender = no_rank: all in out, where they arrive).
  auto missing = [&](int lost, int sender) {
    detail::region_list l;
    for (int j = 0; j < a.p; ++j)
      if (j != lost) l.add(L.sent(j, sender));
    return l;
  };
  detail::folded_doubling_rounds(
      s, f, rank,
      [&](int partner, bool survives) {
        if (survives)
          s.recv(partner, L.block(partner));
        else
          s.send(partner, L.sent(rank, rank));
      },
      [&](int v, int mask) {
        const int partner = v ^ mask;
        send_list(s, f.real(partner), group_sent(v & ~(mask - 1), mask));
        recv_list(s, f.real(partner), group_blocks(partner & ~(mask - 1), mask));
      },
      [&](int partner, bool survives) {
        if (survives)
          send_list(s, partner, missing(partner, rank));
        else
          recv_list(s, partner, missing(rank, no_rank));
      });
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const auto pof2 = detail::floor_pow2(static_cast<std::uint64_t>(a.p));
  const bool folded = pof2 != static_cast<std::uint64_t>(a.p);
  // Folding adds a round with one block and a round with p-1 blocks.
  const double extra = folded ? static_cast<double>(total_count(a) * elem) : 0;
  return detail::gathered_cost(a, elem, m, detail::ceil_log2(pof2) + (folded ? 2 : 0), extra);
}

const algorithm info{
    .name = "recursive_doubling",
    .serves = {collective::allgather, collective::allgatherv},
    .summary =
        "recursive doubling, non-power-of-two p by folding pairs: log2 p rounds for p = 2^k, floor(log2 p)+2 "
        "otherwise; rounds alpha + beta N(p-1)/p (+ beta N when folded)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
