// MPI_Gather(v), MPI_Scatter(v) and their nonblocking forms: served on bytes. The v-forms'
// counts are arguments at the root only, and ranklab's schedules need them at every rank:
// the root broadcasts them first (p counts over the private communicator, job.hpp).
#include <fmt/format.h>

#include "movement.hpp"
#include "ranklab/errors.hpp"

using namespace ranklab;
using namespace ranklab::mpi::interpose;

namespace {

// gather(v) once the call is known: the root receives into `layout` (its own block copied
// from there when in place), the others send their block.
job gather_job(const comm_state& st, const call& c, const void* sendbuf, const typed_blocks& sent,
               const typed_blocks& layout) {
  const bool at_root = st.rank == c.args.root;
  if (!at_root) require_not_in_place(st, c.args.coll, sendbuf);
  const bool in_place = at_root && sendbuf == MPI_IN_PLACE;
  job j{c};
  const staged& in =
      j.keep(in_place ? staged::input(
                            one_block(layout.base, layout.counts[st.rank], layout.type, layout.displs[st.rank]), true)
                      : staged::input(sent));
  expect_bytes(st, c.args.coll, "the send buffer", in.bytes(), block_count(c.args, st.rank));
  j.in = in.data();
  if (at_root) j.out = j.keep(staged::output(layout)).data();
  return j;
}

// scatter(v) once the call is known: the root sends from `layout`, every rank receives its
// block into `received` (the root drops its own when in place).
job scatter_job(const comm_state& st, const call& c, void* recvbuf, const typed_blocks& received,
                const typed_blocks& layout) {
  const bool at_root = st.rank == c.args.root;
  if (!at_root) require_not_in_place(st, c.args.coll, recvbuf);
  job j{c};
  const staged& out = j.keep(at_root && recvbuf == MPI_IN_PLACE ? staged::scratch(block_count(c.args, st.rank))
                                                                : staged::output(received));
  expect_bytes(st, c.args.coll, "the receive buffer", out.bytes(), block_count(c.args, st.rank));
  j.out = out.data();
  if (at_root) j.in = j.keep(staged::input(layout)).data();
  return j;
}

// The block a rank sends from (gather) or receives into (scatter): none at the root in place.
typed_blocks own_block(const void* buf, int count, MPI_Datatype type) {
  return one_block(buf, buf == MPI_IN_PLACE ? 0 : nonnegative(count), type);
}

// The v-forms' job before the counts are known: the root's part of the exchange.
template <class Layout, class Complete>
job from_root(const comm_state& st, int root, Layout&& layout, Complete&& complete) {
  job j;
  j.exchange = job::share::from_root;
  j.root = root;
  if (st.rank == root) j.counts = bytes_or_invalid(st.size, layout);
  j.complete = std::forward<Complete>(complete);
  return j;
}

int gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return serve(
      collective::gather, comm, request,
      [=](const comm_state& st) {
        return handles{sendbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : sendtype,
                       st.rank == root ? recvtype : MPI_DATATYPE_NULL};
      },
      [&](comm_state& st) {
        require_root(st, root);
        require_raw_packing();
        const bool at_root = st.rank == root;
        const typed_blocks layout =
            at_root ? regular_blocks(recvbuf, nonnegative(recvcount), st.size, recvtype) : typed_blocks{};
        const typed_blocks sent = own_block(sendbuf, sendcount, sendtype);
        // The block: the root's receive count, the others' send count (MPI makes them equal).
        const std::uint64_t block = block_bytes(at_root ? layout : sent)[0];
        return gather_job(st, make_call(collective::gather, st.size, block, root, bytes_type), sendbuf, sent, layout);
      },
      [=](MPI_Request* r) {
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r);
      });
}

int gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
            const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return serve(
      collective::gatherv, comm, request,
      [=](const comm_state& st) {
        return handles{sendbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : sendtype,
                       st.rank == root ? recvtype : MPI_DATATYPE_NULL};
      },
      [&](comm_state& st) {
        require_root(st, root);
        require_raw_packing();
        const comm_state* s = &st;
        auto layout = [=] { return v_blocks(recvbuf, recvcounts, displs, s->size, recvtype); };
        return from_root(st, root, layout, [=](const std::vector<std::uint64_t>& counts) {
          return gather_job(*s, make_vcall(collective::gatherv, s->size, counts, {}, root, bytes_type), sendbuf,
                            own_block(sendbuf, sendcount, sendtype), s->rank == root ? layout() : typed_blocks{});
        });
      },
      [=](MPI_Request* r) {
        return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, r);
      });
}

int scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return serve(
      collective::scatter, comm, request,
      [=](const comm_state& st) {
        return handles{st.rank == root ? sendtype : MPI_DATATYPE_NULL,
                       recvbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : recvtype};
      },
      [&](comm_state& st) {
        require_root(st, root);
        require_raw_packing();
        const bool at_root = st.rank == root;
        const typed_blocks layout =
            at_root ? regular_blocks(sendbuf, nonnegative(sendcount), st.size, sendtype) : typed_blocks{};
        const typed_blocks received = own_block(recvbuf, recvcount, recvtype);
        const std::uint64_t block = block_bytes(at_root ? layout : received)[0];
        return scatter_job(st, make_call(collective::scatter, st.size, block, root, bytes_type), recvbuf, received,
                           layout);
      },
      [=](MPI_Request* r) {
        return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r);
      });
}

int scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return serve(
      collective::scatterv, comm, request,
      [=](const comm_state& st) {
        return handles{st.rank == root ? sendtype : MPI_DATATYPE_NULL,
                       recvbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : recvtype};
      },
      [&](comm_state& st) {
        require_root(st, root);
        require_raw_packing();
        const comm_state* s = &st;
        auto layout = [=] { return v_blocks(sendbuf, sendcounts, displs, s->size, sendtype); };
        return from_root(st, root, layout, [=](const std::vector<std::uint64_t>& counts) {
          return scatter_job(*s, make_vcall(collective::scatterv, s->size, counts, {}, root, bytes_type), recvbuf,
                             own_block(recvbuf, recvcount, recvtype), s->rank == root ? layout() : typed_blocks{});
        });
      },
      [=](MPI_Request* r) {
        return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, r);
      });
}

}  // namespace

extern "C" int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr);
}
extern "C" int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}

extern "C" int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, nullptr);
}
extern "C" int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                            MPI_Request* request) {
  return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
}

extern "C" int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr);
}
extern "C" int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}

extern "C" int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr);
}
extern "C" int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Request* request) {
  return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}
