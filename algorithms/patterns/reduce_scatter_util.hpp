// Building blocks of the reduce-scatter family and of the algorithms composed from it
// (reduce = reduce-scatter + gather, allreduce = reduce-scatter + allgather, seed 001's
// "improved" versions):
//   - region_list (patterns/region_list.hpp): one message out of many buffer pieces;
//   - block_store: where each block of the reduced vector currently lives (still the raw
//     contribution in the caller's send buffer, or a partial result in its accumulator),
//     and one-round exchanges on lists of blocks that keep that bookkeeping right;
//   - fold_plan / butterfly: folding p to the largest power of two p' <= p (pairs of
//     neighbouring ranks, as MPICH does), recursive halving over p' survivors, and its
//     reversals (recursive-doubling allgather, binomial gather to any survivor);
//   - the reduce_scatter / reduce_scatter_block builders themselves (ring, pairwise,
//     recursive halving, the rank-ordered variant for non-commutative operators), shared by
//     the two collectives: reduce_scatter_block is reduce_scatter with equal counts, and
//     block_count()/block_offset() give the blocks of both.
//
// Orientation of reductions: reduce_in_left stores incoming (+) dst, reduce_in_right
// dst (+) incoming; rank-ordered algorithms put the lower ranks' partial on the left.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ranklab/collective.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail::rs {

// ---- messages out of many pieces ----------------------------------------------------------



// ---- blocks of the reduced vector ---------------------------------------------------------

struct span {
  std::uint64_t offset = 0;  // elements, in the caller's send buffer layout
  std::uint64_t count = 0;
};

// n elements in k near-equal parts, the first n % k one element longer.
inline std::vector<span> equal_split(std::uint64_t n, int k) {
  std::vector<span> parts(static_cast<std::size_t>(k));
  const std::uint64_t base = n / static_cast<std::uint64_t>(k), extra = n % static_cast<std::uint64_t>(k);
  std::uint64_t at = 0;
  for (int i = 0; i < k; ++i) {
    const std::uint64_t c = base + (static_cast<std::uint64_t>(i) < extra ? 1 : 0);
    parts[static_cast<std::size_t>(i)] = span{at, c};
    at += c;
  }
  return parts;
}

// The blocks of a reduce_scatter or reduce_scatter_block call (rank j's result block j).
inline std::vector<span> result_blocks(const coll_args& a) {
  std::vector<span> b(static_cast<std::size_t>(a.p));
  for (int j = 0; j < a.p; ++j) b[static_cast<std::size_t>(j)] = span{block_offset(a, j), block_count(a, j)};
  return b;
}

inline std::uint64_t total_of(const std::vector<span>& blocks) {
  std::uint64_t n = 0;
  for (const span& b : blocks) n += b.count;
  return n;
}

// What one round does with blocks: send some, receive others (combining or copying).
struct exchange {
  int send_to = no_rank;
  std::vector<int> send_blocks;
  int recv_from = no_rank;
  std::vector<int> recv_blocks;
  bool combines = true;         // reduce the arriving partials into the accumulators
  bool incoming_lower = false;  // the arriving partial covers lower ranks: it goes on the left
};

// Where every block of the reduced vector is. A block starts "raw" (this rank's own
// contribution, read straight from the caller's send buffer, never copied unless it must be
// combined) and becomes "accumulated" (in its accumulator) once something is combined into
// it or a final value is copied into it. The accumulator of block b is the accumulation
// buffer at the block's own offset, unless redirected (a reduce-scatter result block goes
// to offset 0 of the receive buffer).
class block_store {
 public:
  // acc: the accumulation buffer (out_buffer, or no_buffer for a scratch buffer of
  // `scratch_count` elements allocated on first use). out_may_alias_in: the call may be in
  // place (allreduce), so the send buffer must not be read once the receive buffer's
  // element at the same place was written.
  static constexpr buffer_id no_buffer = 0xFFFF;

  block_store(schedule& s, std::vector<span> blocks, buffer_id acc, std::uint64_t scratch_count = 0,
              bool out_may_alias_in = false)
      : s_(s), blocks_(std::move(blocks)), acc_(acc), scratch_count_(scratch_count), alias_(out_may_alias_in),
        redirect_(blocks_.size()), redirected_(blocks_.size(), false), accumulated_(blocks_.size(), false) {}

  std::size_t size() const { return blocks_.size(); }
  const span& block(int b) const { return blocks_[static_cast<std::size_t>(b)]; }

  void redirect(int b, region r) {
    redirect_[static_cast<std::size_t>(b)] = r;
    redirected_[static_cast<std::size_t>(b)] = true;
  }
  bool accumulated(int b) const { return accumulated_[static_cast<std::size_t>(b)]; }

  // Where block b's current value is read from.
  region source(int b) const {
    const span& k = block(b);
    if (!accumulated(b)) return region{in_buffer, k.offset, k.count};
    return target(b);
  }
  // Block b's accumulator.
  region target(int b) const {
    const std::size_t i = static_cast<std::size_t>(b);
    if (redirected_[i]) return redirect_[i];
    return region{acc_buffer(), blocks_[i].offset, blocks_[i].count};
  }

  // Ensures block b holds its final value in its accumulator (copying the raw contribution
  // when nothing was ever combined into it, e.g. p == 1), as a local step of the current
  // position in the schedule.
  void settle(int b) {
    if (accumulated(b)) return;
    const region src = source(b), dst = target(b);
    if (src.count > 0) s_.copy(src, dst);
    accumulated_[static_cast<std::size_t>(b)] = true;
  }

  // One round. Sent blocks and received blocks must be disjoint.
  void round(const exchange& e) {
    s_.next_round();
    region_list out, in;
    for (int b : e.send_blocks) out.add(source(b));
    for (int b : e.recv_blocks) in.add(target(b));
    if (e.recv_from != no_rank && e.combines) {
      // Raw blocks need this rank's contribution next to the arriving partial: receive a
      // copy, then reduce the send buffer into it (no extra copy) when all blocks are raw;
      // otherwise (a message has one combine mode), or when the receive buffer may be the
      // send buffer itself, copy the contribution first and reduce while receiving, so the
      // send buffer is never read after its memory was written.
      bool all_raw = !e.recv_blocks.empty();
      bool any_out = false;
      for (int b : e.recv_blocks) {
        all_raw = all_raw && !accumulated(b);
        any_out = any_out || target(b).buffer == out_buffer;
      }
      const bool reduce_after = all_raw && !(alias_ && any_out);
      std::vector<local_step> post;
      for (int b : e.recv_blocks) {
        if (accumulated(b)) continue;
        const region mine = source(b), dst = target(b);
        if (mine.count > 0 && reduce_after)  // dst will hold the incoming partial: incoming lower -> dst (+) mine
          post.push_back({mine, dst, e.incoming_lower ? combine::reduce_in_right : combine::reduce_in_left});
        else if (mine.count > 0)
          s_.copy(mine, dst);  // a pre-step: before the messages
        accumulated_[static_cast<std::size_t>(b)] = true;
      }
      if (e.send_to != no_rank) send_list(s_, e.send_to, out);
      const combine how = reduce_after ? combine::copy
                                       : (e.incoming_lower ? combine::reduce_in_left : combine::reduce_in_right);
      recv_list(s_, e.recv_from, in, how);
      for (const local_step& st : post) s_.reduce(st.src, st.dst, st.how);
      return;
    }
    if (e.send_to != no_rank) send_list(s_, e.send_to, out);
    if (e.recv_from != no_rank) {
      recv_list(s_, e.recv_from, in, combine::copy);
      for (int b : e.recv_blocks) accumulated_[static_cast<std::size_t>(b)] = true;
    }
  }

  void idle_round() { s_.next_round(); }

 private:
  buffer_id acc_buffer() const {
    if (acc_ == no_buffer) acc_ = s_.scratch(scratch_count_);
    return acc_;
  }

  schedule& s_;
  std::vector<span> blocks_;
  mutable buffer_id acc_;
  std::uint64_t scratch_count_;
  bool alias_;
  std::vector<region> redirect_;
  std::vector<bool> redirected_;
  std::vector<bool> accumulated_;
};

inline std::vector<int> all_blocks(std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i);
  return v;
}

// ---- folding to a power of two ------------------------------------------------------------

// p' = largest power of two <= p, rem = p - p'. Ranks 2i and 2i+1 (i < rem) form pair i;
// one of them survives as new rank i and stands for both (the odd one, unless the pair is
// `keep_even`, e.g. the root's pair in a reduce). Ranks >= 2 rem survive as rank - rem. Every
// new rank stands for a contiguous range of ranks, in rank order, so folding keeps
// reductions rank-ordered.
struct fold_plan {
  int p = 1, pof2 = 1, rem = 0, keep_even = -1;

  fold_plan(int p_, int keep_even_pair = -1)
      : p(p_), pof2(static_cast<int>(floor_pow2(static_cast<std::uint64_t>(p_)))), rem(p_ - pof2),
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

// Round 0 of a folded algorithm: the folded-away rank of each pair sends all its blocks
// (raw) to the survivor, which combines them in rank order. Everybody calls it.
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

// ---- recursive halving and its reversals ----------------------------------------------------

// The steps of a recursive halving as one survivor saw them: at step k it exchanged with new
// rank partner[k] (= v xor mask[k]), kept the pieces [kept[k].first, kept[k].second) and gave
// away [given[k] ...).
struct halving_trace {
  std::vector<int> mask, partner_new;
  std::vector<std::pair<int, int>> kept, given;
};

// Blocks of the pieces [lo, hi), in piece order.
inline std::vector<int> blocks_of(const std::vector<std::vector<int>>& pieces, std::pair<int, int> range) {
  std::vector<int> out;
  for (int c = range.first; c < range.second; ++c)
    out.insert(out.end(), pieces[static_cast<std::size_t>(c)].begin(), pieces[static_cast<std::size_t>(c)].end());
  return out;
}

// Recursive halving among the p' survivors over p' pieces (lists of blocks). Survivor v
// (v < 0: a folded-away rank, which idles) halves its current range of piece indices in
// every step and keeps the half its partner does not.
//   increasing = true : masks 1, 2, 4, ...; the partner's group is the neighbouring aligned
//                       group of ranks, so every partial covers a contiguous range of ranks
//                       (safe for non-commutative operators); v ends with piece
//                       bit_reverse(v).
//   increasing = false: masks p'/2, ..., 1 (MPICH's commutative reduce-scatter); v ends with
//                       piece v; partners are far apart, so commutative operators only.
inline halving_trace halving(block_store& st, const fold_plan& f, int v,
                             const std::vector<std::vector<int>>& pieces, bool increasing) {
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
                           const std::vector<std::vector<int>>& pieces) {
  const int levels = f.levels();
  for (int k = levels - 1; k >= 0; --k) {
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
// drops out. Only valid after an increasing (or decreasing) halving, whose ranges it undoes.
inline void gather_back(block_store& st, const fold_plan& f, int v, const halving_trace& t,
                        const std::vector<std::vector<int>>& pieces, int target) {
  const int levels = f.levels();
  bool holder = v >= 0;
  for (int k = levels - 1; k >= 0; --k) {
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

// ---- reduce_scatter / reduce_scatter_block builders ---------------------------------------

inline schedule make_schedule(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  return schedule(rank, a.p, ext.in, ext.out);
}

// The store of a reduce-scatter: partial blocks in a scratch buffer laid out like the send
// buffer, this rank's own result block directly in the receive buffer.
inline block_store result_store(schedule& s, int rank, const std::vector<span>& blocks) {
  block_store st(s, blocks, block_store::no_buffer, total_of(blocks));
  st.redirect(rank, region{out_buffer, 0, blocks[static_cast<std::size_t>(rank)].count});
  return st;
}

// Ring (seed 001's all-to-all reduction on a ring, MPICH/Open MPI ring): in step t = 0..p-2,
// rank r sends its partial of block (r - t - 1) mod p to r + 1 and combines the partial of
// block (r - t - 2) mod p arriving from r - 1; block b travels b+1, b+2, ..., b, so it is
// combined in cyclic rank order: commutative operators only.
inline schedule ring(const coll_args& a, int rank) {
  schedule s = make_schedule(a, rank);
  const int p = a.p;
  const std::vector<span> blocks = result_blocks(a);
  block_store st = result_store(s, rank, blocks);
  for (int t = 0; t + 1 < p; ++t) {
    exchange e;
    e.send_to = mod(rank + 1, p);
    e.send_blocks = {mod(rank - t - 1, p)};
    e.recv_from = mod(rank - 1, p);
    e.recv_blocks = {mod(rank - t - 2, p)};
    e.incoming_lower = true;  // the partial of the ranks before this one on the ring
    st.round(e);
  }
  st.settle(rank);  // p == 1
  return s;
}

// Pairwise exchange (MPICH's reduce_scatter for long messages): in step i = 1..p-1 rank r
// sends its raw contribution to block (r + i) mod p straight to that rank and receives rank
// (r - i) mod p's contribution to its own block. The contributions arrive in the order
// r-1, r-2, ..., 0, p-1, ..., r+1; two accumulators keep them rank-ordered: the low one
// (x_0 (+) ... (+) x_r, in the receive buffer) grows to the left, the high one
// (x_{r+1} (+) ... (+) x_{p-1}) grows to the left from x_{p-1}; one local reduction joins
// them. Safe for non-commutative operators.
inline schedule pairwise(const coll_args& a, int rank) {
  schedule s = make_schedule(a, rank);
  const int p = a.p;
  const std::vector<span> blocks = result_blocks(a);
  const span own = blocks[static_cast<std::size_t>(rank)];
  const region low{out_buffer, 0, own.count};
  if (own.count > 0) s.copy(region{in_buffer, own.offset, own.count}, low);
  const bool has_high = rank + 1 < p;
  const region high{has_high ? s.scratch(own.count) : out_buffer, 0, has_high ? own.count : 0};
  for (int i = 1; i < p; ++i) {
    s.next_round();
    const int to = mod(rank + i, p), from = mod(rank - i, p);
    const span give = blocks[static_cast<std::size_t>(to)];
    s.send(to, region{in_buffer, give.offset, give.count});
    if (from < rank) s.recv(from, low, combine::reduce_in_left);
    else if (from == p - 1) s.recv(from, high, combine::copy);
    else s.recv(from, high, combine::reduce_in_left);
  }
  if (has_high && own.count > 0) s.reduce(high, low, combine::reduce_in_right);  // low (+) high
  return s;
}

// Recursive halving with folding to p' (MPICH's reduce_scatter for commutative operators,
// any p): fold round, log2 p' halving rounds with masks p'/2 .. 1 on contiguous halves
// (piece v = the blocks of the ranks survivor v stands for), then each paired survivor sends
// its partner its block. Rounds: log2 p' (+2 when p is not a power of two).
// increasing = true gives the rank-ordered variant (masks 1 .. p'/2, piece bit_reverse(v) =
// the blocks of survivor v, so each half is a strided set of blocks): every partial covers
// a contiguous range of ranks and the lower range is combined on the left.
inline schedule recursive_halving(const coll_args& a, int rank, bool increasing) {
  schedule s = make_schedule(a, rank);
  const std::vector<span> blocks = result_blocks(a);
  block_store st = result_store(s, rank, blocks);
  const fold_plan f(a.p);
  const int levels = f.levels();
  std::vector<std::vector<int>> pieces(static_cast<std::size_t>(f.pof2));
  for (int v = 0; v < f.pof2; ++v) {
    const int c = increasing ? bit_reverse(v, levels) : v;
    for (int r = f.first_rank(v); r <= f.last_rank(v); ++r) pieces[static_cast<std::size_t>(c)].push_back(r);
  }
  if (f.rem > 0) fold_round(st, f, rank);
  const int v = f.newrank(rank);
  halving(st, f, v, pieces, increasing);
  if (f.rem > 0) {
    exchange e;
    const int partner = f.partner(rank);
    if (partner != no_rank) {
      if (v >= 0) {
        e.send_to = partner;
        e.send_blocks = {partner};
      } else {
        e.recv_from = partner;
        e.recv_blocks = {rank};
        e.combines = false;
      }
    }
    st.round(e);
  }
  st.settle(rank);  // p == 1
  return s;
}

// ---- costs ---------------------------------------------------------------------------------

inline double total_bytes(const coll_args& a, std::size_t elem) {
  std::uint64_t n = 0;
  for (int j = 0; j < a.p; ++j) n += block_count(a, j);
  return static_cast<double>(n) * static_cast<double>(elem);
}

// (p-1) rounds each moving and reducing one block of ~M/p bytes.
inline double ring_cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double M = total_bytes(a, elem), p = a.p;
  return (p - 1) * m.alpha + (p - 1) / p * M * (m.beta + m.gamma);
}
inline double pairwise_cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double M = total_bytes(a, elem), p = a.p;
  return (p - 1) * m.alpha + (p - 1) / p * M * m.beta + M * m.gamma;  // (p-1) blocks + the join, each ~M/p
}
// Folding (one round moving and reducing M, one handing a block back) + log2 p' halving
// rounds moving and reducing (p'-1)/p' of M.
inline double halving_cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const fold_plan f(a.p);
  const double M = total_bytes(a, elem), q = f.pof2;
  double t = f.levels() * m.alpha + (q - 1) / q * M * (m.beta + m.gamma);
  if (f.rem > 0) t += 2 * m.alpha + M * (m.beta + m.gamma) + M / a.p * m.beta;
  return t;
}

}  // namespace ranklab::detail::rs
