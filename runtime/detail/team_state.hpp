// The shared state of a team: per-rank slots (doorbell for sleeping, what the rank waits
// for, its send descriptor), the lazily created mailboxes, the failure record and the
// deadlock detector. Only the failure path takes a lock.
#pragma once
#include <sched.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "detail/aligned_buffer.hpp"
#include "detail/process_barrier.hpp"
#include "fibers/fiber_scheduler.hpp"
#include "mailbox/futex.hpp"
#include "mailbox/mailbox.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/hierarchy.hpp"
#include "ranklab/schedule.hpp"
#include "ranklab/team.hpp"

namespace ranklab::detail {

struct comm_state;
struct team_state;
struct comm_registry;
enum class wait_reason : int { none, message_from, release_by, space_to, fence };
enum class failure_kind : int { rank_error, deadlock, mismatch };

struct alignas(64) rank_slot {
  // Written by other ranks (to wake this one).
  std::atomic<std::uint32_t> doorbell{0};
  std::atomic<std::uint32_t> sleeping{0};  // threads sleeping on the doorbell
  // Written by the owner only.
  alignas(64) std::atomic<std::uint64_t> progress{0};  // messages sent + received
  std::atomic<int> waiting_for{0};                     // wait_reason
  std::atomic<int> waiting_peer{no_rank};
  std::atomic<bool> attached{false};
  std::atomic<bool> finished{false};
  // Asleep in a blocking wait (parked, on a fiber): what the deadlock detector counts. Per
  // rank, on the owner's line: a team-wide counter would be a line every sleeper writes.
  std::atomic<bool> blocked{false};
  std::atomic<std::uint32_t> call{0};  // collective sequence number in progress (0: none)
  // The comm that call belongs to (team_state::comm_id: 0, the team's own), in the team's
  // slot of the rank whichever comm it waits in (see team_state::home).
  std::atomic<std::uint32_t> waiting_comm{0};
  // Its description, for deadlock/mismatch reports. A copy, not a pointer into the rank's
  // schedule cache: the detector reads it from another thread while the owner may evict
  // the entry. Written only when the rank goes to sleep in a new call.
  std::mutex call_mutex;
  std::string call_text;
  const void* call_key = nullptr;  // the schedule-cache entry call_text was copied from
  std::string call_description() {
    std::lock_guard lock(call_mutex);
    return call_text;
  }
  binding_info binding;
  std::vector<trace_event> trace;
  std::string leftover;  // messages the rank never received, noted when its comm ends
  // Collective calls this rank made on this comm so far (owner only): a rank that leaves
  // (its comm ends) and attaches again goes on numbering its calls where it stopped, as the
  // others do, so that their calls still match.
  std::uint32_t calls_made = 0;
  // The rank's comms other than the one it is waiting in that have nonblocking operations
  // outstanding (the team's slot only; owner only): every wait advances them too, so that
  // requests outstanding on several comms complete in whatever order the rank waits for
  // them (MPI's progress rule). Entries leave when their comm ends.
  struct busy_comm {
    team_state* t;
    comm_state* cs;
    int rank;
  };
  std::vector<busy_comm> busy;
  // New comms handed to this rank by their first rank (comm::split, dup, create): the
  // giver's rank here and the comm's state, in the order given. Per receiving rank, so that
  // forming comms takes no lock shared by the team.
  std::mutex handoff_mutex;
  std::vector<std::pair<int, std::shared_ptr<team_state>>> handoffs;
  // Buffers of this rank's calls that others may read directly (shared-memory direct
  // algorithms), by call number modulo the table size.
  // `call` is a sequence lock over the rest: the owner sets it to 0 before it writes the
  // next call's entry and to the call's number after, so a reader that sees the same
  // number before and after reading knows what it read belongs to that call (see
  // published_signature in executors/thread_executor.cpp).
  struct published_buffers {
    std::atomic<std::uint32_t> call{0};       // 0: none (call numbers start at 1)
    std::atomic<std::uint64_t> signature{0};  // of the call, so a mismatched reader notices
    std::atomic<const buffer_table*> table{nullptr};
  };
  std::array<published_buffers, 16> published;
  // This rank's fence lines per call slot, two by the parity of the fence's number in the
  // slot: the number of the fence the line was last written for, the call and signature of
  // that fence, under a sequence lock like `published` (`call` is 0 while they are
  // rewritten), and what the fence carries (schedule::fence_payload). Written by the owner
  // only; in a team of at most flag_fence_ranks the others read the line to pass a fence
  // (the flag fence) and to check that the next rank is in the same call, and any team
  // reads the payload after the fence, all from the one line. Two lines, so that a reader
  // of fence m's payload (which it finishes before meeting its next fence of the slot)
  // never sees it overwritten: the owner writes fence m + 2's only after passing m + 1.
  struct alignas(64) fence_line {
    std::atomic<std::uint64_t> met{0};
    std::atomic<std::uint64_t> signature{0};
    std::atomic<std::uint32_t> call{0};
    alignas(8) std::byte payload[fence_payload_bytes];
  };
  std::array<std::array<fence_line, 2>, 16> fence_lines;
  // The fences this rank has met per call slot (owner only; kept with the team, like the
  // fence counters, so that a later comm of the same rank continues the count).
  std::array<std::uint64_t, 16> fences_met{};
  // Whether this rank went on from its last fence of the slot before every rank had arrived
  // (schedule::fence_for): then its next payload there waits until they have.
  std::array<bool, 16> last_fence_partial{};
  // The call and signature each of this rank's fence lines was last written for (owner
  // only): an arrival looks here, not at the line, which the others poll and may have
  // taken from this core's cache.
  struct line_owner_copy {
    std::uint32_t call = 0;
    std::uint64_t signature = 0;
  };
  std::array<std::array<line_owner_copy, 2>, 16> fence_line_written{};
  // Set while the rank runs steps that may read other ranks' buffers.
  std::atomic<bool> reading_remote{false};
  // When the rank last polled an unfinished request (team time + 1; 0: not polling). A
  // rank that only polls request::test() is as stuck as a sleeping one if nothing moves.
  std::atomic<std::uint64_t> polled_ns{0};
  std::uint64_t next_poll_note_ns = 0;  // owner only: when note_poll next records
};

static_assert(sizeof(rank_slot::fence_line) == 64, "the flag fence reads one line per rank");

// Calls in flight at once (nonblocking requests) are told apart by call number modulo this.
inline constexpr std::size_t call_slots = 16;

// Teams of at most this many ranks meet at a fence (schedule::fence) by flags: each rank
// announces the fences it has met in its own line and waits until every other rank's line
// shows the same, so that a fence costs one cache-line crossing per peer instead of p
// read-modify-writes of one shared counter line. Larger teams, where each rank would read p
// lines, meet at the counter below.
inline constexpr int flag_fence_ranks = 8;

// A team-wide fence counter (schedule::fence), one per call slot. It only grows: a rank's
// j-th fence in a slot is passed once the counter reaches j * p, and every rank meets the
// same fences in the same order, so no reset is needed.
struct alignas(64) fence_counter {
  std::atomic<std::uint64_t> arrived{0};
};

// A team's state, and the state of each comm made from it (comm::split, dup, create,
// split_type): a comm of q of the team's ranks is a team_state of its own for its q ranks —
// its own mailboxes, fences, published buffers and call numbers, so that messages and
// fences of different comms never meet — linked to the team's (`world`) for what belongs to
// the rank's thread rather than to a comm: sleeping and waking (the doorbell), what it
// waits for (the deadlock detector), tracing, and the failure record, which is team-wide.
// Schedules are built for the comm's size and rank and never see team ranks.
// The comms of a team alive at a time (other than the team's own), shared by the team's
// state and each comm's: a failure marks them all failed, the deadlock detector reads what
// they have moved, and the end of the team ends them. A comm enters and leaves under the
// mutex (once each: no collective call takes it); `team_alive` goes false when the team's
// state is destroyed, which a comm kept past its team finds at its own end.
struct comm_registry {
  std::mutex mutex;
  std::vector<team_state*> comms;
  bool team_alive = true;
  std::string undelivered;  // messages ended comms left in their mailboxes (check_quiet)
  std::string root_mismatches;  // the root mismatches those messages show (root_mismatches_in)
};

// A message a rank sent that its receiver has not taken (the oldest of its pair), as its
// header tells: for the reports of mismatches. Ranks in the comm's numbering.
struct pending_message {
  int from = no_rank;
  int to = no_rank;
  std::uint8_t coll = 0;
  std::uint32_t call = 0;
  int root = 0;
};

struct team_state : std::enable_shared_from_this<team_state> {
  team_state(int p, team_options options);
  // A comm of the team `world` whose rank r is the team's rank members[r].
  team_state(team_state& world, std::vector<int> members, std::uint32_t comm_id);
  ~team_state();

  const int p;
  const team_options options;
  team_state* const world;  // the team's own state: this, for the team
  // The comm's number in its team (0: the team's own comm), and its ranks' team ranks.
  const std::uint32_t comm_id = 0;
  const std::vector<int> world_ranks;  // empty for the team's own comm
  const int* const world_of;           // world_ranks.data(), null for the team's own comm
  int world_rank(int r) const { return !world_of || r < 0 ? r : world_of[r]; }
  // The slot of comm rank r's thread in the team, where it sleeps and is woken, and where
  // the deadlock detector reads what it waits for. (One load and a branch on the way of
  // every wake-up in the team's own comm.)
  rank_slot& home(int r) { return world_of ? world->slots[world_of[r]] : slots[r]; }
  // "rank 2", or in a comm other than the team's "rank 2 (team rank 5)": how errors name
  // a rank.
  std::string rank_text(int r) const;
  // " in comm #3 of 4 ranks (team ranks 1, 5, 6, 7)", or "" for the team's own comm.
  std::string comm_text() const;
  // The live comms of this team (the team's state only), for the failure record, the
  // deadlock detector and the team's end.
  std::shared_ptr<comm_registry> registry;
  // Numbers the team's comms (the team's state only): comm_id of the next.
  std::atomic<std::uint32_t> next_comm_id{1};
  int spin_limit = 0;
  int yield_limit = 0;
  std::unique_ptr<rank_slot[]> slots;
  // The mailbox pointers [from * p + to], read on every poll by every rank: whole cache
  // lines of their own, so that no allocation written by a rank shares their line.
  struct alignas(64) box_line {
    std::atomic<mailbox*> box[8];
  };
  std::unique_ptr<box_line[]> box_lines;
  std::atomic<mailbox*>& box_pointer(std::size_t i) { return box_lines[i / 8].box[i % 8]; }
  std::array<fence_counter, call_slots> fences;
  // Wide fence payloads (schedule::fence_payload), teams of at most wide_fence_payload_ranks
  // only: per rank, call slot and fence parity, like the fence lines.
  aligned_bytes wide_payloads;
  std::byte* wide_payload(int rank, std::size_t slot, std::uint64_t fence_number) {
    const std::size_t line = (static_cast<std::size_t>(rank) * call_slots + slot) * 2 + fence_number % 2;
    return wide_payloads.get() + line * wide_fence_payload_bytes;
  }
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  // The comm's ranks' domains for the hierarchical algorithms, made by the first call that
  // builds a schedule (hierarchy_of, comm_split.cpp): then read only.
  std::once_flag hierarchy_once;
  std::unique_ptr<rank_hierarchy> hierarchy;

  // The scheduler whose fibers run the ranks while ranklab::run runs them on fibers
  // (team.cpp, team::execution); nullptr: the ranks are threads.
  fiber_scheduler* fibers = nullptr;

  std::atomic<bool> failed{false};
  std::atomic<int> finished{0};
  // ranklab::run starts the ranks itself: one that has not attached yet is starting (a
  // thread the system is slow to schedule), not an application thread that never came.
  std::atomic<bool> ranks_started_by_run{false};

  mailbox& box(int from, int to) {
    std::atomic<mailbox*>& slot = box_pointer(static_cast<std::size_t>(from) * p + to);
    mailbox* b = slot.load(std::memory_order_acquire);
    return b ? *b : create_box(slot);
  }

  // Wakes `rank` if it sleeps. Call after publishing (by any store) what it waits for.
  void ring(int rank) {
    publisher_barrier();
    rank_slot& s = home(rank);
    if (s.sleeping.load(std::memory_order_relaxed)) wake(s);
  }

  // Wakes every sleeping rank (at a fence: see arrive_at_fence).
  void ring_all() {
    publisher_barrier();
    for (int r = 0; r < p; ++r)
      if (rank_slot& s = home(r); s.sleeping.load(std::memory_order_relaxed)) wake(s);
  }

  // The two halves of the sleep/wake StoreLoad barrier (detail/process_barrier.hpp): a
  // publisher's, between what it published and its look at `sleeping`, and a sleeper's,
  // between announcing itself and its last look at what it waits for. Threads put the
  // cost on the sleeper (membarrier); fibers park and unpark in tens of nanoseconds, so
  // there each side pays a full fence.
  void publisher_barrier() const {
    if (asymmetric_barrier_)
      std::atomic_signal_fence(std::memory_order_seq_cst);
    else
      std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  bool asymmetric_barrier() const { return asymmetric_barrier_; }
  void sleeper_barrier() const {
    if (asymmetric_barrier_)
      process_barrier();
    else
      std::atomic_thread_fence(std::memory_order_seq_cst);
  }

  // Waits until ready() holds: spins, then yields, then sleeps on the rank's doorbell (a
  // fiber yields to the other ranks of its worker, then parks until rung).
  // ready() may do work (advance operations); blocked_on() says what the rank waits for,
  // asked when it goes to sleep (for deadlock reports). Throws when the team fails
  // (another rank's error, a deadlock, a mismatch) meanwhile. `spun`: polls the caller
  // has made already, counted against the spin stage.
  template <class Ready, class BlockedOn>
  void wait(int me, Ready&& ready, BlockedOn&& blocked_on, const char* operation, int spun = 0) {
    if (ready()) return;
    for (int i = spun; i < spin_limit; ++i) {
      cpu_relax();
      if (ready()) return;
      if ((i & 63) == 63 && failed.load(std::memory_order_relaxed)) throw_failure(me, operation);
    }
    for (int i = 0; i < yield_limit; ++i) {
      if (failed.load(std::memory_order_relaxed)) throw_failure(me, operation);
      let_others_run();
      if (ready()) return;
    }
    sleep_until(me, ready, blocked_on, operation);
  }

  // Runs the ranks as fibers of `s` from now on (nullptr: threads again). A fiber waits by
  // yielding once to its worker's other ranks, then parking: spinning would only keep the
  // awaited rank off the worker.
  // The team's state passes it on to its comms (those made later copy it at birth).
  void use_fibers(fiber_scheduler* s);

  // For a rank waiting on something it cannot sleep for (another rank's reads to end): give
  // the core to the others (on a fiber: to the other ranks of its worker) and come back.
  void let_others_run() {
    if (fibers)
      fibers->yield();
    else
      sched_yield();
  }

  // A rank whose request::test() found its call unfinished. Every 20 ms of polling it
  // records what it waits for and runs the deadlock detector itself: when every rank polls,
  // none sleeps to run it.
  template <class BlockedOn>
  void note_poll(int me, BlockedOn&& blocked_on) {
    rank_slot& s = home(me);
    const std::uint64_t now = now_ns();
    if (now < s.next_poll_note_ns) return;
    s.next_poll_note_ns = now + poll_note_interval_ns;
    const auto [why, peer] = blocked_on();
    s.waiting_for.store(static_cast<int>(why), std::memory_order_relaxed);
    s.waiting_peer.store(peer, std::memory_order_relaxed);
    s.waiting_comm.store(comm_id, std::memory_order_relaxed);
    s.polled_ns.store(now + 1, std::memory_order_release);
    detect_deadlock();
  }
  static constexpr std::uint64_t poll_note_interval_ns = 20'000'000;
  // Whether the rank polled an unfinished request lately (within a few note intervals).
  bool polling(const rank_slot& s) const {
    const std::uint64_t at = s.polled_ns.load(std::memory_order_acquire);
    return at != 0 && now_ns() < at - 1 + 5 * poll_note_interval_ns;
  }

  void check_failure(int me, const char* operation) {
    if (failed.load(std::memory_order_acquire)) throw_failure(me, operation);
  }
  [[noreturn]] void throw_failure(int me, const char* operation);
  void fail(int origin, std::exception_ptr e, const std::string& what, failure_kind kind);
  // fail() with the exception being handled (call inside a catch block), as a rank error.
  void fail_with_current_exception(int origin);
  std::exception_ptr first_failure() const;
  void finish(int rank);
  // Keeps a withdrawn large-message descriptor alive until the team ends: a receiver may
  // still find its header in a mailbox or stash and must see it cancelled, not freed.
  void retire(std::unique_ptr<send_descriptor> d) {
    std::lock_guard lock(failure_mutex_);
    retired_.push_back(std::move(d));
  }
  // The comms attached to this team, so that ending the team can mark them ended (a comm
  // or request kept past its team then reports a usage_error instead of reading freed
  // memory).
  void register_comm(const std::shared_ptr<comm_state>& cs) {
    std::lock_guard lock(failure_mutex_);
    comms_.push_back(cs);
  }
  void end_comms();
  // Throws mismatch_error if a mailbox still holds a message (call when all ranks are done).
  void check_quiet();
  // The messages this comm's mailboxes still hold, a line each.
  std::string undelivered();
  // The oldest untaken message of each pair of this comm. `queue`: the queue's too, whose
  // front only its receiver may read while it runs (so only once every rank is done); the
  // express lane's are read by their sequence numbers, safe whenever the ranks are stuck.
  std::vector<pending_message> pending_messages(bool queue);
  // How a root mismatch of call `call` of this comm is reported, the ranks (comm ranks, as
  // keys) grouped by the root they passed: "root mismatch in bcast #3: ranks 0, 2, 3 passed
  // root 1, rank 1 passed root 2" (in a comm other than the team's, with the comm and the
  // ranks' team ranks).
  std::string root_mismatch(collective c, std::uint32_t call, const std::map<int, int>& root_of) const;
  // The root mismatches `pending` shows (messages of one call of a rooted collective whose
  // senders passed different roots), one root_mismatch() each, joined by "; "; or "".
  std::string root_mismatches_in(const std::vector<pending_message>& pending) const;
  std::uint64_t now_ns() const {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - world->start).count());
  }
  // The time of a trace event: now_ns(), or in deterministic mode a logical clock (one tick
  // per reading), so that a seed's run gives the same trace every time.
  std::uint64_t trace_ns() {
    return options.seed ? world->logical_ns_.fetch_add(1, std::memory_order_relaxed) + 1 : world->now_ns();
  }
  // Every rank is parked with nothing runnable (fiber mode): no thread outside the team can
  // move anything, so this is a deadlock or mismatch now, with no timeout to wait for.
  void all_ranks_parked() { detect_deadlock(/*certain=*/true); }

 private:
  template <class Ready, class BlockedOn>
  void sleep_until(int me, Ready& ready, BlockedOn& blocked_on, const char* operation) {
    rank_slot& s = home(me);
    s.waiting_comm.store(comm_id, std::memory_order_relaxed);
    s.polled_ns.store(0, std::memory_order_relaxed);  // sleeping now, counted as blocked
    s.blocked.store(true, std::memory_order_seq_cst);
    s.sleeping.fetch_add(1, std::memory_order_relaxed);
    struct leave {
      rank_slot& s;
      ~leave() {
        s.sleeping.fetch_sub(1, std::memory_order_relaxed);
        s.waiting_for.store(0, std::memory_order_relaxed);
        s.blocked.store(false, std::memory_order_seq_cst);
      }
    } guard{s};
    // The deadlock check runs every check_interval of sleep, whether the futex wait timed
    // out or returned early (a ring for another operation, a spurious wake-up). A fiber
    // needs none (see below), nor the clock.
    constexpr auto check_interval = std::chrono::milliseconds(20);
    auto next_check =
        fibers ? std::chrono::steady_clock::time_point{} : std::chrono::steady_clock::now() + check_interval;
    for (;;) {
      const auto [why, peer] = blocked_on();
      s.waiting_for.store(static_cast<int>(why), std::memory_order_relaxed);
      s.waiting_peer.store(peer, std::memory_order_relaxed);
      sleeper_barrier();
      const std::uint32_t bell = s.doorbell.load(std::memory_order_relaxed);
      const std::uint64_t epoch = fibers ? fibers->wake_epoch(world_rank(me)) : 0;
      if (ready()) return;
      if (failed.load(std::memory_order_acquire)) throw_failure(me, operation);
      // Again: ready() may have taken messages, whose senders must learn of them before
      // this rank sleeps (blocked_on publishes them: mailbox::taken_through), or a sender
      // waiting for room would wait for a sleeper.
      blocked_on();
      // A parked fiber needs no timeout: when every rank is parked, the scheduler says so.
      if (fibers) {
        fibers->park(epoch);
        continue;
      }
      futex_wait(s.doorbell, bell, check_interval);
      if (const auto now = std::chrono::steady_clock::now(); now >= next_check) {
        detect_deadlock();
        next_check = now + check_interval;
      }
    }
  }
  // For helper threads (progress threads): sleep until the rank's doorbell rings or the
  // timeout passes, without counting as a blocked rank.
 public:
  template <class Ready>
  void doze(int rank, std::chrono::nanoseconds timeout, Ready&& ready) {
    rank_slot& s = home(rank);
    s.sleeping.fetch_add(1, std::memory_order_relaxed);
    sleeper_barrier();
    const std::uint32_t bell = s.doorbell.load(std::memory_order_relaxed);
    if (!ready()) futex_wait(s.doorbell, bell, timeout);
    s.sleeping.fetch_sub(1, std::memory_order_relaxed);
  }

 private:
  mailbox& create_box(std::atomic<mailbox*>& slot);
  void wake(rank_slot& s);
  void detect_deadlock(bool certain = false);

  mutable std::mutex failure_mutex_;
  std::exception_ptr first_failure_;
  int failure_origin_ = no_rank;
  std::string failure_what_;
  failure_kind failure_kind_ = failure_kind::rank_error;
  std::vector<std::unique_ptr<send_descriptor>> retired_;
  std::vector<std::weak_ptr<comm_state>> comms_;

  std::atomic<std::uint64_t> logical_ns_{0};
  void adopt_fibers(fiber_scheduler* s);
  // Both constructors: no mailbox yet for any pair, and the wide fence payloads' lines.
  void clear_tables();
  int thread_spin_limit_ = 0, thread_yield_limit_ = 0;
  // Whether ring and sleep share the StoreLoad barrier asymmetrically (threads, with
  // membarrier) or each pays a full fence (fibers; kernels without membarrier).
  bool asymmetric_barrier_ = false;
  std::mutex detector_mutex_;
  std::uint64_t detector_progress_ = 0;
  std::chrono::steady_clock::time_point detector_since_{};
};

// hwloc placement (binding.cpp).
binding_info bind_this_thread(int rank, int p, binding_policy policy);
// Where the fiber workers run: worker w on core w (its first hardware thread) unless the
// policy is none (then os_cpu is -1). binding is what each rank fiber of the worker reports.
struct worker_placement {
  int os_cpu = -1;
  binding_info binding;
};
std::vector<worker_placement> worker_placements(int workers, binding_policy policy);

}  // namespace ranklab::detail
