// What the shared-memory direct algorithms (algorithms/direct/, registered as "direct" for
// every collective but barrier and scan) have in common. They leave the one-ported
// model: instead of messages, a rank copies straight out of (schedule::remote) or, for
// bcast, into (schedule::push) another rank's buffers. See docs/algorithms.md, "Direct
// shared-memory algorithms".
//
// The fence protocol. Touching another rank's buffer is safe only between two fences
// (schedule::fence, a team-wide barrier of the call), and each fence has one job:
//  * the first fence publishes: nobody touches a buffer before its owner has entered the
//    call, so the buffer's address is known and its input final;
//  * the last fence withdraws: nobody returns (letting its caller reuse the buffers, or
//    freeing its scratch) while another rank still touches its buffers;
//  * a fence in between is needed only when a rank's results are read by others after it
//    computed them (the split reductions): it makes them final before the first read.
// Between two consecutive fences nobody writes a region that another rank reads or writes
// in the same interval: send buffers are only read, a receive buffer is written by its
// owner (or in disjoint parts by a pusher) and read by nobody. Two fences are therefore the
// minimum for one interval of copies, and there is none at all when nobody reads anything
// (p = 1, or every block another rank would read is empty): the schedule is then local.
// A rank's own block never crosses ranks: it is copied locally, before the first fence, or
// between the fences where the rank would otherwise only wait for the others' copies (the
// roots of gather and scatter).
// In place (in == out) is supported only where a rank keeps what others read apart from
// what it writes; each algorithm says whether it does.
//
// Cost: a fence (F in the algorithm files) costs about (1 + (p-1)/4) alpha
// (detail::fence_alphas); the copies of all ranks run in parallel, so the beta (and gamma)
// term is that of the busiest rank.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "circulant/circulant_collectives.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::detail {

// An empty schedule over this rank's buffers of the call.
inline schedule call_schedule(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  return schedule(rank, a.p, ext.in, ext.out);
}

// This rank's block of a scattered layout (scatter(v), reduce_scatter(_block)): where it
// lies in a send buffer (at block_offset) and the receive buffer it fills.
struct scattered_block {
  region src, dst;
  scattered_block(const coll_args& a, int rank)
      : src{in_buffer, block_offset(a, rank), block_count(a, rank)}, dst{out_buffer, 0, block_count(a, rank)} {}
};

// Alpha time of `fences` schedule::fence rounds.
inline double fences_cost(int fences, int p, const cost_model& m) { return fences * fence_alphas(p) * m.alpha; }

// The local copy of this rank's own block (before the first fence). The fixed-size layouts
// copy even an empty block (a step that moves nothing), the v-layouts skip it: either is
// correct, and each layout keeps the schedule it has always had.
inline void copy_own(schedule& s, const coll_args& a, region src, region dst) {
  if (dst.count > 0 || !has_vector_counts(a.coll)) s.copy(src, dst);
}

// Calls read(j) for every other rank j, from rank + 1 on and wrapping, so the ranks do not
// all read rank 0 first.
template <class Read>
void for_other_ranks(int rank, int p, Read&& read) {
  for (int k = 1; k < p; ++k) read((rank + k) % p);
}

// The rank-ordered fold of the direct reductions (reduce, allreduce, reduce_scatter):
// dst = src_0 (+) (src_1 (+) ( ... (+) src_{p-1})), where src_j is region `src` of rank j's
// buffers and this rank's own part is read from `own` (its buffer, or a copy kept for
// in-place calls). Folded from the right, each step in_j (+) dst, so non-commutative
// operators get MPI's order.
inline void fold_all_ranks(schedule& s, region src, region own, region dst) {
  auto read = [&](int j, combine how) {
    if (j == s.rank())
      s.reduce(own, dst, how);
    else
      s.remote(j, src, dst, how);
  };
  read(s.size() - 1, combine::copy);
  for (int j = s.size() - 2; j >= 0; --j) read(j, combine::reduce_in_left);
}

// The p near-equal slices of a vector of `count` elements that the split reductions (reduce,
// allreduce on long vectors) fold in parallel, slice j by rank j.
class slices {
 public:
  slices(std::uint64_t count, int p) : parts_(equal_parts(count, p)) {}
  explicit slices(std::vector<root_part> parts) : parts_(std::move(parts)) {}
  region operator()(buffer_id b, int j) const {
    const root_part& pt = parts_[static_cast<std::size_t>(j)];
    return region{b, pt.offset, pt.count};
  }

 private:
  std::vector<root_part> parts_;
};

// Slices of `count` elements in rank order, rank `heavy`'s weighing `heavy_weight` against
// `weight` for every other rank: rank j's slice ends at count * (weights of ranks 0..j) /
// (all weights), so the slices tile the vector whatever the rounding.
inline std::vector<root_part> weighted_parts(std::uint64_t count, int p, int heavy, std::uint64_t heavy_weight,
                                             std::uint64_t weight) {
  const std::uint64_t total = heavy_weight + static_cast<std::uint64_t>(p - 1) * weight;
  std::vector<root_part> parts(static_cast<std::size_t>(p));
  std::uint64_t at = 0, weights = 0;
  for (int j = 0; j < p; ++j) {
    weights += j == heavy ? heavy_weight : weight;
    const auto end = static_cast<std::uint64_t>(static_cast<unsigned __int128>(count) * weights / total);
    parts[static_cast<std::size_t>(j)] = root_part{j, at, end - at};
    at = end;
  }
  return parts;
}

// Cost of the split reductions (reduce, allreduce on long vectors): rank r folds slice r
// (about m/p) of all p inputs, then the slices are copied to where they belong; 3 fences,
// or 2 with a commutative operator, whose slices are pushed in the fold's interval.
inline double split_reduction_cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double part = static_cast<double>(a.count * elem) * (a.p - 1) / a.p;
  return fences_cost(a.commutative ? 2 : 3, a.p, m) + part * (m.gamma + 2 * m.beta);
}

}  // namespace ranklab::detail
