// A served call as it runs: the frame every collective entry point goes through, blocking or
// nonblocking. Each collective is written once, as a function making its job (the ranklab
// call and this rank's buffers) and its native form; MPI_X and MPI_Ix both call it.
#pragma once
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "handles.hpp"
#include "interpose.hpp"
#include "progress.hpp"
#include "staging.hpp"
#include "types.hpp"

namespace ranklab::mpi::interpose {

struct job {
  call c;
  const void* in = nullptr;  // the schedule's buffers
  void* out = nullptr;
  std::unique_ptr<reduction_spec> spec;  // the operator c.reduction points into
  std::vector<staged> staging;           // live until the end; finish() unpacks the outputs
  std::vector<std::unique_ptr<std::byte[]>> temps;
  std::function<void()> after;  // after the unpacking (copies out of a temporary)

  // The v-collectives whose counts MPI gives to some ranks only: `counts` is this rank's
  // part (p entries at the root, or everywhere for from_all, else none), exchanged over the
  // private communicator (p, or p x p row-major, at every rank) before `complete` makes the
  // job that runs. Everything before that is local to the rank.
  enum class share { none, from_root, from_all };
  share exchange = share::none;
  int root = 0;
  std::vector<std::uint64_t> counts;
  std::function<job(const std::vector<std::uint64_t>&)> complete;

  // A reproducible sum (reproducible.hpp): the native collective would round its own way.
  bool reproducible = false;

  // Whether the native collective may stand in for this call where the MPI table says it is
  // faster: not for a reduction it is known to get wrong (reduction_spec::native_trusted),
  // nor for a reproducible sum.
  bool native_trusted() const { return !reproducible && (!spec || spec->native_trusted()); }
  // Keeps `s` alive with the job; returns it.
  const staged& keep(staged s);
  std::byte* temporary(std::uint64_t bytes);
  // Brings the results into the caller's buffers (after the schedule has run).
  void finish();
};

// Starts the exchange of the counts into `shared` over the private communicator (a native
// nonblocking collective: MPI_Ibcast from the root, or MPI_Iallgather); its MPI code.
int exchange(const comm_state& st, const job& j, std::vector<std::uint64_t>& shared, MPI_Request* request);
// Falls back (every rank alike) if a rank marked its counts invalid (movement.hpp's
// invalid_count).
void require_valid(const std::vector<std::uint64_t>& counts);

// A call's native form: PMPI_Ix(..., r), for the nonblocking and the blocking call alike
// (job.cpp, blocking_native). Captures by value (a queued nonblocking call makes it later).
// serve() makes one only where it is kept or called, not for a call ranklab serves blocking.
using native_form = std::function<int(MPI_Request*)>;

// The blocking and the nonblocking paths (comm_state.cpp, nonblocking.cpp). Both throw
// fallback before anything is sent when ranklab cannot serve the call.
void execute(comm_state& st, int row, job j);
// A nonblocking call holds the datatypes and operator `h` it was given until it completes
// (handles.hpp): the program may free them before that.
void start(MPI_Comm comm, comm_state& st, int row, job j, native_form native, const handles& h, MPI_Request* request);
// Whether a nonblocking native call on `st`'s communicator must wait its turn: behind queued
// calls, or for the private duplicate (progress.hpp, settle). start_native issues it at once
// when the duplicate turns out ready.
inline bool must_queue(const comm_state& st) { return !st.queue.empty() || st.ready != MPI_REQUEST_NULL; }
// A nonblocking call that goes to the native library behind queued calls of `st`.
void start_native(MPI_Comm comm, comm_state& st, int row, native_form native, const handles& h, MPI_Request* request);
// The native library's form, counted already: the blocking one (its nonblocking form plus
// progress while ranklab calls are in flight), or the nonblocking one (queued behind calls
// of `st` whose native operations are not yet issued).
int call_native(MPI_Comm comm, comm_state* st, int row, const native_form& native, const handles& h,
                MPI_Request* request) noexcept;
// RANKLAB_MPI_NONBLOCKING=native: every nonblocking form goes to the native library.
bool nonblocking_native();

// The frame of every collective entry point. `make(state)` makes the job (throwing fallback
// before any message when ranklab cannot serve it); then the blocking call runs it, the
// nonblocking one starts it and returns a request. Otherwise `native` makes the PMPI_ call.
// `used(state)`: the call's handles significant at this rank, held while a nonblocking call
// is pending (handles.hpp).
template <class Used, class Make, class Native>
int serve(collective c, MPI_Comm comm, MPI_Request* request, Used&& used, Make&& make, Native&& native) noexcept {
  const int row = request ? nonblocking_row(c) : blocking_row(c);
  reason why{};
  comm_state* st = nullptr;
  try {
    if (request && nonblocking_native()) {
      st = existing_state(comm);  // a state made by a blocking call: its order holds
      throw fallback{reason::nonblocking};
    }
    st = &state_of(comm);
    job j = make(*st);
    if (request)
      start(comm, *st, row, std::move(j), native_form(native), used(*st), request);
    else
      execute(*st, row, std::move(j));
    return MPI_SUCCESS;
  } catch (const fallback& f) {
    why = f.why;
  } catch (const std::exception& e) {
    if (request) *request = MPI_REQUEST_NULL;
    return fail(row, comm, st, e);
  }
  int rank = -1;
  if (st)
    rank = st->rank;
  else if (comm != MPI_COMM_NULL)
    PMPI_Comm_rank(comm, &rank);
  record_native(row, why, rank == 0);
  const bool queued = request && st && must_queue(*st);  // only then held: MPI holds the rest
  return call_native(comm, st, row, native_form(std::forward<Native>(native)), queued ? used(*st) : handles{}, request);
}

}  // namespace ranklab::mpi::interpose
