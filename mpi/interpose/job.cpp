// The blocking path of a served call, and the native one (see job.hpp).
#include "job.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "movement.hpp"

namespace ranklab::mpi::interpose {

const staged& job::keep(staged s) {
  staging.push_back(std::move(s));
  return staging.back();
}

std::byte* job::temporary(std::uint64_t bytes) {
  temps.push_back(interpose::temporary(bytes));
  return temps.back().get();
}

void job::finish() {
  for (staged& s : staging) s.finish();
  if (after) after();
}

void require_valid(const std::vector<std::uint64_t>& counts) {
  if (std::find(counts.begin(), counts.end(), invalid_count) != counts.end()) throw fallback{reason::invalid_argument};
}

bool nonblocking_native() {
  static const bool native = [] {
    const char* v = std::getenv("RANKLAB_MPI_NONBLOCKING");
    return v && std::string_view(v) == "native";
  }();
  return native;
}

namespace {

// A native collective for a blocking call: always its nonblocking form, waited for (with
// progress while ranklab calls are in flight: a peer may need this rank's part of one of
// them to reach this call). MPI never matches a blocking collective with a nonblocking one,
// and whether calls are in flight differs between ranks, so the form cannot depend on it.
int blocking_native(const native_form& native) {
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = native(&r);
  if (rc != MPI_SUCCESS) return rc;
  return active() ? wait_native(&r, MPI_STATUS_IGNORE) : PMPI_Wait(&r, MPI_STATUS_IGNORE);
}

}  // namespace

int exchange(const comm_state& st, const job& j, std::vector<std::uint64_t>& shared, MPI_Request* request) {
  const int p = st.size;
  shared = j.counts;
  shared.resize(j.exchange == job::share::from_all ? static_cast<std::size_t>(p) * p : static_cast<std::size_t>(p));
  return j.exchange == job::share::from_root
             ? PMPI_Ibcast(shared.data(), p, MPI_UINT64_T, j.root, st.priv, request)
             : PMPI_Iallgather(j.counts.data(), p, MPI_UINT64_T, shared.data(), p, MPI_UINT64_T, st.priv, request);
}

namespace {

// The counts of a v-collective, from the ranks that have them to every rank.
std::vector<std::uint64_t> exchange_counts(const comm_state& st, const job& j) {
  std::vector<std::uint64_t> shared;
  check_mpi(blocking_native([&](MPI_Request* r) { return exchange(st, j, shared, r); }), "the counts exchange");
  require_valid(shared);
  return shared;
}

}  // namespace

void execute(comm_state& st, int row, job j) {
  settle(st);
  if (j.exchange != job::share::none) j = j.complete(exchange_counts(st, j));
  run(st, row, j.c, j.in, j.out, j.native_trusted());
  j.finish();
}

int call_native(MPI_Comm comm, comm_state* st, int row, const native_form& native, const handles& h,
                MPI_Request* request) noexcept {
  try {
    if (!request) {
      // Native collectives on the user's communicator go in call order: after the private
      // duplicate's PMPI_Comm_idup has completed and the queued nonblocking calls' operations
      // are issued (progress.hpp, settle).
      if (st) settle(*st);
      return blocking_native(native);
    }
    if (!st || !must_queue(*st)) return native(request);
    start_native(comm, *st, row, native, h, request);
    return MPI_SUCCESS;
  } catch (const std::exception& e) {
    return fail(row, comm, st, e);
  }
}

}  // namespace ranklab::mpi::interpose
