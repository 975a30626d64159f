// MPI_Barrier, MPI_Bcast, MPI_Allgather(v), MPI_Alltoall(v) and their nonblocking forms:
// served on bytes.
#include "movement.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ranklab/errors.hpp"

namespace ranklab::mpi::interpose {

void require_root(const comm_state& st, int root) {
  if (root < 0 || root >= st.size) throw fallback{reason::invalid_argument};
}

void require_raw_packing() {
  if (!pack_is_raw()) throw fallback{reason::packing};
}

void expect_bytes(const comm_state& st, collective c, const char* what, std::uint64_t have, std::uint64_t want) {
  if (have != want)
    throw usage_error(st.rank, std::string(name(c)),
                      fmt::format("{} is {} bytes at rank {}, but the other ranks' arguments make it {} bytes "
                                  "(type signatures of sender and receiver differ)",
                                  what, have, st.rank, want));
}

void require_not_in_place(const comm_state& st, collective c, const void* buf) {
  if (buf == MPI_IN_PLACE)
    throw usage_error(st.rank, std::string(name(c)),
                      fmt::format("MPI_IN_PLACE at rank {}, which is not the root", st.rank));
}

}  // namespace ranklab::mpi::interpose

using namespace ranklab;
using namespace ranklab::mpi::interpose;

namespace {

// A job on byte buffers `in` (kept: the call reads it) and `out` (unpacked at the end).
job bytes_job(const call& c, staged in, staged out) {
  job j{c};
  j.in = j.keep(std::move(in)).data();
  j.out = j.keep(std::move(out)).data();
  return j;
}

int barrier(MPI_Comm comm, MPI_Request* request) {
  return serve(
      collective::barrier, comm, request, [](const comm_state&) { return handles{}; },
      [&](comm_state& st) { return job{make_call(collective::barrier, st.size, 0)}; },
      [=](MPI_Request* r) { return PMPI_Ibarrier(comm, r); });
}

int bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  return serve(
      collective::bcast, comm, request, [=](const comm_state&) { return handles{datatype}; },
      [&](comm_state& st) {
        require_root(st, root);
        require_raw_packing();
        const typed_blocks b = one_block(buffer, nonnegative(count), datatype);
        // The root's buffer is read (ranklab's bcast sends from the root's out buffer).
        staged buf = st.rank == root ? staged::input(b) : staged::output(b);
        job j{make_call(collective::bcast, st.size, buf.bytes(), root, bytes_type)};
        j.out = j.keep(std::move(buf)).data();
        return j;
      },
      [=](MPI_Request* r) { return PMPI_Ibcast(buffer, count, datatype, root, comm, r); });
}

int allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return serve(
      collective::allgather, comm, request,
      [=](const comm_state&) {
        return handles{sendbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : sendtype, recvtype};
      },
      [&](comm_state& st) {
        require_raw_packing();
        const std::uint64_t n = nonnegative(recvcount);
        staged out = staged::output(one_block(recvbuf, n * st.size, recvtype));
        const std::uint64_t block = out.bytes() / st.size;
        // In place, this rank's block already sits in recvbuf, which the call also writes.
        staged in = sendbuf == MPI_IN_PLACE ? staged::input(one_block(recvbuf, n, recvtype, n * st.rank), true)
                                            : staged::input(one_block(sendbuf, nonnegative(sendcount), sendtype));
        expect_bytes(st, collective::allgather, "the send buffer", in.bytes(), block);
        return bytes_job(make_call(collective::allgather, st.size, block, 0, bytes_type), std::move(in),
                         std::move(out));
      },
      [=](MPI_Request* r) {
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
      });
}

int allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
               const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return serve(
      collective::allgatherv, comm, request,
      [=](const comm_state&) {
        return handles{sendbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : sendtype, recvtype};
      },
      [&](comm_state& st) {
        require_raw_packing();
        const typed_blocks layout = v_blocks(recvbuf, recvcounts, displs, st.size, recvtype);
        const std::vector<std::uint64_t> counts = block_bytes(layout);
        staged out = staged::output(layout);
        staged in =
            sendbuf == MPI_IN_PLACE
                ? staged::input(one_block(recvbuf, layout.counts[st.rank], recvtype, layout.displs[st.rank]), true)
                : staged::input(one_block(sendbuf, nonnegative(sendcount), sendtype));
        expect_bytes(st, collective::allgatherv, "the send buffer", in.bytes(), counts[st.rank]);
        return bytes_job(make_vcall(collective::allgatherv, st.size, counts, {}, 0, bytes_type), std::move(in),
                         std::move(out));
      },
      [=](MPI_Request* r) {
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, r);
      });
}

int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return serve(
      collective::alltoall, comm, request,
      [=](const comm_state&) {
        return handles{sendbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : sendtype, recvtype};
      },
      [&](comm_state& st) {
        require_raw_packing();
        const std::uint64_t n = nonnegative(recvcount) * st.size;
        staged out = staged::output(one_block(recvbuf, n, recvtype));
        staged in = sendbuf == MPI_IN_PLACE
                        ? staged::input(one_block(recvbuf, n, recvtype), true)
                        : staged::input(one_block(sendbuf, nonnegative(sendcount) * st.size, sendtype));
        expect_bytes(st, collective::alltoall, "the send buffer", in.bytes(), out.bytes());
        const call c = make_call(collective::alltoall, st.size, out.bytes() / st.size, 0, bytes_type);
        return bytes_job(c, std::move(in), std::move(out));
      },
      [=](MPI_Request* r) {
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
      });
}

// Each rank knows its own row of the counts (what it sends) and column (what it receives);
// ranklab's schedules need the whole matrix at every rank, so the rows are allgathered first.
int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return serve(
      collective::alltoallv, comm, request,
      [=](const comm_state&) {
        return handles{sendbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : sendtype, recvtype};
      },
      [&](comm_state& st) {
        require_raw_packing();
        const int p = st.size;
        const bool in_place = sendbuf == MPI_IN_PLACE;
        auto send_layout = [=] {
          return in_place ? v_blocks(recvbuf, recvcounts, rdispls, p, recvtype)
                          : v_blocks(sendbuf, sendcounts, sdispls, p, sendtype);
        };
        job j;
        j.exchange = job::share::from_all;
        // A negative count anywhere in this rank's arguments makes every rank fall back.
        j.counts = bytes_or_invalid(p, [&] {
          v_blocks(recvbuf, recvcounts, rdispls, p, recvtype);
          return send_layout();
        });
        const comm_state* s = &st;
        j.complete = [=](const std::vector<std::uint64_t>& counts) {
          const typed_blocks layout = v_blocks(recvbuf, recvcounts, rdispls, p, recvtype);
          const std::vector<std::uint64_t> mine = block_bytes(layout);
          for (int k = 0; k < p; ++k)
            expect_bytes(*s, collective::alltoallv, fmt::format("the block from rank {}", k).c_str(), mine[k],
                         counts[static_cast<std::size_t>(k) * p + s->rank]);
          staged out = staged::output(layout);
          return bytes_job(make_vcall(collective::alltoallv, p, counts, {}, 0, bytes_type),
                           staged::input(send_layout(), in_place), std::move(out));
        };
        return j;
      },
      [=](MPI_Request* r) {
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, r);
      });
}

}  // namespace

extern "C" int MPI_Barrier(MPI_Comm comm) { return barrier(comm, nullptr); }
extern "C" int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) { return barrier(comm, request); }

extern "C" int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return bcast(buffer, count, datatype, root, comm, nullptr);
}
extern "C" int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                          MPI_Request* request) {
  return bcast(buffer, count, datatype, root, comm, request);
}

extern "C" int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm) {
  return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
}
extern "C" int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

extern "C" int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, nullptr);
}
extern "C" int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
}

extern "C" int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
}
extern "C" int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

extern "C" int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm) {
  return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, nullptr);
}
extern "C" int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request* request) {
  return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request);
}
