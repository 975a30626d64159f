// The machinery shared by the circulant collectives (algorithms.md 1.5-1.9): n-block
// broadcasts from one root or from every root at once, run forwards (broadcast, allgather)
// or backwards with combining (reduce, reduce-scatter), emitted as one-ported rounds.
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
void circulant_rounds(schedule& s, const circulant::skips& sk, const circulant::schedule_table* table,
                      std::span<const root_part> parts, int n, buffer_id buf, circulant_direction dir);

// The parts of an all-broadcast: rank j's block of the gathered layout (allgather(v)), or
// of the reduced vector (reduce-scatter), or a near-equal split of `count` (allreduce).
std::vector<root_part> gathered_parts(const coll_args& a);
std::vector<root_part> reduce_scatter_parts(const coll_args& a);
std::vector<root_part> equal_parts(std::uint64_t count, int p);

// Whole schedules shared by several registered algorithms.
schedule circulant_allgather(const coll_args& a, int rank);       // allgather, allgatherv
schedule circulant_reduce_scatter(const coll_args& a, int rank);  // reduce_scatter(_block)
// Cost of an all-broadcast of `bytes` in total (one direction).
double circulant_all_broadcast_cost(const coll_args& a, double bytes, std::uint64_t max_part,
                                    bool reduces, const cost_model& m);

// Number of blocks n by the linear cost model (algorithms.md 1.6): minimises
// (n - 1 + q)(alpha + beta * bytes / n), i.e. n* = sqrt((q - 1) beta bytes / alpha), at least
// 1 and at most max_blocks. `bytes` is what one round would carry with n = 1.
int choose_blocks(int q, double bytes, std::uint64_t max_blocks, const cost_model& m);

// n for a call: a.params.blocks when given (at most max_blocks), else choose_blocks with
// the machine's cost model.
int blocks_for(const coll_args& a, int q, std::uint64_t bytes, std::uint64_t max_blocks);

// The calibrated cost model if one was loaded (RANKLAB_COST_MODEL / ranklab tune), else
// the defaults.
const cost_model& machine_cost_model();

// The schedules of all p virtual ranks, computed once per p and thread (allgather and
// reduce-scatter need all of them: O(p log p)).
const circulant::schedule_table& all_schedules(const circulant::skips& sk);

}  // namespace ranklab::detail
