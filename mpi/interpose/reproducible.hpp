// RANKLAB_MPI_REPRODUCIBLE_SUM=1: MPI_SUM on MPI_DOUBLE and MPI_FLOAT (and Fortran's
// MPI_DOUBLE_PRECISION, MPI_REAL8, MPI_REAL, MPI_REAL4) served through ranklab's exact
// accumulators (ranklab/repro_sum.hpp): every element of the caller's buffer becomes a
// repro_sum<T>, the accumulators are reduced with ops::repro_merge by ranklab's algorithm,
// and each result is rounded once back into the caller's buffer. An unmodified program then
// gets the same bits for any number of processes, any algorithm and any order: the exact
// sum, rounded to nearest even. Cost: an accumulator per element in flight (552 bytes per
// double, 96 per float), one buffer of them for allreduce, scan and exscan, input and
// result buffers for reduce (at the root), reduce_scatter_block and reduce_scatter.
//
// The decision depends on the environment variable, the operator and the predefined
// datatype only: every rank decides alike when every rank has the variable (mpirun -x).
// Such calls never go to the native collective through the MPI selection table. A call the
// interposer does not serve at all (an intercommunicator, RANKLAB_MPI_NONBLOCKING=native
// for a nonblocking one, an invalid argument) is the MPI library's, summed its way.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "job.hpp"

namespace ranklab::mpi::interpose {

enum class repro_kind : std::uint8_t { none, float32, float64 };

// The element type a reproducible sum of (t, o) runs on; none unless the opt-in is set and
// o is MPI_SUM on one of the types above.
repro_kind reproducible_sum(MPI_Datatype t, MPI_Op o);

// The jobs. allreduce, scan, exscan: `count` values in, as many out (MPI_IN_PLACE: recvbuf
// both); exscan leaves rank 0's recvbuf as it was.
job reproducible_elementwise(const comm_state& st, collective c, repro_kind k, const void* sendbuf, void* recvbuf,
                             std::uint64_t count);
// reduce to `root` (MPI_IN_PLACE at the root only: checked by the caller).
job reproducible_reduce(const comm_state& st, repro_kind k, const void* sendbuf, void* recvbuf, std::uint64_t count,
                        int root);
// reduce_scatter_block (counts: p times the block) and reduce_scatter (counts: the caller's).
job reproducible_scattered(const comm_state& st, collective c, repro_kind k, const void* sendbuf, void* recvbuf,
                           const std::vector<std::uint64_t>& counts);

}  // namespace ranklab::mpi::interpose
