// The measurements of `ranklab bench` (timing conventions: bench/timing.hpp).
// measure_ranklab times one call on a team of rank threads through comm::run_collective,
// after checking its result once against the sequential reference (check.hpp);
// measure_memcpy times the memcpy baselines (one thread, or two threads each copying half)
// with the ranks' statistics (lockstep.hpp): warm-up calls first, a barrier before each
// batch, each thread timing its own copies, the max over threads per batch.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "bench/timing.hpp"
#include "ranklab/call.hpp"
#include "ranklab/check.hpp"
#include "ranklab/team.hpp"

namespace ranklab::tools::bench {

// What an implementation's measurement of one configuration gave.
struct impl_result {
  measurement m;
  std::string selected;    // ranklab "auto": the algorithm the library picked
  bool checked = false;    // compared with the sequential reference
  bool verified = false;   // ... and equal to it
  std::string difference;  // the first difference when not verified
  bool timed = false;      // false: not timed (check failed)
};

// The environment's team options, with a deadlock timeout of at least `patience`: a
// loaded, oversubscribed machine can stall a rank for long without any deadlock.
team_options measuring_team_options(std::chrono::milliseconds patience);

// Every rank's buffers for c: with check, the check harness's data and reference
// (make_test_data); without, only the buffers (no reference to hold), filled with a pattern.
test_data bench_data(const call& c, bool check);
// Small buffers of different ranks, allocated one after the other, can share a cache line:
// every call would then pay for false sharing between the cores that no program with
// buffers of its own (nor an MPI process) pays. Moves each buffer to at least a page of its
// own (reallocating keeps the contents); take buffers() afterwards.
void give_buffers_own_pages(test_data& d);

// The call on p rank threads (p = c.args.p). check: the first call's result is compared
// with the sequential reference before timing; a wrong result is not timed.
impl_result measure_ranklab(const call& c, const timing_options& o, bool check, bool rewrite = false);

// The part of a `bytes`-byte copy that thread t of `threads` copies: whole 64-byte lines,
// the last thread the rest; together the shares cover [0, bytes) once.
struct copy_range {
  std::uint64_t offset = 0, bytes = 0;
};
copy_range copy_share(std::uint64_t bytes, int threads, int t);

// memcpy of `bytes` bytes by one thread, or by `threads` threads each copying its share.
measurement measure_memcpy(std::uint64_t bytes, int threads, const timing_options& o);

}  // namespace ranklab::tools::bench
