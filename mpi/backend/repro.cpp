// ranklab/mpi_repro.hpp: the accumulators of ranklab/repro_sum.hpp as an MPI datatype and
// their merge as an MPI operator, made once per process and freed at MPI_Finalize.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "mpi_check.hpp"
#include "ranklab/mpi_repro.hpp"

namespace ranklab::mpi {

namespace {

// MPI_User_function: inout[i] = in[i] (+) inout[i]. `len` counts elements of `type`, which
// is normally repro_sum_type<T>(); counted in bytes, any type whose elements are whole
// accumulators works.
void merge(void* in, void* inout, int* len, MPI_Datatype* type) {
  int size = 0;
  PMPI_Type_size(*type, &size);
  const std::size_t bytes = static_cast<std::size_t>(*len) * static_cast<std::size_t>(size);
  if (bytes == 0) return;
  std::uint32_t tag = 0;
  std::memcpy(&tag, inout, sizeof tag);
  const std::size_t element = tag == ranklab::detail::repro_format<double>::tag  ? sizeof(repro_sum<double>)
                              : tag == ranklab::detail::repro_format<float>::tag ? sizeof(repro_sum<float>)
                                                                                 : 0;
  if (element != 0 && bytes % element == 0 && ranklab::detail::repro_merge_elements(in, inout, bytes / element)) return;
  std::fprintf(stderr,
               "ranklab::mpi::repro_merge_op: the operands are not repro_sum accumulators of one type "
               "(%zu bytes); aborting\n",
               bytes);
  std::fflush(stderr);
  PMPI_Abort(MPI_COMM_WORLD, 1);
}

struct handles {
  std::mutex lock;
  MPI_Datatype float_type = MPI_DATATYPE_NULL;
  MPI_Datatype double_type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  bool release_registered = false;
};
handles& state() {
  static handles h;
  return h;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI is fully alive: the
// handles are freed there (through MPI_, so that an interposer sees MPI_Op_free).
int release(MPI_Comm, int keyval, void*, void*) {
  handles& h = state();
  std::lock_guard g(h.lock);
  if (h.float_type != MPI_DATATYPE_NULL) MPI_Type_free(&h.float_type);
  if (h.double_type != MPI_DATATYPE_NULL) MPI_Type_free(&h.double_type);
  if (h.op != MPI_OP_NULL) MPI_Op_free(&h.op);
  h.release_registered = false;
  MPI_Comm_free_keyval(&keyval);
  return MPI_SUCCESS;
}

void register_release(handles& h) {  // under h.lock
  if (h.release_registered) return;
  int keyval = MPI_KEYVAL_INVALID;
  detail::check(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &release, &keyval, nullptr), -1, "repro_sum",
                "MPI_Comm_create_keyval");
  detail::check(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr), -1, "repro_sum", "MPI_Comm_set_attr");
  h.release_registered = true;
}

MPI_Datatype make_type(MPI_Datatype& slot, std::size_t bytes) {
  handles& h = state();
  std::lock_guard g(h.lock);
  if (slot == MPI_DATATYPE_NULL) {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    detail::check(MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &t), -1, "repro_sum_type",
                  "MPI_Type_contiguous");
    detail::check(MPI_Type_commit(&t), -1, "repro_sum_type", "MPI_Type_commit");
    register_release(h);
    slot = t;
  }
  return slot;
}

int rank_of(MPI_Comm comm) {
  int r = -1;
  PMPI_Comm_rank(comm, &r);
  return r;
}

template <class T>
T sum(MPI_Comm comm, std::span<const T> local) {
  repro_sum<T> acc;
  acc.add(local);
  acc.normalize();
  detail::check(MPI_Allreduce(MPI_IN_PLACE, &acc, 1, repro_sum_type<T>(), repro_merge_op(), comm), rank_of(comm),
                "sum_reproducible", "MPI_Allreduce");
  return acc.value();
}

template <class T>
void elementwise(MPI_Comm comm, std::span<const T> in, std::span<T> out) {
  if (in.size() != out.size()) throw usage_error(rank_of(comm), "allreduce_reproducible", "out is not as long as in");
  std::vector<repro_sum<T>> acc = to_repro(in);
  for (std::size_t done = 0; done < acc.size();) {  // MPI counts are ints
    const int n = static_cast<int>(std::min<std::size_t>(acc.size() - done, 1 << 30));
    detail::check(MPI_Allreduce(MPI_IN_PLACE, acc.data() + done, n, repro_sum_type<T>(), repro_merge_op(), comm),
                  rank_of(comm), "allreduce_reproducible", "MPI_Allreduce");
    done += static_cast<std::size_t>(n);
  }
  from_repro(std::span<const repro_sum<T>>(acc), out);
}

}  // namespace

template <>
MPI_Datatype repro_sum_type<float>() {
  return make_type(state().float_type, sizeof(repro_sum<float>));
}
template <>
MPI_Datatype repro_sum_type<double>() {
  return make_type(state().double_type, sizeof(repro_sum<double>));
}

MPI_Op repro_merge_op() {
  handles& h = state();
  std::lock_guard g(h.lock);
  if (h.op == MPI_OP_NULL) {
    MPI_Op o = MPI_OP_NULL;
    detail::check(MPI_Op_create(&merge, 1, &o), -1, "repro_merge_op", "MPI_Op_create");
    register_release(h);
    h.op = o;
  }
  return h.op;
}

double sum_reproducible(MPI_Comm comm, std::span<const double> local) { return sum(comm, local); }
float sum_reproducible(MPI_Comm comm, std::span<const float> local) { return sum(comm, local); }
void allreduce_reproducible(MPI_Comm comm, std::span<const double> in, std::span<double> out) {
  elementwise(comm, in, out);
}
void allreduce_reproducible(MPI_Comm comm, std::span<const float> in, std::span<float> out) {
  elementwise(comm, in, out);
}

}  // namespace ranklab::mpi
