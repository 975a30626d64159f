// Pure helpers of `ranklab bench`: batch statistics, and what "bytes per rank" means for
// each collective (the same meaning bench/peers/mpi_collectives.c gives it, so ranklab and
// the MPI peers time the same calls). Unit-tested in tests/test_bench_output.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "option_parse.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/comm.hpp"

namespace ranklab::tools::bench {

// The option parsers live in option_parse.hpp (every subcommand shares them); bench code
// and its tests name them as bench:: too.
using tools::parse_int_list;
using tools::parse_size;
using tools::parse_size_list;
using tools::size_label;
using tools::split_list;

struct batch_stats {
  double median = 0, min = 0, max = 0;
};
double median(std::vector<double> v);
batch_stats summarize(const std::vector<double>& v);

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
// The call for (c, p, bytes) with algorithm `algo` ("auto" or a registered name; the view
// must outlive the call). bytes as reported_bytes returns.
call make_bench_call(collective c, int p, std::uint64_t bytes, std::string_view algo);
// Bytes of all ranks' input and output buffers together.
std::uint64_t buffer_bytes(const call& c);

}  // namespace ranklab::tools::bench
