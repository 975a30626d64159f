// Recursive doubling for any p: exchange rounds with partner v XOR 2^k among the p' = largest
// power of two <= p survivors of a fold (patterns/folding.hpp), the hypercube algorithms of
// the 5DV050 lecture "Algorithms for Collective Communication" extended to any p as MPICH
// does: a fold round in which each pair's folded-away rank hands its data to the survivor,
// log2 p' exchange rounds among the survivors, and an unfold round in which the survivor
// hands the result back. A group of 2^k aligned survivors stands for a contiguous rank range.
// Used by allgather recursive_doubling; allreduce and barrier recursive_doubling have the
// same rounds.
#pragma once
#include "patterns/folding.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// Adds the rounds and says what `rank` does in them: fold_in(partner, survives) in the fold
// round for the ranks of a pair, exchange(v, mask) for survivor v in each exchange round, and
// fold_out(partner, survives) in the unfold round for the ranks of a pair.
template <class FoldIn, class Exchange, class FoldOut>
void folded_doubling_rounds(schedule& s, const fold_plan& f, int rank, FoldIn fold_in, Exchange exchange,
                            FoldOut fold_out) {
  const int partner = f.partner(rank), v = f.newrank(rank);
  if (f.rem > 0) {
    s.next_round();
    if (partner != no_rank) fold_in(partner, v >= 0);
  }
  for (int mask = 1; mask < f.pof2; mask *= 2) {
    s.next_round();
    if (v >= 0) exchange(v, mask);
  }
  if (f.rem > 0) {
    s.next_round();
    if (partner != no_rank) fold_out(partner, v >= 0);
  }
}

}  // namespace ranklab::detail
