// One comm of threads across MPI processes: T threads in each of N processes are the N*T
// ranks of one comm (rank = process * T + thread, processes in the parent communicator's
// order), on which every collective runs hierarchically: inside a process on the thread
// runtime (a ranklab::team of the process's threads), between processes on the MPI executor
// (ranklab::mpi::comm among one leader thread per process), each level's algorithm a
// registered one of its own choice (docs/mpi.md, "Threads across processes"):
//
//   MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
//   {
//     ranklab::mpi::thread_team team(MPI_COMM_WORLD, 4);  // collective over the processes
//     team.run([](ranklab::mpi::team_comm& c) {          // 4 threads here, N*4 ranks in all
//       c.allreduce(in, out, ranklab::ops::sum);
//       auto row = c.split(c.rank() / 4);                 // sub-comms, along or across processes
//     });
//   }
//   MPI_Finalize();
//
// MPI thread level: MPI_THREAD_MULTIPLE. ranklab's own MPI traffic is serialized by a lock of
// the process (the MPI executor keeps one list of calls in flight per process), but making a
// comm (split, dup, create) blocks in MPI_Comm_create_group while the process's other threads go on
// advancing collectives of other comms: under a lower level that would either be illegal or,
// holding the lock, deadlock against a process that waits for one of those collectives.
// The constructor checks the level and throws usage_error when it is lower.
//
// Rank order: a comm keeps the ranks of each process together (the composition relies on it
// for non-commutative reductions, scans and the gathered layouts). split orders ranks by
// (key, parent rank) as MPI_Comm_split does, except that when that order would interleave
// processes, processes are ordered by their first member in it and ranks within a process by
// it: with keys that keep processes apart (e.g. key = parent rank, or 0) the order is MPI's.
//
// Failure: a rank that throws in a collective, or whose function passed to run() throws,
// fails its process's team (releasing its threads) and sends a notice to every other process,
// whose waiting threads then throw remote_failure: no thread of any process is left waiting.
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ranklab/call.hpp"
#include "ranklab/collectives.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/mpi.hpp"
#include "ranklab/mpi_error.hpp"
#include "ranklab/team.hpp"

namespace ranklab::mpi {

namespace detail {
struct team_shared;
struct team_comm_state;
struct chain;
}  // namespace detail

class team_comm;

// A nonblocking collective of a team_comm in progress: the phases of its composition (a
// thread-level call, the leader's MPI call, another thread-level call), each started when
// the one before has finished. It advances when the rank tests or waits on it, on another
// of its requests, or runs a blocking collective (MPI's progress rule).
class team_request {
 public:
  team_request() noexcept;
  team_request(team_request&&) noexcept;
  team_request& operator=(team_request&&) noexcept;
  // Destroying an unfinished request waits for it (errors swallowed: the comm has failed).
  ~team_request();

  bool test();  // advances every call of the rank in flight; true once this one is complete
  void wait();
  bool done() const;
  bool valid() const { return chain_ != nullptr; }

 private:
  friend class team_comm;
  friend class team_persistent_request;
  explicit team_request(std::shared_ptr<detail::chain> c);
  std::shared_ptr<detail::chain> chain_;
};

// A persistent collective (the *_init forms): checked once at init; every start() runs the
// composition again on the same buffers as a nonblocking call.
class team_persistent_request {
 public:
  team_persistent_request() noexcept;
  team_persistent_request(team_persistent_request&&) noexcept;
  team_persistent_request& operator=(team_persistent_request&&) noexcept;
  ~team_persistent_request();

  void start();  // usage_error while a run is active
  bool test();   // true when no run is active
  void wait();
  bool active() const { return run_.valid() && !completed_; }
  bool valid() const { return comm_ != nullptr; }

 private:
  friend class team_comm;
  team_persistent_request(team_comm& c, const call& k, const void* in, void* out);
  team_comm* comm_ = nullptr;
  call call_;
  std::string algorithm_;  // owns the name call_.choice refers to
  const void* in_ = nullptr;
  void* out_ = nullptr;
  team_request run_;
  bool completed_ = true;
};

// One rank's view of a comm across processes. Made by thread_team::run / attach, split, dup
// and create; used by one thread (the rank's) at a time.
class team_comm : public collectives<team_comm, team_request> {
 public:
  team_comm(team_comm&&) noexcept;
  team_comm& operator=(team_comm&&) noexcept;
  ~team_comm();

  int rank() const;
  int size() const;
  // This rank's process (its index among the comm's processes, in rank order), the number of
  // processes with ranks in the comm, and this rank's number among its process's ranks.
  int process() const;
  int processes() const;
  int local_rank() const;
  int local_size() const;

  // Collective over this comm. Ranks with colour `undefined` get no comm. See the header
  // comment for the rank order.
  std::optional<team_comm> split(int color, int key = 0);
  team_comm dup();
  // The ranks `members` (ranks of this comm, in the new order; the same list at every rank);
  // the others get no comm.
  std::optional<team_comm> create(std::span<const int> members);

  // The general entry points behind the typed collectives. `c.choice` names the algorithm
  // between processes ("auto": the MPI executor's selection); each thread level's algorithm is
  // its selection's, both overridable through RANKLAB_HIERARCHY_ALGORITHMS with the levels
  // "process" and "thread" (e.g. "process:allreduce=ring,thread:reduce=binomial").
  void run_collective(const call& c, const void* in, void* out);
  [[nodiscard]] team_request start_collective(const call& c, const void* in, void* out);
  [[nodiscard]] team_persistent_request init_collective(const call& c, const void* in, void* out);

  // The algorithm the call between processes of this rank's last collective ran, when this
  // rank led it (see docs/mpi.md for who leads), else null.
  const algorithm* last_process_algorithm() const;

  // The thread-level comm of this process's ranks, and the MPI comm among the processes'
  // leaders: at local rank 0 of a comm with more than one process, else null. The process's
  // other threads use that MPI comm too (each call's leader, under ranklab's traffic lock):
  // read it (size, rank) but make no calls on it, nor read its last_algorithm().
  ranklab::comm& local();
  ranklab::mpi::comm* leaders();

 private:
  friend class thread_team;
  friend class team_request;
  friend class team_persistent_request;
  explicit team_comm(std::unique_ptr<detail::team_comm_state> s);
  // The comm of one member list of `comms` (ranks here, in their new order) at its members;
  // std::nullopt at a rank in none. Collective over this comm.
  std::optional<team_comm> form_from(const std::vector<std::vector<int>>& comms, const char* operation);
  std::unique_ptr<detail::team_comm_state> state_;
};

struct thread_team_options {
  // The threads' team (binding, execution, eager limit ...). Execution must be threads: the
  // ranks call MPI, so they must be OS threads (fibers would share one).
  team_options threads = team_options::from_environment();
};

class thread_team {
 public:
  // Collective over `parent`'s processes, each passing the same `threads_per_process`, from
  // one thread per process. Needs MPI_THREAD_MULTIPLE (usage_error otherwise).
  thread_team(MPI_Comm parent, int threads_per_process, thread_team_options options = {});
  ~thread_team();  // before MPI_Finalize; comms made from it must be gone
  thread_team(const thread_team&) = delete;
  thread_team& operator=(const thread_team&) = delete;

  int processes() const;
  int threads() const;
  int size() const { return processes() * threads(); }
  int process() const;  // this process's index (its rank in `parent`)

  // Starts this process's T threads, calls fn(comm) on each with the comm of all N*T ranks,
  // joins them and rethrows the first failure (a failure in another process arrives as
  // remote_failure). Collective over the processes.
  void run(const std::function<void(team_comm&)>& fn);
  // The application's own threads: thread `t` (0 <= t < T) of this process attaches and gets
  // its rank's comm (rank process() * T + t). Every thread of every process must attach.
  team_comm attach(int thread);

 private:
  team_comm world_comm(ranklab::comm local);  // the rank of `local` in the comm of all ranks
  std::shared_ptr<detail::team_shared> shared_;
};

}  // namespace ranklab::mpi
