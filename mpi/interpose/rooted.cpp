// MPI_Gather(v), MPI_Scatter(v): served on bytes. The v-forms' counts are arguments at the
// root only, and ranklab's schedules need them at every rank: the root broadcasts them
// first (p counts over the private communicator).
#include <fmt/format.h>

#include "movement.hpp"
#include "ranklab/errors.hpp"

namespace ranklab::mpi::interpose {
namespace {

// gather(v) once the call is known: the root receives into `layout` (its own block copied
// from there when in place), the others send their block.
void gather(comm_state& st, const call& c, const void* sendbuf, const typed_blocks& sent, const typed_blocks& layout,
            MPI_Comm comm) {
  const bool at_root = st.rank == c.args.root;
  if (!at_root) require_not_in_place(st, c.args.coll, sendbuf);
  const bool in_place = at_root && sendbuf == MPI_IN_PLACE;
  const staged in =
      in_place ? staged::input(one_block(layout.base, layout.counts[st.rank], layout.type, layout.displs[st.rank]),
                               comm, true)
               : staged::input(sent, comm);
  expect_bytes(st, c.args.coll, "the send buffer", in.bytes(), block_count(c.args, st.rank));
  if (!at_root) return run(st, c, in.data(), nullptr);
  staged out = staged::output(layout, comm);
  run(st, c, in.data(), out.data());
  out.finish();
}

// scatter(v) once the call is known: the root sends from `layout`, every rank receives its
// block into `received` (the root drops its own when in place).
void scatter(comm_state& st, const call& c, void* recvbuf, const typed_blocks& received, const typed_blocks& layout,
             MPI_Comm comm) {
  const bool at_root = st.rank == c.args.root;
  if (!at_root) require_not_in_place(st, c.args.coll, recvbuf);
  staged out = at_root && recvbuf == MPI_IN_PLACE ? staged::scratch(block_count(c.args, st.rank))
                                                  : staged::output(received, comm);
  expect_bytes(st, c.args.coll, "the receive buffer", out.bytes(), block_count(c.args, st.rank));
  if (at_root) {
    const staged in = staged::input(layout, comm);
    run(st, c, in.data(), out.data());
  } else {
    run(st, c, nullptr, out.data());
  }
  out.finish();
}

}  // namespace
}  // namespace ranklab::mpi::interpose

using namespace ranklab;
using namespace ranklab::mpi::interpose;

extern "C" int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return intercept(
      collective::gather, comm,
      [&](comm_state& st) {
        require_root(st, root);
        require_raw_packing();
        const bool at_root = st.rank == root;
        const typed_blocks layout =
            at_root ? regular_blocks(recvbuf, nonnegative(recvcount), st.size, recvtype) : typed_blocks{};
        const typed_blocks sent = one_block(sendbuf, sendbuf == MPI_IN_PLACE ? 0 : nonnegative(sendcount), sendtype);
        // The block: the root's receive count, the others' send count (MPI makes them equal).
        const std::uint64_t block = block_bytes(at_root ? layout : sent)[0];
        gather(st, make_call(collective::gather, st.size, block, root, bytes_type), sendbuf, sent, layout, comm);
      },
      [&] { return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm); });
}

extern "C" int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return intercept(
      collective::gatherv, comm,
      [&](comm_state& st) {
        require_root(st, root);
        require_raw_packing();
        const bool at_root = st.rank == root;
        auto layout = [&] { return v_blocks(recvbuf, recvcounts, displs, st.size, recvtype); };
        const auto counts =
            counts_from_root(st, at_root ? bytes_or_invalid(st.size, layout) : std::vector<std::uint64_t>{}, root);
        const typed_blocks sent = one_block(sendbuf, sendbuf == MPI_IN_PLACE ? 0 : nonnegative(sendcount), sendtype);
        gather(st, make_vcall(collective::gatherv, st.size, counts, {}, root, bytes_type), sendbuf, sent,
               at_root ? layout() : typed_blocks{}, comm);
      },
      [&] { return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm); });
}

extern "C" int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return intercept(
      collective::scatter, comm,
      [&](comm_state& st) {
        require_root(st, root);
        require_raw_packing();
        const bool at_root = st.rank == root;
        const typed_blocks layout =
            at_root ? regular_blocks(sendbuf, nonnegative(sendcount), st.size, sendtype) : typed_blocks{};
        const typed_blocks received =
            one_block(recvbuf, recvbuf == MPI_IN_PLACE ? 0 : nonnegative(recvcount), recvtype);
        const std::uint64_t block = block_bytes(at_root ? layout : received)[0];
        scatter(st, make_call(collective::scatter, st.size, block, root, bytes_type), recvbuf, received, layout, comm);
      },
      [&] { return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm); });
}

extern "C" int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return intercept(
      collective::scatterv, comm,
      [&](comm_state& st) {
        require_root(st, root);
        require_raw_packing();
        const bool at_root = st.rank == root;
        auto layout = [&] { return v_blocks(sendbuf, sendcounts, displs, st.size, sendtype); };
        const auto counts =
            counts_from_root(st, at_root ? bytes_or_invalid(st.size, layout) : std::vector<std::uint64_t>{}, root);
        const typed_blocks received =
            one_block(recvbuf, recvbuf == MPI_IN_PLACE ? 0 : nonnegative(recvcount), recvtype);
        scatter(st, make_vcall(collective::scatterv, st.size, counts, {}, root, bytes_type), recvbuf, received,
                at_root ? layout() : typed_blocks{}, comm);
      },
      [&] { return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm); });
}
