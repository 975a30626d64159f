// The PMPI interposition library's shared parts. Preloaded into an unmodified MPI program,
// libranklab_mpi.so defines MPI_Bcast, MPI_Allreduce ... and their nonblocking forms (each
// runs a ranklab schedule over PMPI point-to-point; how the nonblocking ones progress:
// nonblocking.cpp).
// Every intercepted call first decides whether ranklab can serve it. That decision must come
// out the same on every rank of the call, or some ranks would run ranklab's schedule while the
// others wait in the native collective: it may therefore only depend on what MPI requires the
// ranks to agree on (the communicator, the collective, the root, the operator, the type
// signature of reductions), never on a rank's own buffer layout or datatype construction.
// Data-movement collectives are served for every datatype (non-contiguous ones are packed),
// so their decision never looks at the datatype.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <deque>
#include <exception>
#include <list>
#include <memory>
#include <string>
#include <string_view>

#include "ranklab/call.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::mpi::interpose {

// Why a call went to the native library (a column of the report).
enum class reason : std::uint8_t {
  nonblocking,        // RANKLAB_MPI_NONBLOCKING=native sends every nonblocking form there
  intercommunicator,  // ranklab's schedules are for one group of ranks
  invalid_argument,   // null communicator, negative count, bad root ...: native MPI reports it
  datatype,           // a reduction on a predefined type ranklab cannot reduce (MPI_LOGICAL ...)
  operator_kind,      // an operator neither predefined nor made by MPI_Op_create
  operator_type,      // a predefined operator MPI does not define on the type
  packing,            // this MPI's MPI_Pack is not the raw bytes (heterogeneous build)
  no_algorithm,       // no one-ported algorithm accepts the call, or ranklab rejects it
  measured_native,    // the MPI selection table measured the native collective faster here
  derived_datatype,   // a predefined operator on a derived type: MPI's error, native reports it
  user_layout,        // a user operator on a datatype with gaps (its function expects them)
};
inline constexpr int reason_count = 11;
std::string_view describe(reason r);

// Thrown before any message of the call: the call goes to the native library instead.
struct fallback {
  reason why;
};

// The report's rows: the 16 collectives, blocking, then their nonblocking forms.
inline constexpr int function_count = 2 * collective_count;
inline int blocking_row(collective c) { return static_cast<int>(c); }
inline int nonblocking_row(collective c) { return collective_count + static_cast<int>(c); }
std::string function_name(int row);  // "MPI_Allreduce", "MPI_Iallreduce"; row -1: any other

// Counting: `comm_root` is true at rank 0 of the call's communicator, so that the report
// counts each call once; every rank also counts its own calls (ranklab_mpi_calls).
void record_served(int row, const algorithm& a, bool comm_root);
void record_native(int row, reason why, bool comm_root);

// What ranklab keeps per user communicator, in an attribute of it (freed with it): a private
// duplicate for ranklab's messages, so they never match the program's own, and the schedules
// of recent calls.
struct pending;  // a served nonblocking call (nonblocking.cpp)
struct comm_state {
  struct plan {
    coll_args args;
    const algorithm* algo = nullptr;  // null: the MPI table chose the native collective
    schedule steps;
    bool native_allowed = true;  // part of the key: see plan_for
  };
  // The duplicate comes from PMPI_Comm_idup, so that a nonblocking call that is the first on
  // its communicator does not wait for the other ranks to reach it; `ready` is its request
  // until it completes (is_ready).
  MPI_Comm priv = MPI_COMM_NULL;
  MPI_Request ready = MPI_REQUEST_NULL;
  int rank = 0;
  int size = 1;
  std::uint64_t calls = 0;                       // served so far: numbers the next call's tag
  std::list<std::shared_ptr<const plan>> cache;  // most recent first
  // Nonblocking calls that have not yet issued their native collective (the exchange of a
  // v-collective's counts, or the native call they fall back to), in call order: such
  // operations are issued in the order the program made the calls, on every rank alike.
  std::deque<pending*> queue;
  int users = 0;          // nonblocking calls still running on it
  bool orphaned = false;  // the user's communicator was freed: the last user deletes it
};

// The state of an intracommunicator, made at its first intercepted call (PMPI_Comm_idup is
// collective: every rank makes it at the same call). Throws fallback for a null or an
// intercommunicator.
comm_state& state_of(MPI_Comm comm);
// The state of `comm` if one was made, else nullptr (never makes one).
comm_state* existing_state(MPI_Comm comm) noexcept;
// Whether the private duplicate is usable (tests the PMPI_Comm_idup request).
bool is_ready(comm_state& st);
// Frees a state no call uses any more (its private communicator with it).
void destroy(comm_state* st) noexcept;
// Frees the states of MPI_COMM_WORLD and MPI_COMM_SELF while MPI is fully alive (at
// MPI_Finalize; other communicators' states go with MPI_Comm_free).
void release_states();

// This rank's schedule for `c` on the communicator: cached, or selected and built now. The
// algorithm is select_algorithm's, except that only one-ported algorithms run over MPI, and
// a RANKLAB_<COLL>_ALGORITHM that does not accept the call gives way to the table's choice.
// Throws fallback when no algorithm accepts the call. native_allowed false (a reduction whose
// native collective is known to be wrong: reduction_spec::native_trusted) passes over the
// table's native rules; two calls with the same arguments may differ in it (MPI_OFFSET and
// MPI_LONG are both int64 to ranklab), so it is part of the cache's key.
std::shared_ptr<const comm_state::plan> plan_for(comm_state& st, const call& c, bool native_allowed);

// Runs the call on this rank's buffers over the private communicator (blocking, progressing
// every call in flight meanwhile) and counts it in `row`.
void run(comm_state& st, int row, const call& c, const void* in, void* out, bool native_allowed);

// Reports an error of a served call: tells the other ranks of the communicator (`st`, when
// known) that this rank left the call, so that none waits for it forever; prints the
// message on stderr; calls the communicator's error handler (fatal by default). Returns the
// MPI error code.
int fail(int row, MPI_Comm comm, comm_state* st, const std::exception& e) noexcept;

// Throws a ranklab error carrying MPI's error string unless rc is MPI_SUCCESS.
void check_mpi(int rc, const char* call);

// MPI ints as ranklab counts; a negative one is the caller's error, for the native library
// to report.
std::uint64_t nonnegative(int count);

}  // namespace ranklab::mpi::interpose
