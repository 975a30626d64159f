// One configuration of ranklab_mpi_bench: a collective, p and a size in bytes per rank (with
// the meaning bench/peers/mpi_collectives.c and `ranklab bench` give it: tools/bench/
// workload.hpp), its buffers on this rank, and the two ways to run it on those same buffers:
// the MPI's native collective and ranklab's schedule over point-to-point (ranklab::mpi::comm).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ranklab/call.hpp"
#include "ranklab/mpi.hpp"

namespace ranklab::mpi_bench {

// The collectives the benchmark knows: those with both a native MPI call and one-ported
// ranklab algorithms that take the same arguments.
const std::vector<collective>& supported_collectives();

class bench_case {
 public:
  // bytes as requested; reductions round it down to whole int32 (reported_bytes()).
  // Throws usage_error when the counts do not fit MPI's int arguments.
  bench_case(collective c, int p, int rank, std::uint64_t bytes);

  collective coll() const { return coll_; }
  std::uint64_t reported_bytes() const { return bytes_; }
  // The call ranklab runs with `algo_name` ("auto" or a registered name; the view must
  // outlive the call).
  call ranklab_call(std::string_view algo_name) const;

  void run_native(long iters);
  void run_ranklab(mpi::comm& c, const call& cl, long iters);

  // Verification, once before timing: the native result is recorded, then every algorithm's
  // result must equal it byte for byte. Both start from a fresh fill of the inputs and an
  // output pre-set to a pattern the result cannot keep (a different one for each side), so
  // that an output left untouched is caught too. Returns this rank's first difference, or "".
  void record_native_result();
  std::string compare_ranklab_result(mpi::comm& c, const call& cl);

 private:
  void fill(std::byte output_pattern);

  collective coll_;
  int p_, rank_;
  std::uint64_t bytes_;
  call base_;                         // the call with "auto": type, counts
  int count_ = 0;                     // MPI count argument (elements per rank or block)
  std::vector<int> counts_, displs_;  // allgatherv (bytes), reduce_scatter (int32)
  std::size_t in_bytes_ = 0, out_bytes_ = 0;
  std::vector<std::byte> in_, out_, native_out_;
};

}  // namespace ranklab::mpi_bench
