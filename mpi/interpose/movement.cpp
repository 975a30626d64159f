// MPI_Barrier, MPI_Bcast, MPI_Allgather(v), MPI_Alltoall(v): served on bytes.
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

namespace {
void require_valid(const std::vector<std::uint64_t>& counts) {
  if (std::find(counts.begin(), counts.end(), invalid_count) != counts.end()) throw fallback{reason::invalid_argument};
}
}  // namespace

std::vector<std::uint64_t> counts_from_root(const comm_state& st, std::vector<std::uint64_t> counts, int root) {
  counts.resize(static_cast<std::size_t>(st.size));
  check_mpi(PMPI_Bcast(counts.data(), st.size, MPI_UINT64_T, root, st.priv), "MPI_Bcast");
  require_valid(counts);
  return counts;
}

std::vector<std::uint64_t> counts_from_all(const comm_state& st, const std::vector<std::uint64_t>& row) {
  std::vector<std::uint64_t> matrix(static_cast<std::size_t>(st.size) * st.size);
  check_mpi(PMPI_Allgather(row.data(), st.size, MPI_UINT64_T, matrix.data(), st.size, MPI_UINT64_T, st.priv),
            "MPI_Allgather");
  require_valid(matrix);
  return matrix;
}

}  // namespace ranklab::mpi::interpose

using namespace ranklab;
using namespace ranklab::mpi::interpose;

extern "C" int MPI_Barrier(MPI_Comm comm) {
  return intercept(
      collective::barrier, comm,
      [&](comm_state& st) { run(st, make_call(collective::barrier, st.size, 0), nullptr, nullptr); },
      [&] { return PMPI_Barrier(comm); });
}

extern "C" int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return intercept(
      collective::bcast, comm,
      [&](comm_state& st) {
        require_root(st, root);
        require_raw_packing();
        const typed_blocks b = one_block(buffer, nonnegative(count), datatype);
        // The root's buffer is read (ranklab's bcast sends from the root's out buffer).
        staged buf = st.rank == root ? staged::input(b, comm) : staged::output(b, comm);
        run(st, make_call(collective::bcast, st.size, buf.bytes(), root, bytes_type), nullptr, buf.data());
        buf.finish();
      },
      [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}

extern "C" int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm) {
  return intercept(
      collective::allgather, comm,
      [&](comm_state& st) {
        require_raw_packing();
        const std::uint64_t n = nonnegative(recvcount);
        staged out = staged::output(one_block(recvbuf, n * st.size, recvtype), comm);
        const std::uint64_t block = out.bytes() / st.size;
        // In place, this rank's block already sits in recvbuf, which the call also writes.
        const staged in = sendbuf == MPI_IN_PLACE
                              ? staged::input(one_block(recvbuf, n, recvtype, n * st.rank), comm, true)
                              : staged::input(one_block(sendbuf, nonnegative(sendcount), sendtype), comm);
        expect_bytes(st, collective::allgather, "the send buffer", in.bytes(), block);
        run(st, make_call(collective::allgather, st.size, block, 0, bytes_type), in.data(), out.data());
        out.finish();
      },
      [&] { return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

extern "C" int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return intercept(
      collective::allgatherv, comm,
      [&](comm_state& st) {
        require_raw_packing();
        const typed_blocks layout = v_blocks(recvbuf, recvcounts, displs, st.size, recvtype);
        const std::vector<std::uint64_t> counts = block_bytes(layout);
        staged out = staged::output(layout, comm);
        const staged in =
            sendbuf == MPI_IN_PLACE
                ? staged::input(one_block(recvbuf, layout.counts[st.rank], recvtype, layout.displs[st.rank]), comm,
                                true)
                : staged::input(one_block(sendbuf, nonnegative(sendcount), sendtype), comm);
        expect_bytes(st, collective::allgatherv, "the send buffer", in.bytes(), counts[st.rank]);
        run(st, make_vcall(collective::allgatherv, st.size, counts, {}, 0, bytes_type), in.data(), out.data());
        out.finish();
      },
      [&] { return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm); });
}

extern "C" int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  return intercept(
      collective::alltoall, comm,
      [&](comm_state& st) {
        require_raw_packing();
        const std::uint64_t n = nonnegative(recvcount) * st.size;
        staged out = staged::output(one_block(recvbuf, n, recvtype), comm);
        const staged in = sendbuf == MPI_IN_PLACE
                              ? staged::input(one_block(recvbuf, n, recvtype), comm, true)
                              : staged::input(one_block(sendbuf, nonnegative(sendcount) * st.size, sendtype), comm);
        expect_bytes(st, collective::alltoall, "the send buffer", in.bytes(), out.bytes());
        run(st, make_call(collective::alltoall, st.size, out.bytes() / st.size, 0, bytes_type), in.data(), out.data());
        out.finish();
      },
      [&] { return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

// Each rank knows its own row of the counts (what it sends) and column (what it receives);
// ranklab's schedules need the whole matrix at every rank, so the rows are allgathered first.
extern "C" int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm) {
  return intercept(
      collective::alltoallv, comm,
      [&](comm_state& st) {
        require_raw_packing();
        const int p = st.size;
        const bool in_place = sendbuf == MPI_IN_PLACE;
        auto send_layout = [&] {
          return in_place ? v_blocks(recvbuf, recvcounts, rdispls, p, recvtype)
                          : v_blocks(sendbuf, sendcounts, sdispls, p, sendtype);
        };
        // A negative count anywhere in this rank's arguments makes every rank fall back.
        const std::vector<std::uint64_t> counts = counts_from_all(st, bytes_or_invalid(p, [&] {
                                                                    v_blocks(recvbuf, recvcounts, rdispls, p, recvtype);
                                                                    return send_layout();
                                                                  }));
        const typed_blocks layout = v_blocks(recvbuf, recvcounts, rdispls, p, recvtype);
        const std::vector<std::uint64_t> mine = block_bytes(layout);
        for (int j = 0; j < p; ++j)
          expect_bytes(st, collective::alltoallv, fmt::format("the block from rank {}", j).c_str(), mine[j],
                       counts[static_cast<std::size_t>(j) * p + st.rank]);
        staged out = staged::output(layout, comm);
        const staged in = staged::input(send_layout(), comm, in_place);
        run(st, make_vcall(collective::alltoallv, p, counts, {}, 0, bytes_type), in.data(), out.data());
        out.finish();
      },
      [&] {
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
      });
}
