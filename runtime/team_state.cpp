// The shared state of a team (detail/team_state.hpp): its lazily created mailboxes, the
// doorbells that wake sleeping ranks, the failure record every rank consults, the check
// that a finished team left no message behind, and the end of the comms that outlive it.
#include "detail/team_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "detail/comm_state.hpp"
#include "executors/progress_thread.hpp"
#include "ranklab/collective.hpp"

namespace ranklab::detail {

team_state::team_state(int p_, team_options o)
    : p(p_),
      options(o),
      world(this),
      world_of(nullptr),
      registry(std::make_shared<comm_registry>()),
      slots(new rank_slot[static_cast<std::size_t>(p_)]),
      box_lines(new box_line[(static_cast<std::size_t>(p_) * static_cast<std::size_t>(p_) + 7) / 8]) {
  clear_tables();
  // Spinning only pays when every rank has a core; oversubscribed, a spinning rank steals
  // the time slice of the rank it waits for, so yield at once: the awaited rank is often
  // runnable on the same core, and a yield hands over in about a microsecond where a
  // futex sleep and wake-up costs several (measured with RANKLAB_SPIN_POLLS/YIELDS:
  // allreduce 8 B at p = 4..16 on 2 cores, 20-40 % faster than spin 64 / yield 4 / sleep).
  // After a couple of thousand yields the rank sleeps, so long waits do not burn a core.
  const int cpus = std::max(1u, std::thread::hardware_concurrency());
  const bool oversubscribed = p > cpus;
  spin_limit = o.spin_polls >= 0 ? o.spin_polls : oversubscribed ? 0 : 20000;
  yield_limit = o.yields >= 0 ? o.yields : oversubscribed ? 2000 : 64;
  thread_spin_limit_ = spin_limit;
  thread_yield_limit_ = yield_limit;
  use_fibers(nullptr);  // threads until run() says otherwise
}

team_state::team_state(team_state& w, std::vector<int> members, std::uint32_t id)
    : p(static_cast<int>(members.size())),
      options(w.options),
      world(&w),
      comm_id(id),
      world_ranks(std::move(members)),
      world_of(world_ranks.data()),
      registry(w.registry),
      slots(new rank_slot[static_cast<std::size_t>(p)]),
      box_lines(new box_line[(static_cast<std::size_t>(p) * static_cast<std::size_t>(p) + 7) / 8]) {
  clear_tables();
  // Waiting as the team waits: its ranks' threads and cores are the team's.
  thread_spin_limit_ = w.thread_spin_limit_;
  thread_yield_limit_ = w.thread_yield_limit_;
  for (int r = 0; r < p; ++r) slots[r].attached.store(true, std::memory_order_relaxed);
  std::lock_guard lock(registry->mutex);
  adopt_fibers(w.fibers);
  registry->comms.push_back(this);
  if (w.failed.load(std::memory_order_acquire)) failed.store(true, std::memory_order_release);
}

void team_state::clear_tables() {
  for (std::size_t i = 0; i < static_cast<std::size_t>(p) * p; ++i)
    box_pointer(i).store(nullptr, std::memory_order_relaxed);
  if (p <= wide_fence_payload_ranks)
    wide_payloads = make_aligned_bytes(static_cast<std::size_t>(p) * call_slots * 2 * wide_fence_payload_bytes);
}

void team_state::use_fibers(fiber_scheduler* s) {
  adopt_fibers(s);
  std::lock_guard lock(registry->mutex);
  for (team_state* c : registry->comms) c->adopt_fibers(s);
}

void team_state::adopt_fibers(fiber_scheduler* s) {
  fibers = s;
  asymmetric_barrier_ = !s && process_barrier_available();
  spin_limit = s ? 0 : thread_spin_limit_;
  yield_limit = s ? (options.yields >= 0 ? options.yields : 1) : thread_yield_limit_;
}

std::string team_state::rank_text(int r) const {
  if (world == this || r < 0 || r >= p) return fmt::format("rank {}", r);
  return fmt::format("rank {} (team rank {})", r, world_rank(r));
}

std::string team_state::comm_text() const {
  if (world == this) return {};
  std::string ranks;
  for (std::size_t i = 0; i < world_ranks.size() && i < 16; ++i)
    ranks += fmt::format("{}{}", i ? ", " : "", world_ranks[i]);
  if (world_ranks.size() > 16) ranks += ", ...";
  return fmt::format(" in comm #{} of {} rank{} (team rank{} {})", comm_id, p, p == 1 ? "" : "s", p == 1 ? "" : "s",
                     ranks);
}

std::string team_state::root_mismatch(collective c, std::uint32_t call, const std::map<int, int>& root_of) const {
  // Groups in the order of their first rank.
  std::vector<std::pair<int, std::vector<int>>> groups;  // root, ranks
  for (const auto& [rank, root] : root_of) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == root; });
    if (it == groups.end()) it = groups.emplace(groups.end(), root, std::vector<int>{});
    it->second.push_back(rank);
  }
  std::string text = fmt::format("root mismatch in {} #{}{}:", name(c), call, comm_text());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& [root, ranks] = groups[g];
    std::string list, team_list;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      list += fmt::format("{}{}", i ? ", " : "", ranks[i]);
      team_list += fmt::format("{}{}", i ? ", " : "", world_rank(ranks[i]));
    }
    const char* s = ranks.size() == 1 ? "" : "s";
    text += fmt::format("{} rank{} {}", g ? "," : "", s, list);
    if (world != this) text += fmt::format(" (team rank{} {})", s, team_list);
    text += fmt::format(" passed root {}", root);
  }
  return text;
}

std::vector<pending_message> team_state::pending_messages(bool queue) {
  std::vector<pending_message> found;
  for (int from = 0; from < p; ++from)
    for (int to = 0; to < p; ++to) {
      mailbox* b = box_pointer(static_cast<std::size_t>(from) * p + to).load(std::memory_order_acquire);
      if (!b) continue;
      const std::uint32_t seq = b->consumed.load(std::memory_order_acquire) + 1;
      pending_message m{from, to};
      if (b->cell(seq).seq.load(std::memory_order_acquire) == seq) {
        m.coll = b->cell(seq).coll;
        m.call = b->cell(seq).call;
        m.root = b->cell(seq).root;
      } else if (queue && b->queue.read_available() > 0) {
        message_header h;
        std::memcpy(&h, b->queue.front().bytes, sizeof h);
        if (h.seq != seq) continue;
        m.coll = h.coll;
        m.call = h.call;
        m.root = h.root;
      } else {
        continue;
      }
      if (m.coll != point_to_point) found.push_back(m);
    }
  return found;
}

std::string team_state::root_mismatches_in(const std::vector<pending_message>& pending) const {
  // (call, collective) -> sender -> root
  std::map<std::pair<std::uint32_t, std::uint8_t>, std::map<int, int>> calls;
  for (const pending_message& m : pending)
    if (m.coll < collective_count && is_rooted(static_cast<collective>(m.coll)))
      calls[{m.call, m.coll}].emplace(m.from, m.root);
  std::string text;
  for (const auto& [key, root_of] : calls) {
    const auto differs = [&](const auto& entry) { return entry.second != root_of.begin()->second; };
    if (std::none_of(root_of.begin(), root_of.end(), differs)) continue;
    text += (text.empty() ? "" : "; ") + root_mismatch(static_cast<collective>(key.second), key.first, root_of);
  }
  return text;
}

team_state::~team_state() {
  if (world != this) {
    const std::string left = failed.load() ? std::string() : undelivered();
    const std::string roots = left.empty() ? std::string() : root_mismatches_in(pending_messages(true));
    std::lock_guard lock(registry->mutex);
    auto& v = registry->comms;
    v.erase(std::remove(v.begin(), v.end(), this), v.end());
    if (registry->team_alive) registry->undelivered += left;
    if (registry->team_alive && !roots.empty())
      registry->root_mismatches += (registry->root_mismatches.empty() ? "" : "; ") + roots;
  } else {
    std::lock_guard lock(registry->mutex);
    registry->team_alive = false;
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(p) * p; ++i)
    delete box_pointer(i).load(std::memory_order_relaxed);
}

mailbox& team_state::create_box(std::atomic<mailbox*>& slot) {
  auto* fresh = new mailbox();
  mailbox* expected = nullptr;
  if (slot.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // the peer created it first
  return *expected;
}

void team_state::wake(rank_slot& s) {
  s.doorbell.fetch_add(1, std::memory_order_seq_cst);
  if (fibers)
    fibers->unpark(static_cast<int>(&s - world->slots.get()));  // s is a home slot
  else
    futex_wake_all(s.doorbell);
}

void team_state::fail(int origin, std::exception_ptr e, const std::string& what, failure_kind kind) {
  if (world != this) return world->fail(world_rank(origin), std::move(e), what, kind);
  {
    std::lock_guard lock(failure_mutex_);
    if (failed.load(std::memory_order_relaxed)) return;
    first_failure_ = std::move(e);
    failure_origin_ = origin;
    failure_what_ = what;
    failure_kind_ = kind;
    failed.store(true, std::memory_order_release);
  }
  {
    // Every comm fails with the team, before its sleepers (all asleep in the team's slots)
    // are woken to look.
    std::lock_guard lock(registry->mutex);
    for (team_state* c : registry->comms) c->failed.store(true, std::memory_order_release);
  }
  for (int r = 0; r < p; ++r) wake(slots[r]);
}

void team_state::fail_with_current_exception(int origin) {
  std::string what = "unknown exception";
  try {
    throw;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  fail(origin, std::current_exception(), what, failure_kind::rank_error);
}

std::exception_ptr team_state::first_failure() const {
  if (world != this) return world->first_failure();
  std::lock_guard lock(failure_mutex_);
  return first_failure_;
}

void team_state::throw_failure(int me, const char* operation) {
  // In a comm other than the team's, the error names the rank by its team rank, as the
  // failure record does, and says where it was released.
  if (world != this) {
    world->throw_failure(world_rank(me),
                         fmt::format("{} in comm #{} (as its rank {})", operation, comm_id, me).c_str());
  }
  std::string what;
  int origin;
  failure_kind kind;
  {
    std::lock_guard lock(failure_mutex_);
    what = failure_what_;
    origin = failure_origin_;
    kind = failure_kind_;
  }
  switch (kind) {
    case failure_kind::deadlock:
      throw deadlock_error(me, operation, what);
    case failure_kind::mismatch:
      throw mismatch_error(me, operation, what);
    case failure_kind::rank_error:
      break;
  }
  throw remote_failure(me, operation, origin, what);
}

std::string team_state::undelivered() {
  std::string lines;
  for (int from = 0; from < p; ++from)
    for (int to = 0; to < p; ++to) {
      mailbox* b = box_pointer(static_cast<std::size_t>(from) * p + to).load();
      if (!b || !b->holds_messages()) continue;
      // The oldest unreceived message, wherever it waits.
      const std::uint32_t seq = b->consumed.load() + 1;
      std::uint8_t coll = point_to_point;
      std::uint32_t call = 0;
      if (b->cell(seq).seq.load() == seq) {
        coll = b->cell(seq).coll;
        call = b->cell(seq).call;
      } else if (b->queue.read_available() > 0) {
        message_header h;
        std::memcpy(&h, b->queue.front().bytes, sizeof h);
        coll = h.coll;
        call = h.call;
      }
      lines +=
          coll == point_to_point
              ? fmt::format("\n  {} sent {} a point-to-point message it never received{}", rank_text(from),
                            rank_text(to), comm_text())
              : fmt::format("\n  {} sent {} a message of its collective #{} ({}) that it never received{}",
                            rank_text(from), rank_text(to), call, name(static_cast<collective>(coll)), comm_text());
    }
  return lines;
}

void team_state::check_quiet() {
  // After every rank returned, a message nobody received means the ranks' sequences of
  // calls differed without ever blocking (e.g. two ranks each acting as a broadcast root).
  // Messages of one rooted call whose senders passed different roots are a root mismatch,
  // reported as such (the senders are the ranks known; a rank that left no message is not).
  std::string lines;
  for (int r = 0; r < p; ++r)
    if (!slots[r].leftover.empty()) lines += "\n  " + slots[r].leftover;
  lines += undelivered();
  std::string roots = root_mismatches_in(pending_messages(true));
  const auto add_roots = [&](const std::string& more) {
    if (!more.empty()) roots += (roots.empty() ? "" : "; ") + more;
  };
  {
    // What the team's other comms left behind when they ended, and those still alive.
    std::lock_guard lock(registry->mutex);
    lines += registry->undelivered;
    add_roots(registry->root_mismatches);
    for (team_state* c : registry->comms) {
      lines += c->undelivered();
      add_roots(c->root_mismatches_in(c->pending_messages(true)));
    }
  }
  if (!lines.empty() && !roots.empty())
    throw mismatch_error(no_rank, "run", roots + " (their messages were left undelivered:" + lines + ")");
  if (!lines.empty()) throw mismatch_error(no_rank, "run", "ranks returned with messages left undelivered:" + lines);
}

void team_state::finish(int rank) {
  if (world != this) return;  // the end of a comm is not the end of its ranks
  rank_slot& s = slots[rank];
  s.polled_ns.store(0, std::memory_order_relaxed);
  if (!s.finished.exchange(true)) finished.fetch_add(1, std::memory_order_seq_cst);
}

void team_state::end_comms() {
  std::vector<std::shared_ptr<comm_state>> live;
  {
    std::lock_guard lock(failure_mutex_);
    for (const auto& weak : comms_)
      if (auto cs = weak.lock()) live.push_back(std::move(cs));
    comms_.clear();
  }
  for (const auto& cs : live) {
    if (cs->ended.exchange(true)) continue;
    // A comm kept past its team: its helper thread must go first.
    if (cs->progress_thread.joinable()) join_progress_thread(*cs);
  }
  if (world != this) return;
  // The team's other comms end with it. Taken alive under the registry's lock (a comm
  // whose last handle is going finds nothing to lock), ended outside it: ending joins
  // progress threads, which may be failing the team meanwhile.
  std::vector<std::shared_ptr<team_state>> comms;
  {
    std::lock_guard lock(registry->mutex);
    for (team_state* c : registry->comms)
      if (auto alive = c->weak_from_this().lock()) comms.push_back(std::move(alive));
  }
  for (const auto& c : comms) c->end_comms();
}

}  // namespace ranklab::detail
