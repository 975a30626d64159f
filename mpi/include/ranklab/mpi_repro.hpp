// Reproducible sums for programs that call MPI themselves: the accumulators of
// ranklab/repro_sum.hpp (repro_sum<float>, repro_sum<double>) as an MPI datatype, and their
// exact merge (ops::repro_merge) as a commutative MPI operator, so that any MPI collective of
// any MPI library reduces them with the same bits for any number of processes:
//
//   ranklab::repro_sum<double> acc;
//   acc.add(std::span<const double>(local));
//   MPI_Allreduce(MPI_IN_PLACE, &acc, 1, ranklab::mpi::repro_sum_type<double>(),
//                 ranklab::mpi::repro_merge_op(), MPI_COMM_WORLD);
//   double sum = acc.value();         // what ranklab::mpi::sum_reproducible(comm, local) does
//
// On a ranklab::mpi::comm (or a thread_team's team_comm) the typed collectives take ops::repro_merge and
// spans of accumulators directly, like the thread comm; ranklab::sum_reproducible(c, local)
// and the *_reproducible forms of repro_sum.hpp work on them unchanged.
//
// The datatype is MPI_Type_contiguous(sizeof(repro_sum<T>), MPI_BYTE), committed; the
// operator comes from MPI_Op_create(commute = 1). Both are made at their first use (MPI
// must be initialized; thread-safe) and freed when MPI_Finalize begins (an attribute of
// MPI_COMM_SELF). The operator merges either accumulator type (it reads their headers); an
// element that is not an accumulator aborts the job with a message (an MPI operator cannot
// report an error). The bits do not depend on the MPI library's reduction order, but only
// elements that every process built with the same ranklab layout may meet (the same
// library version on every process: the layout is the bytes).
#pragma once
#include <mpi.h>

#include <span>

#include "ranklab/repro_sum.hpp"

namespace ranklab::mpi {

template <class T>
MPI_Datatype repro_sum_type();
template <>
MPI_Datatype repro_sum_type<float>();
template <>
MPI_Datatype repro_sum_type<double>();

MPI_Op repro_merge_op();

// The global sum over `comm` of every process's `local` values: one MPI_Allreduce of one
// accumulator (552 bytes for double, 96 for float). Identical bits on every process, for any
// number of processes and any split of the same global data. Throws mpi_error when MPI
// returns an error (with the communicator's default handler, MPI aborts first).
double sum_reproducible(MPI_Comm comm, std::span<const double> local);
float sum_reproducible(MPI_Comm comm, std::span<const float> local);

// Element-wise: out[i] = the reproducible sum of in[i] over the processes of `comm`, through
// MPI_Allreduce of in.size() accumulators (552 / 96 bytes each in flight). `in` and `out`
// may be the same memory.
void allreduce_reproducible(MPI_Comm comm, std::span<const double> in, std::span<double> out);
void allreduce_reproducible(MPI_Comm comm, std::span<const float> in, std::span<float> out);

}  // namespace ranklab::mpi
