// ranklab over real MPI: the collectives of ranklab/collectives.hpp on an MPI communicator,
// each run as the schedule of a registered one-ported algorithm over MPI point-to-point.
// Code written against the collectives compiles unchanged against the thread comm
// (ranklab/comm.hpp) and this one:
//
//   MPI_Init(&argc, &argv);
//   {
//     ranklab::mpi::comm c(MPI_COMM_WORLD);
//     c.allreduce(in, out, ranklab::ops::sum, {"circulant"});
//   }  // before MPI_Finalize: the comm frees its private communicator
//   MPI_Finalize();
//
// Selection is the thread comm's ("auto", RANKLAB_<COLL>_ALGORITHM, a name), restricted to
// one-ported algorithms: the shared-memory "direct" algorithms read other ranks' buffers,
// which separate processes cannot, so naming one is a usage_error that lists the one-ported
// alternatives, and "auto" falls back to the best one-ported choice of the selection table.
// Ranks must call the same collectives in the same order (MPI's rule); a rank that finds a
// peer in another call throws mismatch_error, and the peers it leaves waiting are released
// with remote_failure. ranklab's MPI calls come from one thread at a time (a wait advances
// every call in flight in the process): MPI_THREAD_SERIALIZED is enough.
#pragma once
#include <mpi.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ranklab/call.hpp"
#include "ranklab/collectives.hpp"
#include "ranklab/mpi_error.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/team.hpp"

namespace ranklab::mpi {

class request;
class comm;
namespace detail {
struct comm_state;
struct pending_call;
// Drops an unfinished request without waiting for it: its receive cancelled, its send left to
// MPI (for a thread_team whose process has failed, where waiting could hang).
void abandon(request& r) noexcept;
// Marks the comm failed, so that it keeps its communicator when destroyed: messages of a
// failed call may still arrive, and a freed communicator's context id goes to the next one
// MPI makes (for a thread_team that failed while this comm had no call of its own failing).
void mark_failed(ranklab::mpi::comm& c, const std::string& why) noexcept;
}  // namespace detail

class comm;

// A nonblocking collective in progress. The schedule advances round by round whenever the
// rank tests or waits on any request or runs a blocking collective (MPI's progress rule:
// peers may need this rank's part of another call to finish theirs).
class request {
 public:
  request() noexcept;
  request(request&&) noexcept;
  request& operator=(request&&) noexcept;
  // Destroying an unfinished request waits for it: MPI still reads and writes the caller's
  // buffers until then. Errors met while waiting are swallowed (the comm has failed then,
  // and its next call reports it).
  ~request();

  // Advances every call in flight; true once this one is complete. Rethrows its failure.
  bool test();
  void wait();
  bool done() const;  // complete (or failed), without advancing anything
  bool valid() const { return call_ != nullptr; }

 private:
  friend class comm;
  friend class persistent_request;
  friend void detail::abandon(request& r) noexcept;
  explicit request(std::unique_ptr<detail::pending_call> c);
  void release() noexcept;
  std::unique_ptr<detail::pending_call> call_;
};

// A persistent collective (MPI-4 *_init, from comm's *_init forms): the call is checked
// and its schedule built once; every start() runs it again on the same buffers as a
// nonblocking call (numbered and tagged anew, so starts interleave with other calls like
// i-collectives), completed by wait() or test(). Starting one that is still running is a
// usage_error; destroying one that is running waits for it.
class persistent_request {
 public:
  persistent_request() noexcept;
  persistent_request(persistent_request&&) noexcept;
  persistent_request& operator=(persistent_request&&) noexcept;
  ~persistent_request();

  void start();
  bool test();  // true when no run is active
  void wait();
  bool active() const { return active_; }  // started and not yet completed by wait or test
  bool valid() const { return state_ != nullptr; }

 private:
  friend class comm;
  persistent_request(std::shared_ptr<detail::comm_state> state, int rank, const call& c, const void* in, void* out);
  std::shared_ptr<detail::comm_state> state_;
  int rank_ = 0;
  call call_;
  std::string algorithm_;  // owns the name call_.choice refers to
  const void* in_ = nullptr;
  void* out_ = nullptr;
  request run_;
  bool active_ = false;
};

void wait_all(std::span<request> requests);
bool test_all(std::span<request> requests);
// Waits until one of the requests completes; returns its index (requests.size() if none is valid).
std::size_t wait_any(std::span<request> requests);

class comm : public collectives<comm, request> {
 public:
  // Duplicates `parent` (ranklab's messages never meet the program's) with errors returned,
  // not fatal, so that they become ranklab exceptions. MPI must be initialized.
  explicit comm(MPI_Comm parent);
  comm(comm&&) noexcept;
  comm& operator=(comm&&) noexcept;
  // Frees the duplicate (once requests still running on it have finished). Destroy the comm
  // before MPI_Finalize; after it, the duplicate is left to MPI.
  ~comm();

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Communicators, as ranklab::comm's (so that code compiles against either): collective
  // over this comm, through MPI_Comm_split, MPI_Comm_dup, MPI_Comm_create_group and
  // MPI_Comm_split_type (MPI_COMM_TYPE_SHARED, then the domain of each process's core,
  // from hwloc, within the node).
  std::optional<comm> split(int color, int key = 0);
  comm dup() const;
  std::optional<comm> create(std::span<const int> members);
  comm split_type(domain d);

  // The general entry points (the typed collectives of collectives.hpp call these): select
  // the algorithm, build (or reuse) this rank's schedule and run it. `in`/`out` hold the
  // extents buffer_extents() gives for this rank.
  void run_collective(const call& c, const void* in, void* out);
  [[nodiscard]] request start_collective(const call& c, const void* in, void* out);
  // The persistent form: checks the call and builds its schedule once (persistent_request::start
  // runs it). The buffers must stay valid while it lives.
  [[nodiscard]] persistent_request init_collective(const call& c, const void* in, void* out);

  // The algorithm the last collective call used and why.
  const algorithm* last_algorithm() const;
  std::string_view last_selection_reason() const;
  // ranklab's private duplicate of the parent communicator.
  MPI_Comm native() const;

 private:
  friend void detail::mark_failed(ranklab::mpi::comm& c, const std::string& why) noexcept;
  std::shared_ptr<detail::comm_state> state_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace ranklab::mpi
