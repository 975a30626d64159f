// The MPI peers' timing convention (bench/peers/peer_common.h: peer_measure_ex) applied to
// several variants of one configuration at once, their batches interleaved: batch b of every
// variant runs before batch b+1 of any. On a shared machine the load then changes under all
// variants alike, and their ratio, the figure this benchmark is for, stays meaningful where
// timing one variant after the other would credit a quiet minute to whichever ran in it.
// Everything else is the peers' convention, with their code: per variant, calibration
// doubling until a batch takes >= PEER_CALIB_SECONDS, then batches of back-to-back calls,
// together about --time, with a barrier only between batches (peer_time_batch_at), a batch's
// figure the max over ranks of the per-call mean, the median over batches, and the budget
// (--max-time, per variant) that runs fewer batches, at least one, when calls are slow.
#pragma once
#include <vector>

#pragma GCC diagnostic push  // the peers' C helpers a file has no use for (peer_alloc ...)
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-variable"
#include "peer_common.h"
#pragma GCC diagnostic pop

namespace ranklab::mpi_bench {

struct timed_variant {
  peer_kernel kernel = nullptr;
  void* context = nullptr;
  double seconds = 0;  // median per call
  peer_result result{};
};

// Every rank calls this with the same variants in the same order.
void measure_interleaved(const peer_opts& o, std::vector<timed_variant>& variants, MPI_Comm comm);

}  // namespace ranklab::mpi_bench
