// The blocking entry point of the MPI executor (see executor.hpp).
#include "executor.hpp"

namespace ranklab::mpi::detail {

void execute(const schedule& s, const void* in, void* out, const datatype& type, const op& reduction,
             MPI_Comm comm, int tag, std::string_view name) {
  // Blocking calls run one at a time per thread, so their scratch memory can be reused.
  thread_local scratch_arena arena;
  std::uint64_t& calls = call_counter(comm);
  call_identity id{0, 1, name};
  id.tag = sequenced_tag(static_cast<std::uint64_t>(tag), calls + 1, comm, id.span);
  running_schedule run(s, in, out, type, reduction, comm, id, &arena);
  ++calls;  // only now: a schedule refused above is not a call the peers count
  wait_for(run);
}

namespace {
int delete_counter(MPI_Comm, int, void* counter, void*) {
  delete static_cast<std::uint64_t*>(counter);
  return MPI_SUCCESS;
}
}  // namespace

std::uint64_t& call_counter(MPI_Comm comm) {
  static int keyval = MPI_KEYVAL_INVALID;  // MPI has no destructor for it: created once
  if (keyval == MPI_KEYVAL_INVALID)
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_counter, &keyval, nullptr);
  std::uint64_t* counter = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, keyval, &counter, &found);
  if (!found) {
    counter = new std::uint64_t(0);
    PMPI_Comm_set_attr(comm, keyval, counter);
  }
  return *counter;
}

}  // namespace ranklab::mpi::detail
