// The blocks of a reduced vector and where each one currently lives. Reductions that cut the
// vector into blocks (the reduce-scatter algorithms, and the reduce / allreduce algorithms
// built on a reduce-scatter phase: Rabenseifner's, the ring, the generalized allreduce)
// describe a round as "send these blocks, receive (and combine) those"; block_store turns
// that into regions and picks the combine mode, so no builder repeats the bookkeeping of
// which block is still the raw contribution in the send buffer and which is a partial.
//
// Orientation of reductions: reduce_in_left stores incoming (+) dst, reduce_in_right
// dst (+) incoming; rank-ordered algorithms put the lower ranks' partial on the left.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "patterns/region_list.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// A block: elements [offset, offset + count) in the send buffer's layout.
struct elem_range {
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
};

// n elements in k near-equal parts, the first n % k one element longer.
inline std::vector<elem_range> equal_split(std::uint64_t n, int k) {
  std::vector<elem_range> parts(static_cast<std::size_t>(k));
  const std::uint64_t base = n / static_cast<std::uint64_t>(k), extra = n % static_cast<std::uint64_t>(k);
  std::uint64_t at = 0;
  for (int i = 0; i < k; ++i) {
    const std::uint64_t c = base + (static_cast<std::uint64_t>(i) < extra ? 1 : 0);
    parts[static_cast<std::size_t>(i)] = elem_range{at, c};
    at += c;
  }
  return parts;
}

// The blocks of a reduce_scatter or reduce_scatter_block call (rank j's result is block j);
// block_count()/block_offset() give both layouts, so one builder serves both collectives.
inline std::vector<elem_range> result_blocks(const coll_args& a) {
  std::vector<elem_range> b(static_cast<std::size_t>(a.p));
  for (int j = 0; j < a.p; ++j) b[static_cast<std::size_t>(j)] = elem_range{block_offset(a, j), block_count(a, j)};
  return b;
}

inline std::uint64_t total_of(const std::vector<elem_range>& blocks) {
  std::uint64_t n = 0;
  for (const elem_range& b : blocks) n += b.count;
  return n;
}

// The start of algorithms that combine whole vectors in the receive buffer: this rank's
// contribution copied there (a no-op for an in-place call), as a region.
inline region own_vector_in_out(schedule& s, std::uint64_t n) {
  const region out{out_buffer, 0, n};
  s.copy(region{in_buffer, 0, n}, out);
  return out;
}

inline std::vector<int> all_blocks(std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i);
  return v;
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

  block_store(schedule& s, std::vector<elem_range> blocks, buffer_id acc, std::uint64_t scratch_count = 0,
              bool out_may_alias_in = false)
      : s_(s),
        blocks_(std::move(blocks)),
        acc_(acc),
        scratch_count_(scratch_count),
        alias_(out_may_alias_in),
        redirect_(blocks_.size()),
        redirected_(blocks_.size(), false),
        accumulated_(blocks_.size(), false) {}

  std::size_t size() const { return blocks_.size(); }
  const elem_range& block(int b) const { return blocks_[static_cast<std::size_t>(b)]; }

  void redirect(int b, region r) {
    redirect_[static_cast<std::size_t>(b)] = r;
    redirected_[static_cast<std::size_t>(b)] = true;
  }
  bool accumulated(int b) const { return accumulated_[static_cast<std::size_t>(b)]; }

  // Where block b's current value is read from.
  region source(int b) const {
    const elem_range& k = block(b);
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
  void settle_all() {
    for (int b = 0; b < static_cast<int>(size()); ++b) settle(b);
  }

  // One round. Sent blocks and received blocks must be disjoint.
  void round(const exchange& e) {
    s_.next_round();
    region_list out, in;
    for (int b : e.send_blocks) out.add(source(b));
    for (int b : e.recv_blocks) in.add(target(b));
    if (e.recv_from != no_rank && e.combines) {
      combining_round(e, out, in);
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
  // Raw blocks need this rank's contribution next to the arriving partial: receive a copy,
  // then reduce the send buffer into it (no extra copy) when all blocks are raw; otherwise
  // (a message has one combine mode), or when the receive buffer may be the send buffer
  // itself, copy the contribution first and reduce while receiving, so the send buffer is
  // never read after its memory was written.
  void combining_round(const exchange& e, const region_list& out, const region_list& in) {
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
    const combine how =
        reduce_after ? combine::copy : (e.incoming_lower ? combine::reduce_in_left : combine::reduce_in_right);
    recv_list(s_, e.recv_from, in, how);
    for (const local_step& st : post) s_.reduce(st.src, st.dst, st.how);
  }

  buffer_id acc_buffer() const {
    if (acc_ == no_buffer) acc_ = s_.scratch(scratch_count_);
    return acc_;
  }

  schedule& s_;
  std::vector<elem_range> blocks_;
  mutable buffer_id acc_;
  std::uint64_t scratch_count_;
  bool alias_;
  std::vector<region> redirect_;
  std::vector<bool> redirected_;
  std::vector<bool> accumulated_;
};

}  // namespace ranklab::detail
