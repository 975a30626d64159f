// Teams of ranks: p threads of one process, each a rank, pinned with hwloc.
//   ranklab::run(p, fn)      starts p ranks (threads, or fibers on pinned workers when
//                            there are more ranks than cores), calls fn(comm) on each,
//                            joins, and rethrows the first failure;
//   ranklab::team t(p) ...   lets a threaded application attach its own threads as ranks.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ranklab {

class comm;
namespace detail {
struct team_state;
}

enum class binding_policy {
  automatic,  // compact when p fits the cores, none when oversubscribed
  compact,    // rank r on core r (mod cores), first hardware thread of the core
  spread,     // ranks spread evenly over the machine (packages, NUMA nodes, cores)
  none,       // leave placement to the operating system
};
std::string_view name(binding_policy b);
binding_policy binding_from_name(std::string_view n);  // throws usage_error

// How ranks run (team_options::execution).
enum class execution_mode {
  automatic,  // threads when every rank has a core, fibers when oversubscribed
  threads,    // one OS thread per rank, pinned by the binding policy
  fibers,     // ranks as fibers multiplexed on one pinned worker thread per core: a rank
              // that waits switches to another rank of its worker (tens of ns) instead of
              // handing its core to the kernel (a futex wake-up costs microseconds)
};
std::string_view name(execution_mode m);
execution_mode execution_from_name(std::string_view n);  // throws usage_error

// The hardware domains comm::split_type groups ranks by: the core, last-level (L3)
// cache, NUMA node or package their binding lies in, or the whole machine.
enum class domain { core, l3, numa, package, machine };
std::string_view name(domain d);
domain domain_from_name(std::string_view n);  // throws usage_error
// split's colour for a rank that wants no comm.
inline constexpr int undefined = -1;
// The index of the domain of kind `d` holding the core the calling thread runs on (on this
// machine, from hwloc: the core of the CPU it last ran on), and how many this machine has:
// what a process that is not a rank of a team (an MPI process) splits by.
int current_domain(domain d);
int domain_count(domain d);

struct team_options {
  binding_policy binding = binding_policy::automatic;
  execution_mode execution = execution_mode::automatic;
  // Deterministic mode: every rank a fiber on one worker, and which rank runs next at every
  // switch drawn from this seed. The whole program, the user's code between calls
  // included, then runs the same way every time (traces use a logical clock); another seed
  // is another interleaving (see explore()). Implies fibers.
  std::optional<std::uint64_t> seed;
  // Usable stack of a rank fiber (plus a guard page: an overflow is reported, naming the
  // rank). Pages are committed as the stack grows.
  std::size_t stack_bytes = 256 * 1024;
  // Messages up to this many bytes travel inline in the mailbox; larger ones by descriptor,
  // copied once by the receiver from the sender's buffer. Capped at max_eager_limit.
  std::size_t eager_limit = 2048;
  bool trace = false;  // record every round (see trace_event)
  // All live ranks blocked with no progress for this long is reported as a deadlock.
  std::chrono::milliseconds deadlock_timeout{400};
  // Nonblocking collectives advance when the rank tests or waits. With a progress thread
  // per rank they also advance while the rank computes, at the price of one more thread
  // per rank competing for the cores.
  bool progress_thread = false;
  // A waiting rank polls `spin_polls` times, then yields its core `yields` times, then
  // sleeps on a futex until woken. -1: automatic (a long spin when every rank has a core,
  // a short one when oversubscribed, where spinning steals the time of the awaited rank).
  int spin_polls = -1;
  int yields = -1;
  // The machine comm::split_type and domain_index see: empty for this machine (hwloc), or
  // an hwloc synthetic description such as "package:2 numa:2 core:4" (pu:1 implied), on
  // which the team's rank r counts as running on core r modulo the cores: a laptop can
  // pretend to be a bigger node.
  std::string topology;
  // Reads RANKLAB_BINDING, RANKLAB_EXECUTION, RANKLAB_SEED, RANKLAB_STACK_KIB,
  // RANKLAB_EAGER_LIMIT, RANKLAB_TRACE, RANKLAB_DEADLOCK_MS, RANKLAB_PROGRESS_THREAD,
  // RANKLAB_SPIN_POLLS, RANKLAB_YIELDS, RANKLAB_TOPOLOGY.
  static team_options from_environment();
};
inline constexpr std::size_t max_eager_limit = 4096;
// The mailbox-pointer table has p^2 entries: beyond this a team is a usage_error up front
// rather than memory exhaustion.
inline constexpr int max_team_size = 4096;
// The smallest team_options::stack_bytes: the runtime's own frames and an error's
// formatting need about this much below the rank's code.
inline constexpr std::size_t min_stack_bytes = 32 * 1024;

// Where a rank thread runs.
struct binding_info {
  int rank = 0;
  binding_policy policy = binding_policy::none;  // the policy actually applied
  int core = -1;                                 // logical core index, -1 when unbound
  std::string cpuset;                            // hwloc cpuset list, e.g. "0" or "0-1"
  std::string note;                              // why unbound, if so
};

// One round as the thread executor saw it (tracing is off by default and costs one branch).
struct trace_event {
  int rank = 0;
  std::uint32_t call = 0;  // collective sequence number (0: point-to-point)
  std::string_view coll;   // "bcast", ... or "p2p"
  std::uint32_t round = 0;
  int to = -1, from = -1;
  std::uint64_t bytes_sent = 0, bytes_received = 0;
  std::uint64_t begin_ns = 0, end_ns = 0;  // since the team started
  // The comm of the round (0: the team's own; others numbered as the team makes them) and
  // the rank's number in it. rank, to and from are team ranks whichever comm it is.
  std::uint32_t comm = 0;
  int comm_rank = 0;
};

struct machine_info {
  int cores = 1;
  int hardware_threads = 1;
  int numa_nodes = 1;
  std::string description;  // e.g. "1 package, 2 cores, 2 PUs"
};
machine_info machine();

class team {
 public:
  explicit team(int p, team_options options = team_options::from_environment());
  ~team();
  team(const team&) = delete;
  team& operator=(const team&) = delete;

  int size() const;
  const team_options& options() const;
  // How ranklab::run runs this team's ranks: threads or fibers (options().execution
  // resolved for this machine; auto is fibers when p exceeds the cores or with a seed).
  execution_mode execution() const;

  // Attach the calling thread as `rank` (one thread per rank at a time). `bind` pins the
  // thread with the team's policy; an application's own threads are left where they are by
  // default. The comm must not outlive the team; destroying it marks the rank finished
  // (detached): the rank may then attach again, from any thread (a later OpenMP parallel
  // region), and its calls go on being numbered where they stopped. Threads
  // only: a usage_error in execution mode fibers or with a seed (ranks there are fibers
  // that ranklab::run starts).
  comm attach(int rank, bool bind = false);
  // attach + fn(comm) + report a failure to every other rank (then rethrow it here).
  void run_as(int rank, const std::function<void(comm&)>& fn, bool bind = false);

  bool failed() const;
  void rethrow_if_failed() const;  // the first failure, as thrown

  std::vector<binding_info> bindings() const;  // as applied
  std::vector<trace_event> trace() const;      // all ranks, ordered by rank then time
  void write_trace_json_lines(std::ostream& out) const;
  // The same events in the Chrome trace-event format (chrome://tracing, Perfetto): one track
  // per rank (pid 0, tid = rank), a slice ("X") per round with the call, collective, round,
  // peers and bytes in its args, and a flow arrow ("s" at the sender, "f" at the receiver,
  // matching ids) per message. trace_event does not record the algorithm: algorithm_of,
  // when given, names it for an event (e.g. from comm::last_algorithm of the traced call).
  void write_trace_chrome(std::ostream& out,
                          const std::function<std::string(const trace_event&)>& algorithm_of = {}) const;

  detail::team_state& state() { return *state_; }

 private:
  friend void run(team& t, const std::function<void(comm&)>& fn);
  // The rank's comm, for a thread or fiber that runs it at `where`.
  comm join(int rank, const binding_info& where);
  std::unique_ptr<detail::team_state> state_;
};

// The team rank the calling thread or fiber runs (the rank it attached as, for an
// application thread), or -1: the same in every comm made from the team (comm::rank() is
// the rank in one comm, comm::world_rank() this). A thread attached to several teams gets
// its rank in the one it attached to last. On fibers the ranks of a worker share its thread, so a thread_local
// cannot tell them apart: this can.
int this_rank();

// Lets the other ranks run: on a fiber, the other ranks of its worker; on a thread,
// std::this_thread::yield(). A rank that waits in a loop for another rank's plain memory
// write (outside ranklab calls) must call this in the loop: on fibers the writer may share
// its worker and run only when the waiter switches.
void yield();

// Starts p ranks (threads or fibers: team_options::execution), runs fn on each, joins,
// rethrows the first failure.
void run(int p, const std::function<void(comm&)>& fn, team_options options = team_options::from_environment());
// The same on an existing team (to read its bindings or trace afterwards).
void run(team& t, const std::function<void(comm&)>& fn);

}  // namespace ranklab
