// MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter(_block), MPI_Scan, MPI_Exscan: served on
// ranklab's element types and operators (types.hpp). ranklab takes the same buffer for input
// and output in allreduce, scan and exscan; the other collectives' MPI_IN_PLACE goes through a
// temporary copy.
#include <cstring>
#include <numeric>

#include "movement.hpp"
#include "types.hpp"

namespace ranklab::mpi::interpose {
namespace {

// An elementwise reduction (allreduce, scan, exscan) of `count` elements.
void elementwise(comm_state& st, collective c, const void* sendbuf, void* recvbuf, int count, MPI_Datatype t,
                 MPI_Op o) {
  const reduction_spec r(t, o);
  const call cl = make_call(c, st.size, nonnegative(count), 0, r.type(), r.reduction());
  run(st, cl, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf);
}

// reduce_scatter(_block): in place, the input is recvbuf and the result lands in a
// temporary, copied to the front of recvbuf afterwards.
void scattered(comm_state& st, const call& cl, const reduction_spec& r, const void* sendbuf, void* recvbuf) {
  if (sendbuf != MPI_IN_PLACE) return run(st, cl, sendbuf, recvbuf);
  const std::uint64_t bytes = block_count(cl.args, st.rank) * r.type().size;
  const auto result = temporary(bytes);
  run(st, cl, recvbuf, result.get());
  if (bytes > 0) std::memcpy(recvbuf, result.get(), bytes);
}

}  // namespace
}  // namespace ranklab::mpi::interpose

using namespace ranklab;
using namespace ranklab::mpi::interpose;

extern "C" int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
  return intercept(
      collective::allreduce, comm,
      [&](comm_state& st) { elementwise(st, collective::allreduce, sendbuf, recvbuf, count, datatype, op); },
      [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); });
}

extern "C" int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm) {
  return intercept(
      collective::scan, comm,
      [&](comm_state& st) { elementwise(st, collective::scan, sendbuf, recvbuf, count, datatype, op); },
      [&] { return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm); });
}

// Rank 0's recvbuf is undefined in MPI; ranklab leaves it as it was.
extern "C" int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm) {
  return intercept(
      collective::exscan, comm,
      [&](comm_state& st) { elementwise(st, collective::exscan, sendbuf, recvbuf, count, datatype, op); },
      [&] { return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm); });
}

extern "C" int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                          MPI_Comm comm) {
  return intercept(
      collective::reduce, comm,
      [&](comm_state& st) {
        require_root(st, root);
        const reduction_spec r(datatype, op);
        const call cl = make_call(collective::reduce, st.size, nonnegative(count), root, r.type(), r.reduction());
        if (st.rank != root) {
          require_not_in_place(st, collective::reduce, sendbuf);
          return run(st, cl, sendbuf, nullptr);
        }
        if (sendbuf != MPI_IN_PLACE) return run(st, cl, sendbuf, recvbuf);
        // In place at the root: the root's input is recvbuf, which the call overwrites.
        const std::uint64_t bytes = cl.args.count * r.type().size;
        const auto input = temporary(bytes);
        if (bytes > 0) std::memcpy(input.get(), recvbuf, bytes);
        run(st, cl, input.get(), recvbuf);
      },
      [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); });
}

extern "C" int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                        MPI_Op op, MPI_Comm comm) {
  return intercept(
      collective::reduce_scatter_block, comm,
      [&](comm_state& st) {
        const reduction_spec r(datatype, op);
        scattered(
            st,
            make_call(collective::reduce_scatter_block, st.size, nonnegative(recvcount), 0, r.type(), r.reduction()), r,
            sendbuf, recvbuf);
      },
      [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm); });
}

extern "C" int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm) {
  return intercept(
      collective::reduce_scatter, comm,
      [&](comm_state& st) {
        const reduction_spec r(datatype, op);
        std::vector<std::uint64_t> counts;
        for (int j = 0; j < st.size; ++j) counts.push_back(nonnegative(recvcounts[j]));
        scattered(st, make_vcall(collective::reduce_scatter, st.size, counts, {}, 0, r.type(), r.reduction()), r,
                  sendbuf, recvbuf);
      },
      [&] { return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm); });
}
