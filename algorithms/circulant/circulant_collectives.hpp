// The shared emitter of the circulant collectives (bcast, reduce, allgather(v),
// reduce_scatter(_block) and allreduce "circulant"): the n-block broadcast schedules of
// J. L. Träff, "Optimal Broadcast Schedules in Logarithmic Time with Applications to
// Broadcast, All-Broadcast, Reduction and All-Reduction" (ranklab/circulant.hpp computes
// them), emitted as one-ported rounds from one root or from every root at once, forwards
// (broadcast, all-broadcast) or backwards with combining (reduction, reduce-scatter).
// See docs/algorithms.md, "Circulant schedules".
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "ranklab/circulant.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// The data one root broadcasts: `count` elements at `offset` of the buffer, cut into n
// blocks of near-equal size (the first count % n blocks one element larger).
struct root_part {
  int root = 0;
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
  region block(buffer_id buf, int b, int n) const {
    const std::uint64_t base = count / static_cast<std::uint64_t>(n), extra = count % static_cast<std::uint64_t>(n);
    const auto ub = static_cast<std::uint64_t>(b);
    return region{buf, offset + ub * base + std::min(ub, extra), base + (ub < extra ? 1 : 0)};
  }
};

enum class circulant_direction { broadcast, reduce };

// Appends the n - 1 + q rounds of the circulant all-broadcast of `parts` (each part's root
// broadcasts it; one part = a plain broadcast) for `rank` to s. Broadcast direction: blocks
// are copied into `buf`. Reduce direction: the rounds run backwards, every message reversed,
// and arriving partial blocks are combined into `buf` (commutative operators only).
// `table` holds the schedules of all p virtual ranks when several roots take part; with one
// root only the rank's own virtual schedules are needed and table may be null.
// `own_input` (broadcast direction): where the part this rank is the root of lies unchanged
// besides `buf`, to send its blocks from there. Allgather(v) passes its send buffer, which the
// call never writes and which stays in the sender's cache, so a receiver copying a large
// message from the sender's memory does not fetch the lines the prologue's copy into out just
// dirtied, and the sends need not wait for that copy.
void circulant_rounds(schedule& s, const circulant::skips& sk, const circulant::schedule_table* table,
                      std::span<const root_part> parts, int n, buffer_id buf, circulant_direction dir,
                      const region* own_input = nullptr);

// A near-equal split of `count` elements into p parts, part j rooted at rank j (the first
// count % p parts one element larger): allreduce's all-broadcast, and the slices of the
// direct split reductions.
std::vector<root_part> equal_parts(std::uint64_t count, int p);

// The parts of an all-broadcast over a's block layout (allgather(v), reduce_scatter(_block)):
// rank j's block, at block_offset j, rooted at j.
std::vector<root_part> block_parts(const coll_args& a);

// The rounds of the all-broadcast of `parts` (every root at once) on a's ranks, with n from
// blocks_for on their total size, at most as many blocks as the largest part has elements:
// allgather(v) forwards, reduce_scatter(_block) backwards, allreduce both.
void all_broadcast_rounds(schedule& s, const coll_args& a, std::span<const root_part> parts, buffer_id buf,
                          circulant_direction dir, const region* own_input = nullptr);

// Cost of an all-broadcast of `bytes` in total (one direction; with combining if reduces).
double circulant_all_broadcast_cost(const coll_args& a, double bytes, std::uint64_t max_part, bool reduces,
                                    const cost_model& m);
// The same for the blocks of a's layout, elements of `elem` bytes.
double block_all_broadcast_cost(const coll_args& a, std::size_t elem, bool reduces, const cost_model& m);

// Number of blocks n by the linear cost model: minimises
// (n - 1 + q)(alpha + beta * bytes / n), i.e. n* = sqrt((q - 1) beta bytes / alpha), at least
// 1 and at most max_blocks. `bytes` is what one round would carry with n = 1.
int choose_blocks(int q, double bytes, std::uint64_t max_blocks, const cost_model& m);

// n for a call: a.params.blocks when given (at most max_blocks), else choose_blocks with
// the machine's cost model.
int blocks_for(const coll_args& a, int q, std::uint64_t bytes, std::uint64_t max_blocks);

// The cost model of the selection table in use (as `ranklab tune` calibrates it; see
// ranklab/selection.hpp), the defaults with the built-in table. The circulant block count
// and the direct reductions' choice of scheme depend on it.
const cost_model& machine_cost_model();

// The schedules of all p virtual ranks, computed once per p and thread (allgather and
// reduce-scatter need all of them: O(p log p)).
const circulant::schedule_table& all_schedules(const circulant::skips& sk);

}  // namespace ranklab::detail
