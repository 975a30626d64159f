// Reduce, shared-memory direct (outside the one-ported model), any root. Two schemes; the
// builder takes the cheaper one by the machine's cost model (the same on every rank):
//  * split (long vectors): rank r reduces slice r (of p near-equal slices) of all p send
//    buffers, read in place, in rank order (out = in_0 (+) (in_1 (+) ( ... (+) in_{p-1})),
//    folded from the right, so non-commutative operators are fine) into a scratch buffer
//    (the root: straight into its receive buffer); then the root copies the other slices
//    from their owners' scratch. Only the root has an output and nothing can be written
//    into another rank's buffer, so the root copying is the only scheme with one copy.
//    Fences, as in allreduce_direct.cpp: the first keeps anyone from reading a send buffer
//    before its owner has entered the call; the second keeps the root from reading a slice
//    before it is final; the third keeps every rank in the call until the root has read its
//    slice (scratch dies with the call). Between two fences nobody writes what is read:
//    send buffers are only read, each scratch slice is written in the first interval and
//    read in the second, the root's receive buffer is read by nobody.
//    Rounds 3 (fences); cost 3 F + (p-1)/p m (gamma + 2 beta).
//  * root alone (short vectors, where one fence costs more than the parallel reduction
//    saves): after a fence the root folds all p send buffers in rank order into its
//    receive buffer; a second fence keeps everyone in the call while it reads.
//    Rounds 2 (fences); cost 2 F + (p-1) m (gamma + beta).
// In place at the root (in == out) works: the root keeps a copy of the part of its own
// input its fold would overwrite before reading it (unless it is rank p-1, whose input is
// read first), and writes no part of its receive buffer that others read in that interval.
// Cost: the cheaper of the two; F = a schedule::fence, about (1 + (p-1)/4) alpha
// (detail::fence_alphas).
#include <algorithm>

#include "patterns/rank_arithmetic.hpp"
#include "circulant/circulant_collectives.hpp"
#include "patterns/direct_fold.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

double split_cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double part = static_cast<double>(a.count * elem) * (a.p - 1) / a.p;
  return 3 * detail::fence_alphas(a.p) * m.alpha + part * (m.gamma + 2 * m.beta);
}

double alone_cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  return 2 * detail::fence_alphas(a.p) * m.alpha + (a.p - 1) * bytes * (m.gamma + m.beta);
}

// The root's own part of the fold, safe in place: a scratch copy unless it is read first.
region own_part(schedule& s, const coll_args& a, region src) {
  if (s.rank() == a.p - 1 || src.count == 0) return src;
  const buffer_id keep = s.scratch(src.count);
  s.copy(src, region{keep, 0, src.count});
  return region{keep, 0, src.count};
}

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const std::uint64_t n = a.count;
  const bool root = rank == a.root;
  if (a.p == 1 || n == 0) {
    if (root) s.copy(region{in_buffer, 0, n}, region{out_buffer, 0, n});
    return s;
  }
  const cost_model& m = detail::machine_cost_model();
  if (alone_cost(a, a.elem_size, m) <= split_cost(a, a.elem_size, m)) {
    const region all{in_buffer, 0, n};
    const region own = root ? own_part(s, a, all) : all;
    s.fence();  // every send buffer is published and final
    if (root) detail::fold_all_ranks(s, all, own, region{out_buffer, 0, n});
    s.fence();  // nobody returns while the root still reads its send buffer
    return s;
  }
  const auto parts = detail::equal_parts(n, a.p);
  auto slice = [&](buffer_id b, int j) {
    const auto& pt = parts[static_cast<std::size_t>(j)];
    return region{b, pt.offset, pt.count};
  };
  // Slice j's result: in the root's receive buffer, elsewhere in rank j's first scratch.
  auto result = [&](int j) {
    return j == a.root ? slice(out_buffer, j) : region{first_scratch, 0, slice(out_buffer, j).count};
  };
  const region src = slice(in_buffer, rank);
  region own = src;
  if (root) own = own_part(s, a, src);
  else if (src.count > 0) s.scratch(src.count);  // first_scratch: the slice's result
  s.fence();  // every send buffer is published and final
  if (src.count > 0) detail::fold_all_ranks(s, src, own, result(rank));
  s.fence();  // every slice is final
  if (root)
    for (int k = 1; k < a.p; ++k) {
      const int j = (rank + k) % a.p;
      if (result(j).count > 0) s.remote(j, result(j), slice(out_buffer, j));
    }
  s.fence();  // nobody returns (freeing its scratch) while the root still reads it
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return std::min(split_cost(a, elem, m), alone_cost(a, elem, m));
}

const algorithm info{
    .name = "direct",
    .coll = collective::reduce,
    .summary = "shared memory (outside the one-ported model): rank r reduces slice r of all inputs in place, in "
               "rank order, the root copies the slices (3 fences); short vectors: the root reduces alone (2 fences)",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
