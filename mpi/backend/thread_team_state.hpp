// What a thread_team and its comms hold (see ranklab/thread_team.hpp and docs/mpi.md,
// "Threads across processes"). A comm across processes is two comms: `local`, the thread
// runtime's comm of this process's ranks of it, and `leaders`, an MPI comm with one rank per
// process (its rank = the process's index in the comm). A collective is a chain of phases on
// them (thread_team_collectives.cpp), advanced by the rank that made it.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "detail/aligned_buffer.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/hierarchy.hpp"
#include "ranklab/mpi.hpp"
#include "ranklab/thread_team.hpp"

namespace ranklab::mpi::detail {

// The lock that serializes ranklab's MPI traffic in the process: the MPI executor keeps one
// list of runs in flight per process (progress_all), which a test by any thread advances.
std::mutex& mpi_traffic_lock();

struct chain;

// One per thread_team and process.
struct team_shared {
  int processes = 1;
  int process = 0;  // this one's rank in the parent
  int threads = 1;
  MPI_Comm notices = MPI_COMM_NULL;  // failure notices between the processes (a dup of the parent)
  std::unique_ptr<ranklab::team> team;  // this process's threads
  std::shared_ptr<ranklab::mpi::comm> world_leaders;  // among the processes, for the first comm
  std::shared_ptr<struct process_part> world;         // the first comm's part (run and attach)
  std::vector<phase_choice> choices;  // RANKLAB_HIERARCHY_ALGORITHMS, levels "process" and "thread"
  // A process failed (this one: notice sent; another: notice seen): the first failure's text.
  std::atomic<bool> failed{false};
  std::mutex failure_mutex;
  std::string failure_what;
  int failure_rank = -1;  // in the comm of all ranks
  // The chains in flight of each thread rank (index: rank in `team`), each touched only by
  // its rank: a wait advances every one of them (MPI's progress rule across comms).
  std::vector<std::vector<chain*>> in_flight;

  ~team_shared();
  // Records the failure of `rank` (in the comm of all ranks) here and tells every other
  // process, once: the notice carries the rank and the error's text.
  void fail_here(int rank, const std::string& what) noexcept;
  // Looks for another process's notice (under the traffic lock); true if some process failed.
  bool poll_notices() noexcept;
  // Fails this process's thread team, releasing its waiting threads.
  void release_threads() noexcept;
  // The error a rank released by the failure throws: remote_failure naming the failed rank.
  std::exception_ptr released(int rank, const std::string& operation);
};

// What the ranks of one comm in one process share: the process layout of the comm, the MPI
// comm among its processes' leaders, and the turn counter that keeps the leaders' MPI calls
// in call order whichever thread leads them.
struct process_part {
  std::vector<int> process_offset;  // first comm rank of each process; back() = comm size
  int process = 0;                  // this process's index in the comm
  std::shared_ptr<ranklab::mpi::comm> leaders;  // null when the comm has one process
  MPI_Comm leaders_native = MPI_COMM_NULL;      // its communicator (to make sub-comms from)
  std::atomic<std::uint64_t> mpi_turn{0};       // calls whose MPI phase has been started
  const std::atomic<bool>* team_failed = nullptr;  // the thread_team's (team_shared::failed)
  // Per local rank (each entry touched by its rank only): calls whose thread phases have all
  // been started. Here rather than in a rank's team_comm, so that a rank attaching again
  // goes on where it stopped.
  std::vector<std::uint64_t> local_turn;
  std::vector<std::uint64_t> calls;  // per local rank: collective calls made on the comm
  void size_for(int local_ranks) {
    local_turn.assign(static_cast<std::size_t>(local_ranks), 0);
    calls.assign(static_cast<std::size_t>(local_ranks), 0);
  }
  ~process_part();                              // frees `leaders` under the traffic lock
};

struct team_comm_state {
  std::shared_ptr<team_shared> shared;
  std::shared_ptr<process_part> part;
  std::optional<ranklab::comm> local;
  int thread = 0;  // rank in shared->team (the in_flight list it advances)
  const algorithm* last_process_algorithm = nullptr;  // of the last call this rank led
  int rank = 0;
  int size = 1;
  int processes() const { return static_cast<int>(part->process_offset.size()) - 1; }
  int first_rank() const { return part->process_offset[static_cast<std::size_t>(part->process)]; }
};

// One phase of a chain: starts a call on `local` or `leaders`, or does local work (packing).
struct phase {
  enum class level { thread, process, work } where = level::work;
  std::function<void()> run;
  bool last_thread_phase = false;  // after starting it, the next call's thread phases may start
};

// A collective in flight at one rank: its phases in order, each started when the one before
// has completed, the thread phases only in the rank's call order (local_turn) and the
// process phase only in the process's (mpi_turn), so that every comm sees its calls in the
// same order at every rank.
struct chain {
  team_comm_state* comm = nullptr;
  std::string name;    // the collective, for errors
  std::string choice;  // the call's algorithm name (the process phase's, when named)
  const algorithm* process_algorithm = nullptr;  // what the process phase ran (at its leader)
  std::uint64_t number = 0;  // the call's number on the comm (0, 1, ...)
  std::vector<phase> phases;
  std::size_t next = 0;
  ranklab::request local_call;
  ranklab::mpi::request mpi_call;
  std::vector<ranklab::detail::aligned_bytes> temps;  // the phases' temporary buffers
  std::shared_ptr<void> keep;                         // what the phases refer to
  bool complete = false;
  bool listed = false;
  std::exception_ptr error;
  unsigned idle = 0;

  std::byte* temp(std::size_t bytes);
  ~chain();
};

// The message of the exception being handled.
std::string what_of_current();

// Moves the chain as far as it can without waiting; true if anything moved.
bool advance(chain& c) noexcept;
// Advances every chain in flight of the rank; true if anything moved.
bool advance_all(team_shared& s, int thread) noexcept;
// Lists the chain with its rank's chains in flight and starts it.
void launch(const std::shared_ptr<chain>& c);
// Waits (advancing everything of the rank) until `c` completes; rethrows its failure.
void wait(chain& c);

// The phases of call `c` at this rank (thread_team_collectives.cpp).
void compose(chain& ch, team_comm_state& s, const call& c, const void* in, void* out);

}  // namespace ranklab::mpi::detail
