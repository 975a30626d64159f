// The rank-ordered fold of the shared-memory direct reductions (reduce, allreduce,
// reduce_scatter(_block)): dst = src_0 (+) (src_1 (+) ( ... (+) src_{p-1})), where src_j is
// region `src` of rank j's buffers and this rank's own part is read from `own` (its buffer,
// or a copy kept for in-place calls). Folded from the right, each step in_j (+) dst, so
// non-commutative operators get MPI's order.
#pragma once
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

inline void fold_all_ranks(schedule& s, region src, region own, region dst) {
  auto read = [&](int j, combine how) {
    if (j == s.rank()) s.reduce(own, dst, how);
    else s.remote(j, src, dst, how);
  };
  read(s.size() - 1, combine::copy);
  for (int j = s.size() - 2; j >= 0; --j) read(j, combine::reduce_in_left);
}

}  // namespace ranklab::detail
