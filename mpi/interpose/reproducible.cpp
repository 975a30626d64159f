// The interposer's reproducible sums (reproducible.hpp): MPI_SUM on floating-point values
// through ranklab's exact accumulators.
#include "reproducible.hpp"

#include <cstdlib>
#include <memory>
#include <numeric>
#include <string_view>

#include "ranklab/repro_sum.hpp"

namespace ranklab::mpi::interpose {

namespace {

bool opted_in() {
  static const bool on = [] {
    const char* v = std::getenv("RANKLAB_MPI_REPRODUCIBLE_SUM");
    return v && std::string_view(v) == "1";
  }();
  return on;
}

bool one_of(MPI_Datatype t, std::initializer_list<MPI_Datatype> types) {
  for (MPI_Datatype u : types)
    if (u != MPI_DATATYPE_NULL && u == t) return true;
  return false;
}

// `n` accumulators in a temporary of the job, each holding one value of `values`.
template <class T>
std::byte* accumulators(job& j, const void* values, std::uint64_t n) {
  using acc = repro_sum<T>;
  std::byte* to = j.temporary(n * sizeof(acc));  // operator new[]: aligned for acc
  const T* x = static_cast<const T*>(values);
  for (std::uint64_t i = 0; i < n; ++i) std::construct_at(reinterpret_cast<acc*>(to) + i)->assign(x[i]);
  return to;
}
template <class T>
void values(const std::byte* from, void* to, std::uint64_t n) {
  const auto* a = reinterpret_cast<const repro_sum<T>*>(from);
  T* out = static_cast<T*>(to);
  for (std::uint64_t i = 0; i < n; ++i) out[i] = a[i].value();
}

std::byte* accumulators(job& j, repro_kind k, const void* v, std::uint64_t n) {
  return k == repro_kind::float64 ? accumulators<double>(j, v, n) : accumulators<float>(j, v, n);
}
std::byte* scratch(job& j, repro_kind k, std::uint64_t n) {
  return j.temporary(n * (k == repro_kind::float64 ? sizeof(repro_sum<double>) : sizeof(repro_sum<float>)));
}
// After the schedule: the n results at `from` rounded into the caller's `to`.
std::function<void()> results(repro_kind k, const std::byte* from, void* to, std::uint64_t n) {
  if (k == repro_kind::float64) return [=] { values<double>(from, to, n); };
  return [=] { values<float>(from, to, n); };
}

datatype element(repro_kind k) {
  return k == repro_kind::float64 ? datatype_of<repro_sum<double>>() : datatype_of<repro_sum<float>>();
}

job make(call c) {
  job j{std::move(c)};
  j.reproducible = true;
  return j;
}

}  // namespace

repro_kind reproducible_sum(MPI_Datatype t, MPI_Op o) {
  if (!opted_in() || o != MPI_SUM || t == MPI_DATATYPE_NULL) return repro_kind::none;
  repro_kind k = repro_kind::none;
  if (one_of(t, {MPI_DOUBLE, MPI_DOUBLE_PRECISION, MPI_REAL8}))
    k = repro_kind::float64;
  else if (one_of(t, {MPI_FLOAT, MPI_REAL, MPI_REAL4}))
    k = repro_kind::float32;
  else
    return repro_kind::none;
  int size = 0;
  check_mpi(PMPI_Type_size(t, &size), "MPI_Type_size");  // Fortran's as C's, or not at all
  return static_cast<std::size_t>(size) == (k == repro_kind::float64 ? sizeof(double) : sizeof(float))
             ? k
             : repro_kind::none;
}

job reproducible_elementwise(const comm_state& st, collective c, repro_kind k, const void* sendbuf, void* recvbuf,
                             std::uint64_t count) {
  job j = make(make_call(c, st.size, count, 0, element(k), ops::repro_merge));
  // One buffer of accumulators, input and result (every schedule is right in place).
  std::byte* acc = accumulators(j, k, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count);
  j.in = j.out = acc;
  // exscan's rank 0 gets no result: its recvbuf stays as it was.
  if (!(c == collective::exscan && st.rank == 0)) j.after = results(k, acc, recvbuf, count);
  return j;
}

job reproducible_reduce(const comm_state& st, repro_kind k, const void* sendbuf, void* recvbuf, std::uint64_t count,
                        int root) {
  job j = make(make_call(collective::reduce, st.size, count, root, element(k), ops::repro_merge));
  j.in = accumulators(j, k, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count);
  if (st.rank == root) {
    std::byte* out = scratch(j, k, count);
    j.out = out;
    j.after = results(k, out, recvbuf, count);
  }
  return j;
}

job reproducible_scattered(const comm_state& st, collective c, repro_kind k, const void* sendbuf, void* recvbuf,
                           const std::vector<std::uint64_t>& counts) {
  const std::uint64_t total = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
  const std::uint64_t mine = counts[static_cast<std::size_t>(st.rank)];
  job j =
      make(c == collective::reduce_scatter_block ? make_call(c, st.size, mine, 0, element(k), ops::repro_merge)
                                                 : make_vcall(c, st.size, counts, {}, 0, element(k), ops::repro_merge));
  // In place, the input is recvbuf: converted before the call, so the result may overwrite it.
  j.in = accumulators(j, k, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, total);
  std::byte* out = scratch(j, k, mine);
  j.out = out;
  j.after = results(k, out, recvbuf, mine);
  return j;
}

}  // namespace ranklab::mpi::interpose
