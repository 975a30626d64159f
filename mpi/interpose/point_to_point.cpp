// The blocking point-to-point calls, while served nonblocking collectives are in flight
// (nonblocking.cpp): MPI's progress rule lets a correct program wait here for a peer that
// itself waits for this rank's part of a nonblocking collective, so each becomes its
// nonblocking form plus progress. The probes are progress points too. Otherwise straight
// to PMPI. (MPI_Bsend and MPI_Ibsend never wait for the receiver.)
#include <memory>

#include "progress.hpp"

using namespace ranklab::mpi::interpose;

namespace {

// Posts with `post` (a PMPI_I... call writing the request) and waits with progress.
template <class Post>
int post_and_wait(Post&& post, MPI_Status* status) {
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = post(&r);
  return rc != MPI_SUCCESS ? rc : wait_native(&r, status);
}

// Both requests of a send-receive; the receive's status.
int wait_both(MPI_Request requests[2], MPI_Status* status) {
  MPI_Status statuses[2];
  const int rc = test_until([&](int* done) { return PMPI_Testall(2, requests, done, statuses); });
  if (status != MPI_STATUS_IGNORE) *status = statuses[0];
  return rc == MPI_ERR_IN_STATUS ? statuses[0].MPI_ERROR != MPI_SUCCESS ? statuses[0].MPI_ERROR : statuses[1].MPI_ERROR
                                 : rc;
}

}  // namespace

extern "C" int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                        MPI_Status* status) {
  if (!active()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  return post_and_wait([&](MPI_Request* r) { return PMPI_Irecv(buf, count, type, source, tag, comm, r); }, status);
}

extern "C" int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!active()) return PMPI_Send(buf, count, type, dest, tag, comm);
  return post_and_wait([&](MPI_Request* r) { return PMPI_Isend(buf, count, type, dest, tag, comm, r); },
                       MPI_STATUS_IGNORE);
}

extern "C" int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!active()) return PMPI_Ssend(buf, count, type, dest, tag, comm);
  return post_and_wait([&](MPI_Request* r) { return PMPI_Issend(buf, count, type, dest, tag, comm, r); },
                       MPI_STATUS_IGNORE);
}

extern "C" int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!active()) return PMPI_Rsend(buf, count, type, dest, tag, comm);
  return post_and_wait([&](MPI_Request* r) { return PMPI_Irsend(buf, count, type, dest, tag, comm, r); },
                       MPI_STATUS_IGNORE);
}

extern "C" int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                            MPI_Status* status) {
  if (!active())
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, status);
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]);
  if (rc != MPI_SUCCESS) {
    PMPI_Cancel(&r[0]);
    PMPI_Wait(&r[0], MPI_STATUS_IGNORE);
    return rc;
  }
  return wait_both(r, status);
}

// The message sent goes from a packed copy (MPI_PACKED matches any receive of the same type
// signature), so that the receive can land in the buffer at once.
extern "C" int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                                    int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (!active()) return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  int bytes = 0, position = 0;
  int rc = PMPI_Pack_size(count, type, comm, &bytes);
  if (rc != MPI_SUCCESS) return rc;
  const auto packed = std::make_unique<char[]>(static_cast<std::size_t>(bytes > 0 ? bytes : 1));
  rc = PMPI_Pack(buf, count, type, packed.get(), bytes, &position, comm);
  if (rc != MPI_SUCCESS) return rc;
  return MPI_Sendrecv(packed.get(), position, MPI_PACKED, dest, sendtag, buf, count, type, source, recvtag, comm,
                      status);
}

extern "C" int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!active()) return PMPI_Probe(source, tag, comm, status);
  return test_until([&](int* found) { return PMPI_Iprobe(source, tag, comm, found, status); });
}

extern "C" int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (!active()) return PMPI_Mprobe(source, tag, comm, message, status);
  return test_until([&](int* found) { return PMPI_Improbe(source, tag, comm, found, message, status); });
}

extern "C" int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  if (!active()) return PMPI_Mrecv(buf, count, type, message, status);
  return post_and_wait([&](MPI_Request* r) { return PMPI_Imrecv(buf, count, type, message, r); }, status);
}

extern "C" int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (active()) step();
  return PMPI_Iprobe(source, tag, comm, flag, status);
}

extern "C" int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  if (active()) step();
  return PMPI_Improbe(source, tag, comm, flag, message, status);
}
