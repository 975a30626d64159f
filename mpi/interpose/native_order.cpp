// The program's own collective operations that ranklab does not serve, kept in order with
// ranklab's native operations on the same communicator (progress.hpp, settle): the blocking
// ones wait until the communicator's private duplicate is ready and its queued nonblocking
// calls have issued their operations; the nonblocking ones (MPI_Comm_idup, the nonblocking
// neighbourhood collectives) queue behind them like a native fallback. Only communicators
// that ranklab has a state for are concerned; on any other these are plain PMPI calls.
// MPI_Comm_free is in comm_state.cpp.
#include "job.hpp"

using namespace ranklab::mpi::interpose;

namespace {

// A nonblocking operation of the program on `comm`: issued now, or queued in call order.
int queued_native(MPI_Comm comm, MPI_Request* request, native_form native) noexcept {
  comm_state* st = existing_state(comm);
  if (!st || !request || !must_queue(*st)) return native(request);
  try {
    start_native(comm, *st, -1, std::move(native), handles{}, request);
    return MPI_SUCCESS;
  } catch (const std::exception& e) {
    return fail(-1, comm, st, e);
  }
}

}  // namespace

extern "C" {

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  settle_native_order(comm);
  return PMPI_Comm_dup(comm, newcomm);
}
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  settle_native_order(comm);
  return PMPI_Comm_dup_with_info(comm, info, newcomm);
}
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  return queued_native(comm, request, [=](MPI_Request* r) { return PMPI_Comm_idup(comm, newcomm, r); });
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  settle_native_order(comm);
  return PMPI_Comm_split(comm, color, key, newcomm);
}
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  settle_native_order(comm);
  return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  settle_native_order(comm);
  return PMPI_Comm_create(comm, group, newcomm);
}
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                         MPI_Comm* newintercomm) {
  settle_native_order(local_comm);
  return PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm);
}
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm* comm_cart) {
  settle_native_order(comm);
  return PMPI_Cart_create(comm, ndims, dims, periods, reorder, comm_cart);
}
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  settle_native_order(comm);
  return PMPI_Cart_sub(comm, remain_dims, newcomm);
}
int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm* comm_graph) {
  settle_native_order(comm);
  return PMPI_Graph_create(comm, nnodes, index, edges, reorder, comm_graph);
}
int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[],
                          const int weights[], MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
  settle_native_order(comm);
  return PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph);
}
int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
  settle_native_order(comm);
  return PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, destinations, destweights,
                                         info, reorder, comm_dist_graph);
}
int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  settle_native_order(comm);
  return PMPI_Win_create(base, size, disp_unit, info, comm, win);
}
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  settle_native_order(comm);
  return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
}
int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  settle_native_order(comm);
  return PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
}
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  settle_native_order(comm);
  return PMPI_Win_create_dynamic(info, comm, win);
}
int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  settle_native_order(comm);
  return PMPI_File_open(comm, filename, amode, info, fh);
}

}  // extern "C"
