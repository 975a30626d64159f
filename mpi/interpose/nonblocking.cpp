// The nonblocking collectives go to the native library, counted as "nonblocking: native".
// Serving them would need their progress inside MPI_Wait/MPI_Test and the rest of the request
// calls (intercepted too, with generalized requests); running the schedule to completion at
// the call instead would break programs that rely on the call returning before the other
// ranks arrive (a barrier started before the sends it must not block, as in Hoefler,
// Siebert and Lumsdaine, "Scalable communication protocols for dynamic sparse data exchange").
#include "interpose.hpp"

namespace ranklab::mpi::interpose {
namespace {

template <class F, class... A>
int native(collective c, MPI_Comm comm, F&& f, A... args) {
  int rank = -1;
  if (comm != MPI_COMM_NULL) PMPI_Comm_rank(comm, &rank);
  record_native(nonblocking_row(c), reason::nonblocking, rank == 0);
  return f(args...);
}

}  // namespace
}  // namespace ranklab::mpi::interpose

using ranklab::collective;
using ranklab::mpi::interpose::native;

extern "C" int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return native(collective::barrier, comm, PMPI_Ibarrier, comm, request);
}

extern "C" int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                          MPI_Request* request) {
  return native(collective::bcast, comm, PMPI_Ibcast, buffer, count, datatype, root, comm, request);
}

extern "C" int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                           MPI_Comm comm, MPI_Request* request) {
  return native(collective::reduce, comm, PMPI_Ireduce, sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

extern "C" int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  return native(collective::allreduce, comm, PMPI_Iallreduce, sendbuf, recvbuf, count, datatype, op, comm, request);
}

extern "C" int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return native(collective::allgather, comm, PMPI_Iallgather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                recvtype, comm, request);
}

extern "C" int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  return native(collective::allgatherv, comm, PMPI_Iallgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                displs, recvtype, comm, request);
}

extern "C" int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return native(collective::reduce_scatter, comm, PMPI_Ireduce_scatter, sendbuf, recvbuf, recvcounts, datatype, op,
                comm, request);
}

extern "C" int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                         MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return native(collective::reduce_scatter_block, comm, PMPI_Ireduce_scatter_block, sendbuf, recvbuf, recvcount,
                datatype, op, comm, request);
}

extern "C" int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                         MPI_Request* request) {
  return native(collective::scan, comm, PMPI_Iscan, sendbuf, recvbuf, count, datatype, op, comm, request);
}

extern "C" int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm, MPI_Request* request) {
  return native(collective::exscan, comm, PMPI_Iexscan, sendbuf, recvbuf, count, datatype, op, comm, request);
}

extern "C" int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return native(collective::scatter, comm, PMPI_Iscatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                root, comm, request);
}

extern "C" int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Request* request) {
  return native(collective::scatterv, comm, PMPI_Iscatterv, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                recvtype, root, comm, request);
}

extern "C" int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return native(collective::gather, comm, PMPI_Igather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                root, comm, request);
}

extern "C" int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                            MPI_Request* request) {
  return native(collective::gatherv, comm, PMPI_Igatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                recvtype, root, comm, request);
}

extern "C" int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return native(collective::alltoall, comm, PMPI_Ialltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                comm, request);
}

extern "C" int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request* request) {
  return native(collective::alltoallv, comm, PMPI_Ialltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                recvcounts, rdispls, recvtype, comm, request);
}
