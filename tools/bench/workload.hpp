// What `ranklab bench` calls: the meaning of "bytes per rank" for each collective (the same
// meaning bench/peers/mpi_collectives.c gives it, so that ranklab and the MPI peers time the
// same calls) and the call for a (collective, p, bytes, algorithm). Unit-tested in
// tests/test_bench_output.cpp.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "ranklab/call.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/datatype.hpp"

namespace ranklab::tools::bench {

// ---- the meaning of "bytes per rank" -----------------------------------------------------
// bcast                       the buffer (uint8), root 0
// reduce, allreduce, scan,    bytes/4 int32 (at least 1), sum; reduce: root 0
//   exscan
// allgather, gather           each rank's contribution (uint8); gather: root 0 receives p*bytes
// allgatherv, gatherv         "regular": every rank contributes bytes (uint8)
// scatter, scatterv           the block each rank receives (uint8), root 0 ("regular" for v)
// alltoall, alltoallv         the block sent to each destination (uint8); each rank sends
//                             and receives p*bytes ("regular" for v)
// reduce_scatter_block,       the block each rank receives: bytes/4 int32, sum (each rank
//   reduce_scatter            contributes p*bytes; "regular" for reduce_scatter)
// barrier                     bytes = 0, reported once
bool uses_int32(collective c);
// The size as reported: reductions round down to whole int32 (at least one), barrier 0.
std::uint64_t reported_bytes(collective c, std::uint64_t requested);
// Bytes of one rank's result (the root's for gather): the size effective bandwidth is
// measured against (bcast/reduce/allreduce/scan: bytes; allgather, gather, alltoall: p*bytes).
std::uint64_t result_bytes(collective c, int p, std::uint64_t bytes);
// The memcpy baselines of (c, p, bytes): a copy of one rank's result (result_bytes) by one
// thread ("memcpy") and by two threads each copying half ("memcpy2", the bound of the
// comparison); none for barrier. The size copied depends on p for the gathering
// collectives, so that their 64 KiB row at p = 16 carries a 1 MiB copy.
struct memcpy_baseline {
  const char* impl;
  std::uint64_t copy_bytes;
  int threads;
};
std::vector<memcpy_baseline> memcpy_baselines(collective c, int p, std::uint64_t bytes);
// A call of c with `count` elements per block, sum; the v-collectives "regular": every
// rank's block (every pair's, for alltoallv) holds `count` elements.
call make_regular_call(collective c, int p, std::uint64_t count, const datatype& type,
                       std::string_view algo_name = "auto", int root = 0);
// The call for (c, p, bytes) with algorithm `algo_name` ("auto" or a registered name; the
// view must outlive the call). bytes as reported_bytes returns.
call make_bench_call(collective c, int p, std::uint64_t bytes, std::string_view algo_name);
// The collectives `ranklab bench --backend mpi` times (mpi/bench/ranklab_mpi_bench): those
// with a native MPI call that takes the same arguments.
const std::vector<collective>& mpi_bench_collectives();
// Bytes of all ranks' input and output buffers together.
std::uint64_t buffer_bytes(const call& c);

}  // namespace ranklab::tools::bench
