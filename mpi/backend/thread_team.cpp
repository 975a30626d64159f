// ranklab::mpi::thread_team and team_comm: the comm of threads across processes (see
// ranklab/thread_team.hpp), its sub-comms, requests, and the chains that run its collectives.
#include "ranklab/thread_team.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>

#include "detail/team_state.hpp"
#include "mpi_check.hpp"
#include "progress.hpp"
#include "thread_team_state.hpp"

namespace ranklab::mpi {

namespace detail {

std::mutex& mpi_traffic_lock() {
  static std::mutex lock;
  return lock;
}

// ---- failure across processes --------------------------------------------------------------

team_shared::~team_shared() {
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (finalized || notices == MPI_COMM_NULL) return;
  // Notices stay unreceived (a failed team keeps failing), so the communicator is kept when
  // one was sent or seen; MPI would hand them to a communicator reusing its context.
  if (!failed.load()) PMPI_Comm_free(&notices);
}

// A notice is the failed rank (an int) and the error's text, sent to every other process as
// one message of tag 0 on `notices` (which carries nothing else). Its buffer is never freed:
// the sends are not waited for (the receiver may be gone), and a team fails once.
void team_shared::fail_here(int rank, const std::string& what) noexcept {
  {
    std::lock_guard lock(failure_mutex);
    if (failed.load()) return;
    failure_what = what;
    failure_rank = rank;
    failed.store(true);
  }
  try {
    auto* payload = new std::vector<char>(sizeof(int) + what.size());
    std::memcpy(payload->data(), &rank, sizeof(int));
    std::memcpy(payload->data() + sizeof(int), what.data(), what.size());
    std::lock_guard traffic(mpi_traffic_lock());
    for (int q = 0; q < processes; ++q) {
      if (q == process) continue;
      MPI_Request req = MPI_REQUEST_NULL;
      if (PMPI_Isend(payload->data(), static_cast<int>(payload->size()), MPI_CHAR, q, 0, notices, &req) ==
          MPI_SUCCESS)
        PMPI_Request_free(&req);
    }
  } catch (...) {
  }
}

bool team_shared::poll_notices() noexcept {
  if (failed.load()) return true;
  try {
    std::vector<char> payload;
    {
      std::lock_guard traffic(mpi_traffic_lock());
      int found = 0, bytes = 0;
      MPI_Status status;
      if (PMPI_Iprobe(MPI_ANY_SOURCE, 0, notices, &found, &status) != MPI_SUCCESS || !found) return false;
      PMPI_Get_count(&status, MPI_CHAR, &bytes);
      payload.resize(static_cast<std::size_t>(std::max(bytes, static_cast<int>(sizeof(int)))));
      PMPI_Recv(payload.data(), bytes, MPI_CHAR, status.MPI_SOURCE, 0, notices, MPI_STATUS_IGNORE);
    }
    int rank = no_rank;
    std::memcpy(&rank, payload.data(), sizeof(int));
    {
      std::lock_guard lock(failure_mutex);
      if (!failed.load()) {
        failure_rank = rank;
        failure_what = std::string(payload.begin() + sizeof(int), payload.end());
        failed.store(true);
      }
    }
  } catch (...) {
    return false;
  }
  release_threads();
  return true;
}

std::exception_ptr team_shared::released(int rank, const std::string& operation) {
  std::lock_guard lock(failure_mutex);
  return std::make_exception_ptr(remote_failure(rank, operation, failure_rank, failure_what));
}

void team_shared::release_threads() noexcept {
  try {
    auto& state = team->state();
    if (state.failed.load()) return;
    std::exception_ptr e = released(no_rank, "thread_team");
    state.fail(no_rank, e, failure_what, ranklab::detail::failure_kind::rank_error);
  } catch (...) {
  }
}

process_part::~process_part() {
  if (!leaders) return;
  std::lock_guard traffic(mpi_traffic_lock());
  if (team_failed && team_failed->load()) mark_failed(*leaders, "the thread team failed");
  leaders.reset();
}

// ---- chains --------------------------------------------------------------------------------

std::byte* chain::temp(std::size_t bytes) {
  temps.push_back(ranklab::detail::make_aligned_bytes(std::max<std::size_t>(bytes, 1)));
  return temps.back().get();
}

namespace {

void delist(chain& c) noexcept {
  if (!c.listed) return;
  auto& list = c.comm->shared->in_flight[static_cast<std::size_t>(c.comm->thread)];
  list.erase(std::remove(list.begin(), list.end(), &c), list.end());
  c.listed = false;
}

}  // namespace

std::string what_of_current() {
  try {
    throw;
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}

namespace {

std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}

// A chain that failed: nothing of it may go on touching the caller's buffers, and no rank of
// any process may be left waiting for its part. The process's threads are released (the
// thread team fails) and the other processes are told (their waits find the notice).
void fail_chain(chain& c, std::exception_ptr e) noexcept {
  team_shared& sh = *c.comm->shared;
  c.error = e;
  c.complete = true;
  delist(c);
  sh.fail_here(sh.process * sh.threads + c.comm->thread, what_of(e));
  sh.release_threads();
  {
    std::lock_guard traffic(mpi_traffic_lock());
    abandon(c.mpi_call);
  }
  try {
    c.local_call = ranklab::request();  // returns at once: the team has failed
  } catch (...) {
  }
}

}  // namespace

chain::~chain() {
  delist(*this);
  if (mpi_call.valid()) {
    std::lock_guard traffic(mpi_traffic_lock());
    abandon(mpi_call);
  }
}

bool advance(chain& c) noexcept {
  if (c.complete) return false;
  team_comm_state& s = *c.comm;
  team_shared& sh = *s.shared;
  process_part& part = *s.part;
  const auto me = static_cast<std::size_t>(s.local->rank());
  bool moved = false;
  try {
    // A failure of the thread team ends the chain: the thread call in flight reports it (its
    // own error, such as the mismatch it found), anything else is released here.
    const auto released_if_failed = [&] {
      if (!c.local_call.valid()) sh.team->state().check_failure(s.thread, c.name.c_str());
    };
    for (;;) {
      if (c.local_call.valid()) {
        if (!c.local_call.test()) return moved;
        c.local_call = ranklab::request();
        moved = true;
      }
      if (c.mpi_call.valid()) {
        bool done = false;
        {
          std::lock_guard traffic(mpi_traffic_lock());
          done = c.mpi_call.test();
          if (done) c.mpi_call = ranklab::mpi::request();
        }
        if (!done) {
          released_if_failed();
          return moved;
        }
        moved = true;
      }
      if (c.next == c.phases.size()) {
        c.complete = true;
        delist(c);
        return true;
      }
      phase& ph = c.phases[c.next];
      if (ph.where == phase::level::thread && part.local_turn[me] != c.number) {
        released_if_failed();
        return moved;
      }
      if (ph.where == phase::level::process) {
        if (part.mpi_turn.load(std::memory_order_acquire) != c.number) {
          released_if_failed();
          return moved;
        }
        std::lock_guard traffic(mpi_traffic_lock());
        ph.run();
        part.mpi_turn.store(c.number + 1, std::memory_order_release);
      } else {
        ph.run();
      }
      if (ph.last_thread_phase) part.local_turn[me] = c.number + 1;
      ++c.next;
      moved = true;
    }
  } catch (const remote_failure&) {
    // Released by another rank's failure: name that rank as the comm of all ranks numbers it
    // (the thread team's error would give its thread number).
    fail_chain(c, sh.failed.load() ? sh.released(s.rank, c.name) : std::current_exception());
    return true;
  } catch (...) {
    fail_chain(c, std::current_exception());
    return true;
  }
}

bool advance_all(team_shared& s, int thread) noexcept {
  // advance() may delist chains: walk a copy.
  const std::vector<chain*> chains = s.in_flight[static_cast<std::size_t>(thread)];
  bool moved = false;
  for (chain* c : chains) moved |= advance(*c);
  return moved;
}

void launch(const std::shared_ptr<chain>& c) {
  c->comm->shared->in_flight[static_cast<std::size_t>(c->comm->thread)].push_back(c.get());
  c->listed = true;
  advance(*c);
}

namespace {
// Polls between yields before looking for other processes' failure notices (a probe under
// the traffic lock); finding one a fraction of a millisecond late costs nothing.
constexpr unsigned passes_between_notice_checks = 64;

void note_idle(chain& c, bool moved) {
  if (moved) {
    c.idle = 0;
    return;
  }
  if (++c.idle % passes_between_notice_checks == 0) c.comm->shared->poll_notices();
  ranklab::yield();
}
}  // namespace

void wait(chain& c) {
  while (!c.complete) note_idle(c, advance_all(*c.comm->shared, c.comm->thread));
  if (c.error) std::rethrow_exception(c.error);
}

}  // namespace detail

using detail::check;

// ---- requests ------------------------------------------------------------------------------

team_request::team_request() noexcept = default;
team_request::team_request(std::shared_ptr<detail::chain> c) : chain_(std::move(c)) {}
team_request::team_request(team_request&&) noexcept = default;
team_request& team_request::operator=(team_request&& o) noexcept {
  if (this != &o) {
    team_request old(std::move(*this));
    chain_ = std::move(o.chain_);
  }
  return *this;
}
team_request::~team_request() {
  if (!chain_) return;
  try {
    detail::wait(*chain_);
  } catch (...) {
  }
}

bool team_request::test() {
  if (!chain_) return true;
  if (!chain_->complete) {
    const bool moved = detail::advance_all(*chain_->comm->shared, chain_->comm->thread);
    if (!chain_->complete) {
      detail::note_idle(*chain_, moved);
      return false;
    }
  }
  if (chain_->error) std::rethrow_exception(chain_->error);
  return true;
}

void team_request::wait() {
  if (chain_) detail::wait(*chain_);
}

bool team_request::done() const { return !chain_ || chain_->complete; }

team_persistent_request::team_persistent_request() noexcept = default;
team_persistent_request::team_persistent_request(team_comm& c, const call& k, const void* in, void* out)
    : comm_(&c), call_(k), algorithm_(k.choice.name), in_(in), out_(out) {
  call_.choice.name = algorithm_;
}
team_persistent_request::team_persistent_request(team_persistent_request&& o) noexcept
    : comm_(std::exchange(o.comm_, nullptr)),
      call_(std::move(o.call_)),
      algorithm_(std::move(o.algorithm_)),
      in_(o.in_),
      out_(o.out_),
      run_(std::move(o.run_)),
      completed_(std::exchange(o.completed_, true)) {
  call_.choice.name = algorithm_;
}
team_persistent_request& team_persistent_request::operator=(team_persistent_request&& o) noexcept {
  if (this != &o) {
    run_ = team_request();
    comm_ = std::exchange(o.comm_, nullptr);
    call_ = std::move(o.call_);
    algorithm_ = std::move(o.algorithm_);
    call_.choice.name = algorithm_;
    in_ = o.in_;
    out_ = o.out_;
    run_ = std::move(o.run_);
    completed_ = std::exchange(o.completed_, true);
  }
  return *this;
}
team_persistent_request::~team_persistent_request() = default;

void team_persistent_request::start() {
  if (!comm_) throw usage_error(no_rank, "start", "empty persistent request (default-constructed or moved from)");
  if (active())
    throw usage_error(comm_->rank(), std::string(name(call_.args.coll)),
                      "persistent request started again before its last run completed (wait or test it first)");
  run_ = comm_->start_collective(call_, in_, out_);
  completed_ = false;
}

bool team_persistent_request::test() {
  if (completed_) return true;
  try {
    completed_ = run_.test();
  } catch (...) {
    completed_ = true;
    throw;
  }
  return completed_;
}

void team_persistent_request::wait() {
  if (completed_) return;
  completed_ = true;
  run_.wait();
}

// ---- team_comm -----------------------------------------------------------------------------

team_comm::team_comm(std::unique_ptr<detail::team_comm_state> s) : state_(std::move(s)) {}
team_comm::team_comm(team_comm&&) noexcept = default;
team_comm& team_comm::operator=(team_comm&&) noexcept = default;
team_comm::~team_comm() = default;

int team_comm::rank() const { return state_->rank; }
int team_comm::size() const { return state_->size; }
int team_comm::process() const { return state_->part->process; }
int team_comm::processes() const { return state_->processes(); }
int team_comm::local_rank() const { return state_->local->rank(); }
int team_comm::local_size() const { return state_->local->size(); }
ranklab::comm& team_comm::local() { return *state_->local; }
const algorithm* team_comm::last_process_algorithm() const { return state_->last_process_algorithm; }
ranklab::mpi::comm* team_comm::leaders() {
  return state_->local->rank() == 0 ? state_->part->leaders.get() : nullptr;
}

namespace {

void check_call(const detail::team_comm_state& s, const call& c) {
  const std::string what(name(c.args.coll));
  if (c.args.p != s.size)
    throw usage_error(s.rank, what, fmt::format("call for {} ranks on a comm of {}", c.args.p, s.size));
  validate(c.args);
}

std::shared_ptr<detail::chain> make_chain(detail::team_comm_state& s, const call& c, const void* in, void* out) {
  check_call(s, c);
  auto ch = std::make_shared<detail::chain>();
  ch->comm = &s;
  ch->name = std::string(name(c.args.coll));
  detail::compose(*ch, s, c, in, out);
  ch->number = s.part->calls[static_cast<std::size_t>(s.local->rank())]++;  // after compose: a refused call has none
  return ch;
}

}  // namespace

void team_comm::run_collective(const call& c, const void* in, void* out) {
  auto ch = make_chain(*state_, c, in, out);
  detail::launch(ch);
  detail::wait(*ch);
  state_->last_process_algorithm = ch->process_algorithm;
}

team_request team_comm::start_collective(const call& c, const void* in, void* out) {
  auto ch = make_chain(*state_, c, in, out);
  detail::launch(ch);
  state_->last_process_algorithm = nullptr;  // known once the leaders' call has started
  return team_request(std::move(ch));
}

team_persistent_request team_comm::init_collective(const call& c, const void* in, void* out) {
  check_call(*state_, c);
  return team_persistent_request(*this, c, in, out);
}

// ---- communicators -------------------------------------------------------------------------
//
// A new comm is made from the list of its members (ranks here) in their new order, known to
// every rank here after one allgather. Each process's members split the local comm; the new
// comm's first member in each process (its local rank 0) makes the MPI comm among the new
// comm's processes from this comm's leaders' communicator (PMPI_Comm_create_group, collective
// over those processes only, told apart from other new comms of the same split by its tag),
// then hands the shared part of the comm to the process's other members.

namespace {

// Keeps each process's ranks together (see the header): processes in the order of their first
// member in `order`, the ranks of a process in their order there.
std::vector<int> grouped_by_process(const std::vector<int>& order, const std::vector<int>& process_of) {
  std::vector<int> first_seen;
  for (int r : order)
    if (std::find(first_seen.begin(), first_seen.end(), process_of[static_cast<std::size_t>(r)]) == first_seen.end())
      first_seen.push_back(process_of[static_cast<std::size_t>(r)]);
  std::vector<int> grouped;
  for (int q : first_seen)
    for (int r : order)
      if (process_of[static_cast<std::size_t>(r)] == q) grouped.push_back(r);
  return grouped;
}

}  // namespace

std::optional<team_comm> team_comm::form_from(const std::vector<std::vector<int>>& comms, const char* operation) {
  detail::team_comm_state& s = *state_;
  const int p = s.size;
  std::vector<int> process_of(static_cast<std::size_t>(p));
  for (int q = 0; q < s.processes(); ++q)
    for (int r = s.part->process_offset[static_cast<std::size_t>(q)]; r < s.part->process_offset[q + 1u]; ++r)
      process_of[static_cast<std::size_t>(r)] = q;
  // Which new comm this rank is in (its index among them: the local split's colour and the tag).
  int mine = -1;
  std::vector<int> members;
  for (std::size_t i = 0; i < comms.size(); ++i)
    if (std::find(comms[i].begin(), comms[i].end(), s.rank) != comms[i].end()) {
      mine = static_cast<int>(i);
      members = grouped_by_process(comms[i], process_of);
    }
  const int new_rank =
      mine < 0 ? 0 : static_cast<int>(std::find(members.begin(), members.end(), s.rank) - members.begin());
  std::optional<ranklab::comm> local = s.local->split(mine < 0 ? ranklab::undefined : mine, new_rank);
  if (mine < 0) return std::nullopt;

  // The new comm's processes, in order, as ranks of this comm's leaders' communicator.
  std::vector<int> processes;
  std::vector<int> offsets;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int q = process_of[static_cast<std::size_t>(members[i])];
    if (processes.empty() || processes.back() != q) {
      processes.push_back(q);
      offsets.push_back(static_cast<int>(i));
    }
  }
  offsets.push_back(static_cast<int>(members.size()));
  const int my_process =
      static_cast<int>(std::find(processes.begin(), processes.end(), s.part->process) - processes.begin());

  std::shared_ptr<detail::process_part> part;
  if (local->rank() == 0) {
    part = std::make_shared<detail::process_part>();
    part->team_failed = &s.shared->failed;
    part->process_offset = offsets;
    part->process = my_process;
    part->size_for(local->size());
    if (processes.size() > 1) {
      MPI_Group all = MPI_GROUP_NULL, some = MPI_GROUP_NULL;
      check(PMPI_Comm_group(s.part->leaders_native, &all), s.rank, operation, "PMPI_Comm_group");
      const int code = PMPI_Group_incl(all, static_cast<int>(processes.size()), processes.data(), &some);
      PMPI_Group_free(&all);
      check(code, s.rank, operation, "PMPI_Group_incl");
      MPI_Comm made = MPI_COMM_NULL;
      const int created = PMPI_Comm_create_group(s.part->leaders_native, some, mine, &made);
      PMPI_Group_free(&some);
      check(created, s.rank, operation, "PMPI_Comm_create_group");
      part->leaders = std::make_shared<ranklab::mpi::comm>(made);  // ranklab's private duplicate
      PMPI_Comm_free(&made);
      part->leaders_native = part->leaders->native();
    }
  }
  // Hand the part to the process's other members: its address, then a barrier so that the
  // holder outlives every copy.
  auto* holder = local->rank() == 0 ? new std::shared_ptr<detail::process_part>(part) : nullptr;
  std::uintptr_t address = reinterpret_cast<std::uintptr_t>(holder);
  local->bcast(std::span(&address, 1), 0);
  part = *reinterpret_cast<std::shared_ptr<detail::process_part>*>(address);
  local->barrier();
  delete holder;

  auto made = std::make_unique<detail::team_comm_state>();
  made->shared = s.shared;
  made->part = std::move(part);
  made->local = std::move(local);
  made->thread = s.thread;
  made->rank = new_rank;
  made->size = static_cast<int>(members.size());
  return team_comm(std::move(made));
}

std::optional<team_comm> team_comm::split(int color, int key) {
  const int p = size();
  std::vector<std::int64_t> mine{color < 0 ? -1 : color, key}, all(2 * static_cast<std::size_t>(p));
  allgather(mine, all);
  // Colours in increasing order, each comm's members by (key, rank here).
  std::map<std::int64_t, std::vector<int>> by_color;
  for (int r = 0; r < p; ++r)
    if (all[2 * static_cast<std::size_t>(r)] >= 0) by_color[all[2 * static_cast<std::size_t>(r)]].push_back(r);
  std::vector<std::vector<int>> comms;
  for (auto& [c, ranks] : by_color) {
    std::stable_sort(ranks.begin(), ranks.end(),
                     [&](int a, int b) { return all[2 * static_cast<std::size_t>(a) + 1] < all[2 * static_cast<std::size_t>(b) + 1]; });
    comms.push_back(ranks);
  }
  return form_from(comms, "split");
}

team_comm team_comm::dup() {
  std::vector<int> everyone(static_cast<std::size_t>(size()));
  std::iota(everyone.begin(), everyone.end(), 0);
  return std::move(*form_from({everyone}, "dup"));
}

std::optional<team_comm> team_comm::create(std::span<const int> members) {
  const int p = size();
  if (members.empty()) throw usage_error(rank(), "create", "no members (a comm needs at least one rank)");
  std::vector<int> seen(static_cast<std::size_t>(p), 0);
  for (int m : members) {
    if (m < 0 || m >= p) throw usage_error(rank(), "create", fmt::format("member {} outside 0..{}", m, p - 1));
    if (seen[static_cast<std::size_t>(m)]++)
      throw usage_error(rank(), "create", fmt::format("member {} listed twice", m));
  }
  // Every rank must pass the same list: compared through a sum of (position, member) pairs.
  std::uint64_t digest = members.size();
  for (std::size_t i = 0; i < members.size(); ++i)
    digest = digest * 1000003u + static_cast<std::uint64_t>(members[i]) * 31u + i;
  std::vector<std::uint64_t> low{digest}, high{digest};
  allreduce(std::span(low), std::span(low), ops::min);
  allreduce(std::span(high), std::span(high), ops::max);
  if (low[0] != high[0])
    throw usage_error(rank(), "create", "the ranks passed different member lists (every rank must pass the same)");
  return form_from({std::vector<int>(members.begin(), members.end())}, "create");
}

// ---- thread_team ---------------------------------------------------------------------------

namespace {

std::string_view thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

}  // namespace

thread_team::thread_team(MPI_Comm parent, int threads_per_process, thread_team_options options)
    : shared_(std::make_shared<detail::team_shared>()) {
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw usage_error(no_rank, "thread_team",
                      initialized ? "MPI has been finalized" : "MPI is not initialized: call MPI_Init_thread first");
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  if (level < MPI_THREAD_MULTIPLE)
    throw usage_error(no_rank, "thread_team",
                      fmt::format("needs MPI_THREAD_MULTIPLE, MPI provides {}: initialize MPI with "
                                  "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, &provided) (making a comm blocks in MPI "
                                  "while the process's other threads go on with their collectives)",
                                  thread_level_name(level)));
  if (threads_per_process < 1 || threads_per_process > max_team_size)
    throw usage_error(no_rank, "thread_team",
                      fmt::format("{} threads per process (need 1..{})", threads_per_process, max_team_size));
  detail::team_shared& s = *shared_;
  s.world_leaders = std::make_shared<ranklab::mpi::comm>(parent);  // checks parent
  s.processes = s.world_leaders->size();
  s.process = s.world_leaders->rank();
  s.threads = threads_per_process;
  // Every process must pass the same T: one allreduce of (T, -T) through ranklab.
  std::vector<int> bounds{threads_per_process, -threads_per_process};
  s.world_leaders->allreduce(bounds, bounds, ops::max);
  if (bounds[0] != -bounds[1])
    throw usage_error(s.process, "thread_team",
                      fmt::format("the processes passed different thread counts ({} here, between {} and {})",
                                  threads_per_process, -bounds[1], bounds[0]));
  check(PMPI_Comm_dup(parent, &s.notices), s.process, "thread_team", "PMPI_Comm_dup");
  check(PMPI_Comm_set_errhandler(s.notices, MPI_ERRORS_RETURN), s.process, "thread_team", "PMPI_Comm_set_errhandler");
  if (const char* text = std::getenv("RANKLAB_HIERARCHY_ALGORITHMS"); text && *text)
    s.choices = rank_hierarchy::parse_choices(text);
  // OS threads, whatever the machine: a rank blocks in MPI (PMPI_Comm_create_group when a comm
  // is made), which on a fiber would stop its worker's other ranks, whose part of the same
  // call it waits for.
  if (options.threads.execution == execution_mode::fibers || options.threads.seed)
    throw usage_error(s.process, "thread_team",
                      "the ranks of a thread_team run as OS threads (they block in MPI calls): execution mode "
                      "fibers and deterministic mode (a seed) are not available");
  options.threads.execution = execution_mode::threads;
  s.team = std::make_unique<ranklab::team>(threads_per_process, options.threads);
  s.in_flight.resize(static_cast<std::size_t>(threads_per_process));
  s.world = std::make_shared<detail::process_part>();
  s.world->team_failed = &s.failed;
  s.world->process = s.process;
  for (int q = 0; q <= s.processes; ++q) s.world->process_offset.push_back(q * threads_per_process);
  s.world->size_for(threads_per_process);
  if (s.processes > 1) {
    s.world->leaders = s.world_leaders;
    s.world->leaders_native = s.world_leaders->native();
  }
}

thread_team::~thread_team() {
  shared_->world.reset();  // frees its reference to world_leaders under the traffic lock
  std::lock_guard traffic(detail::mpi_traffic_lock());
  if (shared_->failed.load() && shared_->world_leaders) detail::mark_failed(*shared_->world_leaders, "the thread team failed");
  shared_->world_leaders.reset();
}

int thread_team::processes() const { return shared_->processes; }
int thread_team::threads() const { return shared_->threads; }
int thread_team::process() const { return shared_->process; }

team_comm thread_team::world_comm(ranklab::comm local) {
  const auto& shared = shared_;
  auto s = std::make_unique<detail::team_comm_state>();
  s->shared = shared;
  s->part = shared->world;
  s->thread = local.rank();
  s->rank = shared->process * shared->threads + local.rank();
  s->size = shared->processes * shared->threads;
  s->local = std::move(local);
  return team_comm(std::move(s));
}

void thread_team::run(const std::function<void(team_comm&)>& fn) {
  auto shared = shared_;
  ranklab::run(*shared->team, [&](ranklab::comm& local) {
    try {
      team_comm c = world_comm(local.dup());
      fn(c);
    } catch (...) {
      // This process's other threads are released by ranklab::run (the team fails); the
      // other processes by the notice.
      shared->fail_here(shared->process * shared->threads + local.rank(), detail::what_of_current());
      throw;
    }
  });
}

team_comm thread_team::attach(int thread) {
  if (thread < 0 || thread >= shared_->threads)
    throw usage_error(no_rank, "attach", fmt::format("thread {} outside 0..{}", thread, shared_->threads - 1));
  return world_comm(shared_->team->attach(thread));
}

}  // namespace ranklab::mpi
