/* The reduction collectives of the interposer's conformance suite, blocking and
 * nonblocking, behind one entry point: shared by interpose_conformance_reductions.c
 * (predefined operators) and interpose_conformance_userops.c (MPI_Op_create). */
#pragma once
#include "conformance.h"

enum { c_reduce, c_allreduce, c_reduce_scatter, c_reduce_scatter_block, c_scan, c_exscan, colls };
static const char* const names[2][colls] = {
    {"MPI_Reduce", "MPI_Allreduce", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan"},
    {"MPI_Ireduce", "MPI_Iallreduce", "MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block", "MPI_Iscan", "MPI_Iexscan"}};

/* Calls reduction collective `coll`, blocking or (nonblocking) with request *r: n elements
 * per rank, or counts[] for MPI_Reduce_scatter; root for MPI_Reduce only. */
static inline int call_reduction(int coll, bool nonblocking, const void* send, void* recv, int n, const int* counts,
                                 MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm, MPI_Request* r) {
  switch (coll) {
    case c_reduce:
      return nonblocking ? MPI_Ireduce(send, recv, n, t, o, root, comm, r) : MPI_Reduce(send, recv, n, t, o, root, comm);
    case c_allreduce:
      return nonblocking ? MPI_Iallreduce(send, recv, n, t, o, comm, r) : MPI_Allreduce(send, recv, n, t, o, comm);
    case c_reduce_scatter:
      return nonblocking ? MPI_Ireduce_scatter(send, recv, counts, t, o, comm, r)
                         : MPI_Reduce_scatter(send, recv, counts, t, o, comm);
    case c_reduce_scatter_block:
      return nonblocking ? MPI_Ireduce_scatter_block(send, recv, n, t, o, comm, r)
                         : MPI_Reduce_scatter_block(send, recv, n, t, o, comm);
    case c_scan:
      return nonblocking ? MPI_Iscan(send, recv, n, t, o, comm, r) : MPI_Scan(send, recv, n, t, o, comm);
    case c_exscan:
      return nonblocking ? MPI_Iexscan(send, recv, n, t, o, comm, r) : MPI_Exscan(send, recv, n, t, o, comm);
  }
  return MPI_ERR_OTHER;
}
