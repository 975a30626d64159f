// MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter(_block), MPI_Scan, MPI_Exscan and their
// nonblocking forms: served on ranklab's element types and operators, or the interposer's
// own kernels (types.hpp). ranklab reduces the buffers in their packed form (the type
// signature's values back to back: staging.hpp), so a buffer of a type with padding
// (MPI_DOUBLE_INT: 12 bytes in a 16-byte extent) goes through a temporary, packed before
// the call or unpacked after it; a dense one is used as it is. ranklab takes the same
// buffer for input and output in allreduce, scan and exscan; the other collectives'
// MPI_IN_PLACE goes through a temporary.
#include <numeric>
#include <utility>

#include "movement.hpp"
#include "reproducible.hpp"
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

// The buffers of allreduce, scan and exscan: `count` elements of `t` in, as many out. At
// exscan's rank 0, whose result MPI leaves undefined and ranklab does not write, recvbuf is
// staged both ways so that it comes back as it was.
void elementwise_buffers(job& j, const comm_state& st, collective c, const void* sendbuf, void* recvbuf,
                         std::uint64_t count, MPI_Datatype t) {
  const typed_blocks result = one_block(recvbuf, count, t);
  if (sendbuf == MPI_IN_PLACE) {
    j.in = j.out = j.keep(staged::inout(result)).data();
    return;
  }
  j.in = j.keep(staged::input(one_block(sendbuf, count, t))).data();
  const bool untouched = c == collective::exscan && st.rank == 0;
  j.out = j.keep(untouched ? staged::inout(result) : staged::output(result)).data();
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
        if (const repro_kind k = reproducible_sum(t, o); k != repro_kind::none)
          return reproducible_elementwise(st, c, k, sendbuf, recvbuf, nonnegative(count));
        job j = reduction_job(st, c, nonnegative(count), 0, t, o);
        elementwise_buffers(j, st, c, sendbuf, recvbuf, nonnegative(count), t);
        return j;
      },
      std::forward<Native>(native));
}

// reduce_scatter(_block): `total` elements in, `mine` out. In place, the input is recvbuf
// and the result goes through a temporary to the front of it.
job scattered(job j, const void* sendbuf, void* recvbuf, std::uint64_t total, std::uint64_t mine, MPI_Datatype t) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  j.in = j.keep(staged::input(one_block(in_place ? recvbuf : sendbuf, total, t))).data();
  j.out = j.keep(staged::output(one_block(recvbuf, mine, t), in_place)).data();
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
        const std::uint64_t n = nonnegative(count);
        if (const repro_kind k = reproducible_sum(datatype, op); k != repro_kind::none) {
          if (st.rank != root) require_not_in_place(st, collective::reduce, sendbuf);
          return reproducible_reduce(st, k, sendbuf, recvbuf, n, root);
        }
        job j = reduction_job(st, collective::reduce, n, root, datatype, op);
        if (st.rank != root) {
          require_not_in_place(st, collective::reduce, sendbuf);
          j.in = j.keep(staged::input(one_block(sendbuf, n, datatype))).data();
          return j;
        }
        // In place at the root: the root's input is recvbuf, which the call overwrites: a copy.
        const bool in_place = sendbuf == MPI_IN_PLACE;
        j.in = j.keep(staged::input(one_block(in_place ? recvbuf : sendbuf, n, datatype), in_place)).data();
        j.out = j.keep(staged::output(one_block(recvbuf, n, datatype))).data();
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
        const std::uint64_t n = nonnegative(recvcount);
        if (const repro_kind k = reproducible_sum(datatype, op); k != repro_kind::none)
          return reproducible_scattered(st, collective::reduce_scatter_block, k, sendbuf, recvbuf,
                                        std::vector<std::uint64_t>(static_cast<std::size_t>(st.size), n));
        return scattered(reduction_job(st, collective::reduce_scatter_block, n, 0, datatype, op), sendbuf, recvbuf,
                         n * static_cast<std::uint64_t>(st.size), n, datatype);
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
        if (const repro_kind kind = reproducible_sum(datatype, op); kind != repro_kind::none)
          return reproducible_scattered(st, collective::reduce_scatter, kind, sendbuf, recvbuf, counts);
        const std::uint64_t total = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
        const std::uint64_t mine = counts[static_cast<std::size_t>(st.rank)];
        job j{make_vcall(collective::reduce_scatter, st.size, counts, {}, 0, spec->type(), spec->reduction())};
        j.spec = std::move(spec);
        return scattered(std::move(j), sendbuf, recvbuf, total, mine, datatype);
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
