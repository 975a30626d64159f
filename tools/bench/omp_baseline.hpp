// The OpenMP baseline of `ranklab bench` (impl "openmp"): what a threaded program written
// with OpenMP does instead of a collective. p threads of ONE `omp parallel num_threads(p)`
// region (made once per configuration; the runtime's defaults: no OMP_* or GOMP_* setting
// is changed) each play a rank on the ranks' own buffers, and every thread's calls are timed
// as the ranks' are (lockstep.hpp: a batch's figure is the max over threads of the per-call
// mean). Unlike the oneTBB baseline (one caller, work spread over the cores) this is SPMD:
// its figure includes the synchronisation a program pays, and p > cores oversubscribes the
// machine as the rank threads do. Each call is one of two idioms, by the largest block a
// thread contributes:
//   up to 1 KiB, "post + one barrier": each thread copies its contribution (its input; the
//     root's buffer for bcast, scatter) into its own cache-line-padded slot, `omp barrier`,
//     then reads what it needs from the slots. The slots alternate between two sets from
//     call to call, so that the next call's posts cannot overwrite a slot a slower thread
//     still reads: one barrier per call, and every buffer is free when the call returns.
//   above 1 KiB, "barrier + in place + barrier": `omp barrier` (every input ready), each
//     thread works on the others' buffers directly, `omp barrier` (every result complete,
//     no input still read): no staging copy, two barriers per call.
// The work between the barriers, per collective:
//   barrier                     `omp barrier`, nothing else
//   allreduce, reduce           posted: each thread (reduce: the root) sums the p slots into
//                               its output. In place: thread r sums its 1/p slice of the
//                               vector over the p inputs into its output and copies that
//                               slice to the other outputs (reduce: into the root's output)
//   scan, exscan                posted: thread r sums slots 0..r (exscan 0..r-1). In place:
//                               thread r runs the prefix sums of its slice through all ranks
//   reduce_scatter(_block)      thread r sums its own block over the p contributions
//   bcast, scatter(v)           each thread copies its part of the root's buffer
//   allgather(v), alltoall(v)   each thread copies the blocks it receives into its output
//   gather(v)                   posted: the root copies the p blocks. In place: each thread
//                               copies its block into the root's output (p parallel copies)
// Reductions are the bench's int32 sums. Without OpenMP at build time the baseline is
// absent (openmp_available() false, rows "n/a").
#pragma once
#include <optional>
#include <string>

#include "bench/measure.hpp"

namespace ranklab::tools::bench {

// The largest contribution per thread staged through the posting slots.
inline constexpr std::uint64_t openmp_posted_max_bytes = 1024;

// Whether this build has the OpenMP baseline.
bool openmp_available();
// For the machine table: "libgomp (GCC 12.2), OpenMP 201511 (_OPENMP)", or "not built ...".
std::string openmp_runtime();
// The OpenMP environment variables set in this process ("OMP_PROC_BIND=close ..."), or
// "none (the runtime's defaults)": they change what the baseline measures.
std::string openmp_environment();

// nullopt when the baseline is not built. The result's `selected` names the idiom used.
std::optional<impl_result> measure_openmp(const call& c, const timing_options& o, bool check);

}  // namespace ranklab::tools::bench
