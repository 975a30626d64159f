// The oneTBB baseline of `ranklab bench` (impl "tbb"): what a threaded program would write
// instead of a collective when all p "ranks'" buffers live in one address space. One
// thread calls it; tbb::parallel_for spreads the work over the machine's cores:
//   reduce, allreduce     the p arrays summed elementwise over element ranges into root's /
//                         rank 0's result (allreduce: each range then copied to the other p-1)
//   scan, exscan          per element range, the running sums rank by rank
//   reduce_scatter(_block) per element range of the whole vector, the sum into its owner's block
//   bcast                 parallel copies of root's buffer into the p-1 others
//   allgather(v), gather(v), scatter(v), alltoall(v)   parallel copies of the blocks
//   barrier               none (nothing to write): n/a
// Copies are cut into chunks of at most 64 KiB so that large and small blocks balance.
#pragma once
#include <optional>

#include "bench/measure.hpp"

namespace ranklab::tools::bench {

// nullopt when the collective has no TBB counterpart (barrier).
std::optional<impl_result> measure_tbb(const call& c, const timing_options& o, bool check);

}  // namespace ranklab::tools::bench
