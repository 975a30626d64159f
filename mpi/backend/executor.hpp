// The MPI executor: the third interpreter of schedules, beside the thread and sequential
// executors. Each round runs its pre steps, posts its receive and its send (PMPI_Irecv,
// PMPI_Isend: the one-ported round as one send-receive), waits for both, reduces a
// reducing receive locally with ranklab's kernels (detail/transfer.hpp, the data path of
// every executor) and runs its post steps. A message's region list is one MPI derived
// datatype over the caller's and the scratch buffers (message.hpp), so packed messages need
// no staging copy. Only PMPI_* calls: the interposer defines the MPI_* collectives.
//
// Telling calls apart. Every message carries its call's tag: the call's signature and its
// number in the sequence of calls on the communicator (sequenced_tag), received with exactly
// that tag, so calls in flight at once never take each other's messages. A rank waiting for
// a peer looks at the first message from that peer it has not matched (PMPI_Iprobe with
// MPI_ANY_TAG): a tag of the same number and another signature means the ranks are in
// different collectives (mismatch_error naming both ranks and both tags), where native MPI
// would hang or mix data. Tags of other numbers belong to calls before or after (a matched
// receive may still be in transfer while the peer's next call's message waits behind it). A
// rank that fails sends every other rank of the communicator an empty notice (tag 0, never a
// call's tag); a rank waiting on that communicator finds it and throws remote_failure instead of
// waiting forever for a peer that has left. Notices stay unreceived, so a communicator
// that saw a failure keeps failing.
//
// Errors: ranklab's communicators return MPI errors (MPI_ERRORS_RETURN), which become
// ranklab exceptions. MPICH (4.0) reports errors found when a request completes (e.g. a
// truncated receive) through MPI_COMM_WORLD's error handler instead, so there they abort the
// job unless the program set MPI_ERRORS_RETURN on MPI_COMM_WORLD. Such errors need ranks
// whose schedules disagree under the same tag (a signature hash collision).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "detail/aligned_buffer.hpp"
#include "detail/transfer.hpp"
#include "message.hpp"
#include "ranklab/call.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"
#include "ranklab/selection.hpp"

namespace ranklab::mpi::detail {

// Runs one rank's schedule over point-to-point on `comm` (a communicator private to ranklab,
// e.g. a dup of the user's), with PMPI_* calls only (so that the interposer does not recurse).
// Messages carry `tag`; a message arriving with another tag means the ranks are in different
// calls: mismatch_error naming rank, call and peer. MPI errors become ranklab exceptions with
// the MPI error string. Throws usage_error for a schedule with fence rounds or remote steps.
// `tag` is combined with the call's number on `comm` (execute counts its calls per
// communicator, in an attribute of it), so every rank must make the same sequence of
// execute calls on a communicator, as MPI's rule for collectives asks anyway.
// `name` (static storage, e.g. name(collective)) names the call in errors.
void execute(const schedule& s, const void* in, void* out, const datatype& type, const op& reduction,
             MPI_Comm comm, int tag, std::string_view name = "collective");

// The tag for a call: a hash of the call signature (collective, p, root, counts, type, op, algorithm)
// folded into [1, tag_ub), so that ranks in different calls do not match each other's messages.
int call_tag(const call& c, const algorithm& a, MPI_Comm comm);

// The same signature, unfolded: what the ranks must agree on, the same in every process
// (algorithm by name, user operators by commutativity only: their addresses differ).
std::uint64_t call_signature(const call& c, const algorithm& a);

// A call as its messages show it: the tag (sequenced_tag) and the span S of its sequence
// number (tags of the same number are 1 + n mod S apart from multiples of S).
struct call_identity {
  int tag = 1;
  int span = 1;
  std::string_view name = "schedule";  // the collective, for errors (static storage)
};

// The tag of the `sequence`-th call of a communicator with `signature`; sets `span`. Up to
// `span` calls (4096 with Open MPI's and MPICH's tag range) can be in flight at once.
int sequenced_tag(std::uint64_t signature, std::uint64_t sequence, MPI_Comm comm, int& span);
// How many execute() calls ran on `comm`, kept in an attribute of the communicator, so that
// the count ends with it (a new communicator reusing the handle starts from 0).
std::uint64_t& call_counter(MPI_Comm comm);

// select_algorithm restricted to what can run over MPI: one-ported algorithms. A
// shared-memory algorithm asked for by name or by RANKLAB_<COLL>_ALGORITHM is a usage_error
// naming the one-ported algorithms that accept the call; one chosen by "auto" is replaced by
// the selection table's best one-ported choice, and `reason` says so.
// "auto" over MPI consults the MPI selection table first (mpi_selection), passing over its
// "native" rules: this executor always runs a ranklab schedule.
const algorithm& select_one_ported(const coll_args& args, std::size_t elem_size, std::string_view requested,
                                   std::string* reason = nullptr);

// The selection table measured over this MPI (`ranklab tune --backend mpi`): the file named
// by RANKLAB_MPI_SELECTION ("none": no table), else the one shipped for this MPI
// (data/selection/mpi-<impl>.json, compiled in), else none (nullptr). Read at first use; a
// bad file is a usage_error naming it.
const selection_table* mpi_selection();

// The interposer's "auto": the MPI table's choice, which may be the native collective
// (native = true, algo null); a call it has no rule for (or whose rules' algorithms cannot
// run it) gets select_one_ported's. An algorithm named by RANKLAB_<COLL>_ALGORITHM wins over
// the table, as for the thread runtime. With native_allowed false the table's native rules
// are passed over (the call's native collective is known to compute wrong results).
struct mpi_choice {
  const algorithm* algo = nullptr;
  bool native = false;
  std::string why;
};
mpi_choice choose_over_mpi(const coll_args& args, std::size_t elem_size, bool native_allowed = true);

// Memory reused by the scratch buffers of consecutive blocking calls.
struct scratch_arena {
  ranklab::detail::aligned_bytes data;
  std::size_t bytes = 0;
  std::byte* reserve(std::size_t n);
};

// One rank's schedule in flight over MPI. Registered, while it lives, in the process's list
// of runs that progress_all() advances. Neither copied nor moved (MPI holds its buffers).
class running_schedule {
 public:
  // Checks the schedule against the communicator (rank, size, no fences, no remote steps)
  // and the operator against the type; runs nothing yet. Scratch comes from `arena` when
  // given (blocking calls), else it is owned.
  running_schedule(const schedule& s, const void* in, void* out, const datatype& type, const op& reduction,
                   MPI_Comm comm, call_identity id, scratch_arena* arena = nullptr);
  running_schedule(const running_schedule&) = delete;
  running_schedule& operator=(const running_schedule&) = delete;
  // An unfinished run is abandoned: its receive cancelled, its send left to MPI.
  ~running_schedule();

  // Runs as far as it can without blocking. True when it moved (something was posted,
  // completed or failed). A failure is kept for result(), never thrown from here.
  bool advance() noexcept;
  // Looks for what a wait cannot see: the awaited peer in another call, a peer's failure
  // notice. Either fails the run.
  void check_peers() noexcept;
  bool finished() const noexcept { return state_ != state::running; }
  // Rethrows the failure, if the run failed.
  void result() const;

 private:
  enum class state { running, complete, failed };
  void post(const round& r);
  bool test_requests();
  void finish(const round& r);
  void run_steps(std::span<const local_step> steps);
  void fail(std::exception_ptr e, bool notify = true) noexcept;
  void abandon() noexcept;
  [[noreturn]] void mismatch(int peer, int other_tag) const;

  const schedule& plan_;
  MPI_Comm comm_;
  call_identity id_;
  op reduction_;
  ranklab::detail::reduction red_;
  ranklab::detail::buffer_table buffers_;
  ranklab::detail::aligned_bytes owned_;
  std::byte* staging_ = nullptr;  // where reducing receives land
  state state_ = state::running;
  bool started_ = false;
  bool posted_ = false;
  std::size_t round_ = 0;
  MPI_Request send_ = MPI_REQUEST_NULL, recv_ = MPI_REQUEST_NULL;
  mpi_message send_msg_, recv_msg_;
  MPI_Status recv_status_{};
  std::exception_ptr error_;
};

// One pass of progress over every run in flight in the process; true when any moved.
bool progress_all() noexcept;

// The pace of a waiting loop, told after each pass whether anything moved: while nothing
// does, it looks for peers in other calls and failure notices now and then (check_peers of
// every run: a probe each), and yields the core between passes (oversubscribed ranks share
// cores, and MPICH's own waits spin without yielding).
class idle_poller {
 public:
  void pass(bool moved);

 private:
  unsigned idle_ = 0;
};
// Blocks until `run` has finished, advancing every run in flight meanwhile (a peer may wait
// for this rank's part of another call), then rethrows its failure. Polls, and yields the
// core while nothing moves: oversubscribed ranks share cores.
void wait_for(running_schedule& run);

}  // namespace ranklab::mpi::detail
