// Alltoall(v) on Träff's halving circulant: the reduce-scatter of J. L. Träff, "Optimal,
// Non-pipelined Reduce-scatter and Allreduce Algorithms" (arXiv 2410.14234, 2024) used, as
// the paper observes, as a template for all-to-all communication, i.e. with the blocks kept
// apart instead of combined. Skips s_0 = p, s_{k+1} = ceil(s_k / 2), q = ceil(log2 p). A
// block from x to b has the distance t = b - x (mod p) and a position, its relative index,
// that starts at t: in round k (h = s_{k+1}) every rank sends to r + h all blocks whose
// position is >= h, and their position drops by h (receiving from r - h likewise). Positions
// stay below s_k, so after q rounds every block is at position 0, at its destination. The
// same distances move at every rank, so each rank holds one block per distance at any time
// and a round's message is those slots, sent as a multi-region message: a block is read
// from the send buffer on its first move, lands in the receive buffer on its last and in
// between alternates between two scratch buffers, so a round never receives where it
// sends (no packing, no rotations). For p = 2^k this is Bruck's index algorithm with the
// skips in decreasing order. One partner pair per round: not a multi-port algorithm.
// Rounds: q = ceil(log2 p), any p. Cost: sum_k (alpha + n_k beta m), n_k the distances with
// position >= s_{k+1} before round k (about p/2; q p/2 for p = 2^k), m = bytes of a block.
// See docs/algorithms.md, "alltoall".
#include <algorithm>
#include <vector>

#include "patterns/block_layout.hpp"
#include "patterns/halving_skips.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

using detail::cyclic;

schedule build(const coll_args& a, int rank) {
  const detail::exchange_layout L(a, rank);
  schedule s = L.start(rank);
  const int p = a.p;
  if (p == 1) return s;
  const std::vector<detail::halving_round> rounds = detail::halving_rounds(p);
  const int q = static_cast<int>(rounds.size());
  // pos[k][t]: the position of distance t before round k (k = 0 .. q).
  std::vector<std::vector<int>> pos(static_cast<std::size_t>(q) + 1, std::vector<int>(static_cast<std::size_t>(p)));
  for (int t = 0; t < p; ++t)
    for (int k = 0; k <= q; ++k) pos[static_cast<std::size_t>(k)][static_cast<std::size_t>(t)] = detail::halving_position(rounds, t, k);
  const auto at = [&](int k, int t) { return pos[static_cast<std::size_t>(k)][static_cast<std::size_t>(t)]; };
  const auto moves = [&](int k, int t) { return at(k, t) >= rounds[static_cast<std::size_t>(k)].skip; };
  // The block of distance t on this rank before round k: from rank + pos - t to rank + pos.
  const auto elements = [&](int k, int t) {
    const long long dst = static_cast<long long>(rank) + at(k, t);
    return L.elements(cyclic(dst - t, p), cyclic(dst, p));
  };
  std::vector<int> total_moves(static_cast<std::size_t>(p), 0);
  for (int t = 0; t < p; ++t)
    for (int k = 0; k < q; ++k) total_moves[static_cast<std::size_t>(t)] += moves(k, t) ? 1 : 0;
  // Scratch slot of distance t: room for its largest intermediate occupant.
  std::vector<std::uint64_t> slot(static_cast<std::size_t>(p) + 1, 0);
  for (int t = 0; t < p; ++t) {
    std::uint64_t n = 0;
    for (int k = 0, done = 0; k < q; ++k)
      if (moves(k, t) && ++done < total_moves[static_cast<std::size_t>(t)]) n = std::max(n, elements(k + 1, t));
    slot[static_cast<std::size_t>(t) + 1] = slot[static_cast<std::size_t>(t)] + n;
  }
  const buffer_id buf[2] = {s.scratch(slot[static_cast<std::size_t>(p)]), s.scratch(slot[static_cast<std::size_t>(p)])};
  std::vector<int> moved(static_cast<std::size_t>(p), 0);  // moves made so far per distance
  for (int k = 0; k < q; ++k) {
    const int h = rounds[static_cast<std::size_t>(k)].skip;
    s.next_round();
    detail::region_list out, in;
    for (int t = 1; t < p; ++t) {
      if (!moves(k, t)) continue;
      int& m = moved[static_cast<std::size_t>(t)];
      const std::uint64_t st = slot[static_cast<std::size_t>(t)];
      if (m == 0)
        out.add(L.send_block(cyclic(static_cast<long long>(rank) + t, p)));  // still in the send buffer
      else
        out.add(region{buf[(m - 1) % 2], st, elements(k, t)});
      if (m + 1 == total_moves[static_cast<std::size_t>(t)])
        in.add(L.recv_block(cyclic(static_cast<long long>(rank) - t, p)));  // position 0: arrived
      else
        in.add(region{buf[m % 2], st, elements(k + 1, t)});
      ++m;
    }
    detail::send_list(s, cyclic(static_cast<long long>(rank) + h, p), out);
    detail::recv_list(s, cyclic(static_cast<long long>(rank) - h, p), in);
  }
  return s;
}

// Round k: alpha + n_k m beta, n_k the distances that move in round k, m the mean block.
double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const std::vector<detail::halving_round> rounds = detail::halving_rounds(a.p);
  const double block = detail::mean_block_bytes(a, elem);
  std::vector<int> pos(static_cast<std::size_t>(a.p));
  for (int d = 0; d < a.p; ++d) pos[static_cast<std::size_t>(d)] = d;
  double t = 0;
  for (const detail::halving_round& rd : rounds) {
    int n = 0;
    for (int& x : pos)
      if (x >= rd.skip) {
        x -= rd.skip;
        ++n;
      }
    t += m.alpha + m.beta * block * n;
  }
  return t;
}

const algorithm info{
    .name = "circulant_halving",
    .serves = {collective::alltoall, collective::alltoallv},
    .summary =
        "Träff's halving circulant as all-to-all template (skips ceil(s/2)): ceil(log2 p) rounds for any p, "
        "sum_k (alpha + n_k beta m), n_k ~ p/2 blocks",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
