// Recursive halving on blocks among the p' survivors of a fold (patterns/folding.hpp), the
// fold and unfold rounds around it, and its two reversals: the recursive-doubling allgather
// and the binomial gather to one survivor (the 5DV050 lecture "Algorithms for Collective
// Communication": all-to-all reduction on a hypercube, and the "improved" reduce and
// allreduce built from it). Used by the reduce_scatter recursive_halving / noncommutative
// algorithms, allreduce rabenseifner and reduce rabenseifner. The halving works on p'
// pieces, each a list of blocks: which blocks a piece holds is the caller's choice (one
// chunk each, or the result blocks of the ranks a survivor stands for).
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

#include "patterns/folding.hpp"
#include "patterns/reduce_blocks.hpp"

namespace ranklab::detail {

using block_pieces = std::vector<std::vector<int>>;

// k pieces of one block each: piece c is block c.
inline block_pieces one_block_pieces(int k) {
  block_pieces pieces(static_cast<std::size_t>(k));
  for (int c = 0; c < k; ++c) pieces[static_cast<std::size_t>(c)] = {c};
  return pieces;
}

// The first round of a folded algorithm on blocks: the folded-away rank of each pair sends
// all its blocks (raw) to the survivor, which combines them in rank order. Everybody calls it.
inline void fold_round(block_store& st, const fold_plan& f, int rank) {
  exchange e;
  const int partner = f.partner(rank);
  if (partner != no_rank) {
    if (f.newrank(rank) < 0) {
      e.send_to = partner;
      e.send_blocks = all_blocks(st.size());
    } else {
      e.recv_from = partner;
      e.recv_blocks = all_blocks(st.size());
      e.incoming_lower = partner < rank;
    }
  }
  st.round(e);
}

// The last round of a folded algorithm: each survivor hands its folded-away partner the
// final blocks `give`, which land, copied, in the partner's blocks `take`. Everybody calls it.
inline void unfold_round(block_store& st, const fold_plan& f, int rank, const std::vector<int>& give,
                         const std::vector<int>& take) {
  exchange e;
  const int partner = f.partner(rank);
  if (partner != no_rank && f.newrank(rank) >= 0) {
    e.send_to = partner;
    e.send_blocks = give;
  } else if (partner != no_rank) {
    e.recv_from = partner;
    e.recv_blocks = take;
    e.combines = false;
  }
  st.round(e);
}

// The steps of a recursive halving as one survivor saw them: at step k it exchanged with new
// rank partner_new[k] (= v xor mask[k]), kept the pieces [kept[k].first, kept[k].second) and
// gave away [given[k] ...).
struct halving_trace {
  std::vector<int> mask, partner_new;
  std::vector<std::pair<int, int>> kept, given;
};

// Blocks of the pieces [lo, hi), in piece order.
inline std::vector<int> blocks_of(const block_pieces& pieces, std::pair<int, int> range) {
  std::vector<int> out;
  for (int c = range.first; c < range.second; ++c)
    out.insert(out.end(), pieces[static_cast<std::size_t>(c)].begin(), pieces[static_cast<std::size_t>(c)].end());
  return out;
}

// Recursive halving among the p' survivors over p' pieces. Survivor v (v < 0: a
// folded-away rank, which idles) halves its current range of piece indices in every step
// and keeps the half its partner does not.
//   increasing = true : masks 1, 2, 4, ...; the partner's group is the neighbouring aligned
//                       group of ranks, so every partial covers a contiguous range of ranks
//                       (safe for non-commutative operators); v ends with piece
//                       bit_reverse(v).
//   increasing = false: masks p'/2, ..., 1 (MPICH's commutative reduce-scatter); v ends with
//                       piece v; partners are far apart, so commutative operators only.
inline halving_trace halving_steps(block_store& st, const fold_plan& f, int v, const block_pieces& pieces,
                                   bool increasing) {
  halving_trace t;
  const int levels = f.levels();
  std::pair<int, int> range{0, f.pof2};
  for (int k = 0; k < levels; ++k) {
    const int mask = increasing ? (1 << k) : (f.pof2 >> (k + 1));
    if (v < 0) {
      st.idle_round();
      continue;
    }
    const int w = v ^ mask;
    const int mid = (range.first + range.second) / 2;
    const std::pair<int, int> lower{range.first, mid}, upper{mid, range.second};
    const bool keep_lower = (v & mask) == 0;
    const auto kept = keep_lower ? lower : upper;
    const auto given = keep_lower ? upper : lower;
    exchange e;
    e.send_to = e.recv_from = f.real(w);
    e.send_blocks = blocks_of(pieces, given);
    e.recv_blocks = blocks_of(pieces, kept);
    e.incoming_lower = w < v;
    st.round(e);
    t.mask.push_back(mask);
    t.partner_new.push_back(w);
    t.kept.push_back(kept);
    t.given.push_back(given);
    range = kept;
  }
  return t;
}

// The halving backwards without combining: every survivor ends with all pieces
// (recursive-doubling allgather).
inline void allgather_back(block_store& st, const fold_plan& f, int v, const halving_trace& t,
                           const block_pieces& pieces) {
  for (int k = f.levels() - 1; k >= 0; --k) {
    if (v < 0) {
      st.idle_round();
      continue;
    }
    const std::size_t i = static_cast<std::size_t>(k);
    exchange e;
    e.send_to = e.recv_from = f.real(t.partner_new[i]);
    e.send_blocks = blocks_of(pieces, t.kept[i]);
    e.recv_blocks = blocks_of(pieces, t.given[i]);
    e.combines = false;
    st.round(e);
  }
}

// The halving backwards as a binomial gather to survivor `target`: in step k the member of
// each pair that agrees with target on bit mask[k] receives, the other sends all it holds and
// drops out. Only valid after a halving, whose ranges it undoes.
inline void gather_back(block_store& st, const fold_plan& f, int v, const halving_trace& t, const block_pieces& pieces,
                        int target) {
  bool holder = v >= 0;
  for (int k = f.levels() - 1; k >= 0; --k) {
    if (!holder) {
      st.idle_round();
      continue;
    }
    const std::size_t i = static_cast<std::size_t>(k);
    exchange e;
    if (((v ^ target) & t.mask[i]) == 0) {
      e.recv_from = f.real(t.partner_new[i]);
      e.recv_blocks = blocks_of(pieces, t.given[i]);
    } else {
      e.send_to = f.real(t.partner_new[i]);
      e.send_blocks = blocks_of(pieces, t.kept[i]);
      holder = false;
    }
    e.combines = false;
    st.round(e);
  }
}

inline int bit_reverse(int v, int bits) {
  int r = 0;
  for (int i = 0; i < bits; ++i)
    if (v & (1 << i)) r |= 1 << (bits - 1 - i);
  return r;
}

}  // namespace ranklab::detail
