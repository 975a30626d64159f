// Folding p ranks to the largest power of two p' <= p, as MPICH does for its recursive
// doubling / halving algorithms: with rem = p - p', ranks 2i and 2i+1 (i < rem) form pair i
// and one of them survives as new rank i and stands for both (the odd one, unless the pair
// is `keep_even`, e.g. the root's pair in a reduce); ranks >= 2 rem survive as rank - rem.
// Every new rank stands for a contiguous range of ranks, in rank order, so folding keeps
// reductions rank-ordered. Used by the recursive doubling and halving algorithms
// (patterns/recursive_doubling.hpp, patterns/recursive_halving.hpp).
#pragma once
#include <cstdint>

#include "patterns/rank_arithmetic.hpp"
#include "ranklab/errors.hpp"

namespace ranklab::detail {

struct fold_plan {
  int p = 1, pof2 = 1, rem = 0, keep_even = -1;

  fold_plan(int p_, int keep_even_pair = -1)
      : p(p_),
        pof2(static_cast<int>(floor_pow2(static_cast<std::uint64_t>(p_)))),
        rem(p_ - pof2),
        keep_even(keep_even_pair) {}

  int levels() const { return ceil_log2(static_cast<std::uint64_t>(pof2)); }
  int survivor_of_pair(int i) const { return i == keep_even ? 2 * i : 2 * i + 1; }
  // The partner a rank folds with, or no_rank.
  int partner(int rank) const { return rank < 2 * rem ? (rank ^ 1) : no_rank; }
  // New rank, or -1 for a rank folded away.
  int newrank(int rank) const {
    if (rank >= 2 * rem) return rank - rem;
    return rank == survivor_of_pair(rank / 2) ? rank / 2 : -1;
  }
  int real(int v) const { return v < rem ? survivor_of_pair(v) : v + rem; }
  // The original ranks new rank v stands for: [first, last].
  int first_rank(int v) const { return v < rem ? 2 * v : v + rem; }
  int last_rank(int v) const { return v < rem ? 2 * v + 1 : v + rem; }
};

}  // namespace ranklab::detail
