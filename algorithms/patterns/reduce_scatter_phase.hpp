// Reduce-scatter phases on blocks (patterns/reduce_blocks.hpp), shared by the reduce_scatter
// algorithms and the reduce / allreduce algorithms composed from a reduce-scatter (the
// "improved" reduce and allreduce of the 5DV050 lecture "Algorithms for Collective
// Communication", Rabenseifner's algorithms in MPICH, the ring allreduce):
//   - ring_pass: the ring reduce-scatter (reduce_scatter ring, allreduce ring and
//     segmented_ring) and, without combining, the ring allgather that mirrors it;
//   - fold_and_halve: folding to p' plus recursive halving (allreduce and reduce
//     rabenseifner, reduce_scatter recursive_halving and noncommutative), with the cost of
//     the halving and its reversal;
//   - the setting of a reduce_scatter call: its schedule, its result store, its bytes;
//   - halving_reduce_scatter: the whole builder of reduce_scatter recursive_halving and
//     noncommutative, which differ only in mask order and piece layout.
// See docs/algorithms.md, "reduce_scatter".
#pragma once
#include <cstdint>
#include <vector>

#include "patterns/folding.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/recursive_halving.hpp"
#include "patterns/reduce_blocks.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::detail {

enum class ring_mode { reduce_scatter, allgather };

// p-1 ring steps, each cut into `subs` sub-rounds; chunk c is blocks c*subs .. c*subs+subs-1.
// reduce_scatter: in step t rank r sends its partial of chunk r-t-1 to r+1 and combines the
// partial of chunk r-t-2 arriving from r-1, so it ends with chunk r reduced; chunk c is
// combined in the cyclic order c+1, ..., c (commutative operators only).
// allgather: the reduced chunks travel on, rank r sending chunk r-t and receiving r-t-1.
inline void ring_pass(block_store& st, int rank, int p, int subs, ring_mode mode) {
  const bool reducing = mode == ring_mode::reduce_scatter;
  const int lag = reducing ? 1 : 0;
  auto block = [&](int chunk, int k) { return mod(chunk, p) * subs + k; };
  for (int t = 0; t + 1 < p; ++t)
    for (int k = 0; k < subs; ++k) {
      exchange e;
      e.send_to = mod(rank + 1, p);
      e.send_blocks = {block(rank - t - lag, k)};
      e.recv_from = mod(rank - 1, p);
      e.recv_blocks = {block(rank - t - lag - 1, k)};
      e.combines = reducing;
      e.incoming_lower = reducing;  // the partial of the ranks before this one on the ring
      st.round(e);
    }
}

// The reduce-scatter phase of the folded recursive-halving algorithms: the fold round (when
// p is not a power of two), then the halving among the survivors. Everybody calls it.
inline halving_trace fold_and_halve(block_store& st, const fold_plan& f, int rank, const block_pieces& pieces,
                                    bool increasing) {
  if (f.rem > 0) fold_round(st, f, rank);
  return halving_steps(st, f, f.newrank(rank), pieces, increasing);
}

// The halving among p' survivors and its reversal (allgather or gather): 2 log2 p' rounds
// moving (p'-1)/p' of the vector's bytes each way and reducing them once; folding extra.
inline double halving_round_trip_cost(const fold_plan& f, double bytes, const cost_model& m) {
  const double q = f.pof2;
  return 2 * f.levels() * m.alpha + (q - 1) / q * bytes * (2 * m.beta + m.gamma);
}

inline schedule reduce_scatter_schedule(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  return schedule(rank, a.p, ext.in, ext.out);
}

// The store of a reduce-scatter: partial blocks in a scratch buffer laid out like the send
// buffer, this rank's own result block directly in the receive buffer.
inline block_store result_store(schedule& s, int rank, const std::vector<elem_range>& blocks) {
  block_store st(s, blocks, block_store::no_buffer, total_of(blocks));
  st.redirect(rank, region{out_buffer, 0, blocks[static_cast<std::size_t>(rank)].count});
  return st;
}

// M: the bytes of all result blocks of a reduce_scatter call.
inline double result_bytes(const coll_args& a, std::size_t elem) {
  std::uint64_t n = 0;
  for (int j = 0; j < a.p; ++j) n += block_count(a, j);
  return static_cast<double>(n) * static_cast<double>(elem);
}

// The reduce-scatter by folding and recursive halving, complete: fold round, log2 p'
// halving rounds, then each survivor hands its folded-away partner that partner's block.
// Piece layout and mask order are the two algorithms' difference:
//   rank_ordered = false (reduce_scatter recursive_halving): masks p'/2 .. 1, piece v = the
//     blocks of the ranks survivor v stands for;
//   rank_ordered = true (reduce_scatter noncommutative): masks 1 .. p'/2, piece
//     bit_reverse(v) = the blocks of survivor v, so each half is a strided set of blocks.
inline schedule halving_reduce_scatter(const coll_args& a, int rank, bool rank_ordered) {
  schedule s = reduce_scatter_schedule(a, rank);
  block_store st = result_store(s, rank, result_blocks(a));
  const fold_plan f(a.p);
  block_pieces pieces(static_cast<std::size_t>(f.pof2));
  for (int v = 0; v < f.pof2; ++v) {
    const int c = rank_ordered ? bit_reverse(v, f.levels()) : v;
    for (int r = f.first_rank(v); r <= f.last_rank(v); ++r) pieces[static_cast<std::size_t>(c)].push_back(r);
  }
  fold_and_halve(st, f, rank, pieces, rank_ordered);
  if (f.rem > 0) unfold_round(st, f, rank, {f.partner(rank)}, {rank});
  st.settle(rank);  // p == 1
  return s;
}

// Folding (one round moving and reducing M, one handing a block back) + log2 p' halving
// rounds moving and reducing (p'-1)/p' of M.
inline double halving_reduce_scatter_cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const fold_plan f(a.p);
  const double M = result_bytes(a, elem), q = f.pof2;
  double t = f.levels() * m.alpha + (q - 1) / q * M * (m.beta + m.gamma);
  if (f.rem > 0) t += 2 * m.alpha + M * (m.beta + m.gamma) + M / a.p * m.beta;
  return t;
}

}  // namespace ranklab::detail
