// MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter(_block), MPI_Scan, MPI_Exscan and their
// nonblocking forms: served on ranklab's element types and operators (types.hpp). ranklab
// takes the same buffer for input and output in allreduce, scan and exscan; the other
// collectives' MPI_IN_PLACE goes through a temporary copy.
#include <cstring>
#include <numeric>
#include <utility>

#include "movement.hpp"
#include "types.hpp"

using namespace ranklab;
using namespace ranklab::mpi::interpose;

namespace {

// The job's operator, for `count` elements of `t`.
job reduction_job(const comm_state& st, collective c, std::uint64_t count, int root, MPI_Datatype t, MPI_Op o) {
  auto spec = std::make_unique<reduction_spec>(t, o);
  job j{make_call(c, st.size, count, root, spec->type(), spec->reduction())};
  j.spec = std::move(spec);
  return j;
}

// An elementwise reduction (allreduce, scan, exscan) of `count` elements.
template <class Native>
int elementwise(collective c, const void* sendbuf, void* recvbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm,
                MPI_Request* request, Native&& native) {
  return serve(
      c, comm, request,
      [=](const comm_state&) {
        return handles{t, MPI_DATATYPE_NULL, o};
      },
      [&](comm_state& st) {
        job j = reduction_job(st, c, nonnegative(count), 0, t, o);
        j.in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
        j.out = recvbuf;
        return j;
      },
      std::forward<Native>(native));
}

// reduce_scatter(_block): in place, the input is recvbuf and the result lands in a
// temporary, copied to the front of recvbuf afterwards.
job scattered(job j, const comm_state& st, const void* sendbuf, void* recvbuf) {
  if (sendbuf != MPI_IN_PLACE) {
    j.in = sendbuf;
    j.out = recvbuf;
    return j;
  }
  const std::uint64_t bytes = block_count(j.c.args, st.rank) * j.c.type.size;
  std::byte* result = j.temporary(bytes);
  j.in = recvbuf;
  j.out = result;
  j.after = [=] {
    if (bytes > 0) std::memcpy(recvbuf, result, bytes);
  };
  return j;
}

int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
           MPI_Request* request) {
  return serve(
      collective::reduce, comm, request,
      [=](const comm_state&) {
        return handles{datatype, MPI_DATATYPE_NULL, op};
      },
      [&](comm_state& st) {
        require_root(st, root);
        job j = reduction_job(st, collective::reduce, nonnegative(count), root, datatype, op);
        j.in = sendbuf;
        if (st.rank != root) {
          require_not_in_place(st, collective::reduce, sendbuf);
          return j;
        }
        j.out = recvbuf;
        if (sendbuf != MPI_IN_PLACE) return j;
        // In place at the root: the root's input is recvbuf, which the call overwrites.
        const std::uint64_t bytes = j.c.args.count * j.c.type.size;
        std::byte* input = j.temporary(bytes);
        if (bytes > 0) std::memcpy(input, recvbuf, bytes);
        j.in = input;
        return j;
      },
      [=](MPI_Request* r) { return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, r); });
}

int reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm, MPI_Request* request) {
  return serve(
      collective::reduce_scatter_block, comm, request,
      [=](const comm_state&) {
        return handles{datatype, MPI_DATATYPE_NULL, op};
      },
      [&](comm_state& st) {
        return scattered(reduction_job(st, collective::reduce_scatter_block, nonnegative(recvcount), 0, datatype, op),
                         st, sendbuf, recvbuf);
      },
      [=](MPI_Request* r) { return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, r); });
}

int reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  return serve(
      collective::reduce_scatter, comm, request,
      [=](const comm_state&) {
        return handles{datatype, MPI_DATATYPE_NULL, op};
      },
      [&](comm_state& st) {
        auto spec = std::make_unique<reduction_spec>(datatype, op);
        std::vector<std::uint64_t> counts;
        for (int k = 0; k < st.size; ++k) counts.push_back(nonnegative(recvcounts[k]));
        job j{make_vcall(collective::reduce_scatter, st.size, counts, {}, 0, spec->type(), spec->reduction())};
        j.spec = std::move(spec);
        return scattered(std::move(j), st, sendbuf, recvbuf);
      },
      [=](MPI_Request* r) { return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, r); });
}

int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm,
              MPI_Request* request) {
  return elementwise(collective::allreduce, sendbuf, recvbuf, count, t, o, comm, request,
                     [=](MPI_Request* r) { return PMPI_Iallreduce(sendbuf, recvbuf, count, t, o, comm, r); });
}

int scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm, MPI_Request* request) {
  return elementwise(collective::scan, sendbuf, recvbuf, count, t, o, comm, request,
                     [=](MPI_Request* r) { return PMPI_Iscan(sendbuf, recvbuf, count, t, o, comm, r); });
}

// Rank 0's recvbuf is undefined in MPI; ranklab leaves it as it was.
int exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm,
           MPI_Request* request) {
  return elementwise(collective::exscan, sendbuf, recvbuf, count, t, o, comm, request,
                     [=](MPI_Request* r) { return PMPI_Iexscan(sendbuf, recvbuf, count, t, o, comm, r); });
}

}  // namespace

extern "C" int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
  return allreduce(sendbuf, recvbuf, count, datatype, op, comm, nullptr);
}
extern "C" int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  return allreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}

extern "C" int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm) {
  return scan(sendbuf, recvbuf, count, datatype, op, comm, nullptr);
}
extern "C" int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                         MPI_Request* request) {
  return scan(sendbuf, recvbuf, count, datatype, op, comm, request);
}

extern "C" int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm) {
  return exscan(sendbuf, recvbuf, count, datatype, op, comm, nullptr);
}
extern "C" int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm, MPI_Request* request) {
  return exscan(sendbuf, recvbuf, count, datatype, op, comm, request);
}

extern "C" int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                          MPI_Comm comm) {
  return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, nullptr);
}
extern "C" int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                           MPI_Comm comm, MPI_Request* request) {
  return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

extern "C" int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                        MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, nullptr);
}
extern "C" int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                         MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
}

extern "C" int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm) {
  return reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, nullptr);
}
extern "C" int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}
