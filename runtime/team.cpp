#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <thread>

#include "ranklab/collective.hpp"

#include "detail/comm_state.hpp"
#include "detail/team_state.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/team.hpp"

namespace ranklab {

// ---- options ---------------------------------------------------------------------------

std::string_view name(binding_policy b) {
  switch (b) {
    case binding_policy::automatic: return "auto";
    case binding_policy::compact: return "compact";
    case binding_policy::spread: return "spread";
    case binding_policy::none: return "none";
  }
  return "?";
}

binding_policy binding_from_name(std::string_view n) {
  for (auto b : {binding_policy::automatic, binding_policy::compact, binding_policy::spread, binding_policy::none})
    if (name(b) == n) return b;
  throw usage_error(no_rank, "binding", fmt::format("unknown policy '{}' (auto, compact, spread, none)", n));
}

namespace {
// An integer environment setting: the whole text must be a number >= min (a typo must not
// silently become 0, which for these knobs means something quite different).
long long env_integer(const char* variable, const char* text, long long min) {
  long long v = 0;
  const char* end = text + std::strlen(text);
  const auto [ptr, ec] = std::from_chars(text, end, v);
  if (ec != std::errc{} || ptr != end || v < min)
    throw usage_error(no_rank, variable, fmt::format("'{}' is not an integer >= {}", text, min));
  return v;
}
const char* env(const char* variable) {
  const char* v = std::getenv(variable);
  return v && *v ? v : nullptr;
}
}  // namespace

team_options team_options::from_environment() {
  team_options o;
  if (const char* b = env("RANKLAB_BINDING")) {
    try {
      o.binding = binding_from_name(b);
    } catch (const error& e) {
      throw usage_error(no_rank, "RANKLAB_BINDING", e.cause());
    }
  }
  if (const char* e = env("RANKLAB_EAGER_LIMIT"))
    o.eager_limit = static_cast<std::size_t>(env_integer("RANKLAB_EAGER_LIMIT", e, 0));
  if (const char* t = env("RANKLAB_TRACE"); t && std::string_view(t) != "0") o.trace = true;
  if (const char* t = env("RANKLAB_PROGRESS_THREAD"); t && std::string_view(t) != "0") o.progress_thread = true;
  // -1 keeps the automatic choice
  if (const char* v = env("RANKLAB_SPIN_POLLS"))
    o.spin_polls = static_cast<int>(std::min<long long>(env_integer("RANKLAB_SPIN_POLLS", v, -1), 1 << 30));
  if (const char* v = env("RANKLAB_YIELDS"))
    o.yields = static_cast<int>(std::min<long long>(env_integer("RANKLAB_YIELDS", v, -1), 1 << 30));
  if (const char* d = env("RANKLAB_DEADLOCK_MS"))
    o.deadlock_timeout = std::chrono::milliseconds(env_integer("RANKLAB_DEADLOCK_MS", d, 0));
  return o;
}

namespace detail {

// ---- team state --------------------------------------------------------------------------

team_state::team_state(int p_, team_options o)
    : p(p_), options(o), slots(new rank_slot[static_cast<std::size_t>(p_)]),
      box_lines(new box_line[(static_cast<std::size_t>(p_) * static_cast<std::size_t>(p_) + 7) / 8]) {
  for (std::size_t i = 0; i < static_cast<std::size_t>(p) * p; ++i) box_pointer(i).store(nullptr, std::memory_order_relaxed);
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
}

team_state::~team_state() {
  for (std::size_t i = 0; i < static_cast<std::size_t>(p) * p; ++i) delete box_pointer(i).load(std::memory_order_relaxed);
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
  futex_wake_all(s.doorbell);
}

void team_state::fail(int origin, std::exception_ptr e, const std::string& what, failure_kind kind) {
  {
    std::lock_guard lock(failure_mutex_);
    if (failed.load(std::memory_order_relaxed)) return;
    first_failure_ = std::move(e);
    failure_origin_ = origin;
    failure_what_ = what;
    failure_kind_ = kind;
    failed.store(true, std::memory_order_release);
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
  std::lock_guard lock(failure_mutex_);
  return first_failure_;
}

void team_state::throw_failure(int me, const char* operation) {
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
    case failure_kind::deadlock: throw deadlock_error(me, operation, what);
    case failure_kind::mismatch: throw mismatch_error(me, operation, what);
    case failure_kind::rank_error: break;
  }
  throw remote_failure(me, operation, origin, what);
}

void team_state::check_quiet() {
  // After every rank returned, a message nobody received means the ranks' sequences of
  // calls differed without ever blocking (e.g. two ranks each acting as a broadcast root).
  std::string lines;
  for (int r = 0; r < p; ++r)
    if (!slots[r].leftover.empty()) lines += "\n  " + slots[r].leftover;
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
      lines += coll == point_to_point
                   ? fmt::format("\n  rank {} sent rank {} a point-to-point message it never received", from, to)
                   : fmt::format("\n  rank {} sent rank {} a message of its collective #{} ({}) that it never received",
                                 from, to, call, name(static_cast<collective>(coll)));
    }
  if (!lines.empty())
    throw mismatch_error(no_rank, "run", "ranks returned with messages left undelivered:" + lines);
}

void team_state::finish(int rank) {
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
    if (cs->progress_thread.joinable()) {  // a comm kept past its team: its helper must go first
      {
        std::lock_guard lock(cs->progress_lock);
        cs->stop = true;
      }
      cs->progress_thread.join();
    }
  }
}

namespace {
std::string describe_wait(rank_slot& s, int rank, bool polling) {
  const int peer = s.waiting_peer.load(std::memory_order_relaxed);
  std::string where =
      s.call.load() ? fmt::format(" in collective #{} {}", s.call.load(), s.call_description()) : " in point-to-point";
  if (s.finished.load()) return fmt::format("rank {} has returned", rank);
  if (!s.attached.load()) return fmt::format("rank {} never attached to the team", rank);
  if (polling) where += " (polling request::test)";
  switch (static_cast<wait_reason>(s.waiting_for.load(std::memory_order_relaxed))) {
    case wait_reason::message_from: return fmt::format("rank {} waits for a message from rank {}{}", rank, peer, where);
    case wait_reason::release_by: return fmt::format("rank {} waits for rank {} to take its message{}", rank, peer, where);
    case wait_reason::space_to: return fmt::format("rank {} waits for space in its mailbox to rank {}{}", rank, peer, where);
    case wait_reason::fence: return fmt::format("rank {} waits at a fence for the other ranks{}", rank, where);
    case wait_reason::none: break;
  }
  return fmt::format("rank {} is running", rank);
}
}  // namespace

void team_state::detect_deadlock() {
  std::unique_lock lock(detector_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || failed.load()) return;
  const auto now = std::chrono::steady_clock::now();
  std::uint64_t progress = 0;
  for (int r = 0; r < p; ++r) progress += slots[r].progress.load(std::memory_order_relaxed);
  // A rank that has not attached cannot send anything either: ranks waiting for it are as
  // stuck as in a deadlock (a team whose application threads never all attach).
  // A rank that only polls an unfinished request is stuck as well.
  int unattached = 0, polling_ranks = 0;
  for (int r = 0; r < p; ++r) {
    unattached += !slots[r].attached.load();
    polling_ranks += polling(slots[r]);
  }
  const bool all_stuck = blocked.load() + finished.load() + unattached + polling_ranks >= p;
  if (!all_stuck || progress != detector_progress_ || detector_since_ == std::chrono::steady_clock::time_point{}) {
    detector_progress_ = progress;
    detector_since_ = all_stuck ? now : std::chrono::steady_clock::time_point{};
    return;
  }
  if (now - detector_since_ < options.deadlock_timeout) return;

  // Every live rank has slept without progress for the whole timeout: report who waits for
  // whom. Ranks inside different collectives at that point is a mismatch, not a deadlock.
  std::string lines;
  bool mismatch = false;
  bool have_first = false;
  std::uint32_t first_call = 0;
  std::string first_text;
  for (int r = 0; r < p; ++r) {
    rank_slot& s = slots[r];
    lines += "\n  " + describe_wait(s, r, polling(s));
    if (s.finished.load() || !s.attached.load()) continue;
    const std::uint32_t c = s.call.load();
    if (!have_first) {
      have_first = true;
      first_call = c;
      first_text = s.call_description();
    } else if (c != first_call || first_text != s.call_description()) {
      mismatch = true;
    }
  }
  if (mismatch)
    fail(no_rank, std::make_exception_ptr(mismatch_error(no_rank, "mismatch detection",
                                                         "ranks are blocked in different collective calls:" + lines)),
         "ranks are blocked in different collective calls:" + lines, failure_kind::mismatch);
  else
    fail(no_rank, std::make_exception_ptr(deadlock_error(no_rank, "deadlock detection",
                                                         "every live rank is blocked:" + lines)),
         "every live rank is blocked:" + lines, failure_kind::deadlock);
}

}  // namespace detail

// ---- team ----------------------------------------------------------------------------------

team::team(int p, team_options options) {
  if (p < 1) throw usage_error(no_rank, "team", fmt::format("p = {} (need at least 1 rank)", p));
  if (p > max_team_size)
    throw usage_error(no_rank, "team",
                      fmt::format("p = {} exceeds the maximum team size {} (every rank is a thread and the "
                                  "mailbox table grows as p^2)", p, max_team_size));
  if (options.deadlock_timeout.count() < 0)
    throw usage_error(no_rank, "team", fmt::format("deadlock_timeout = {} ms (must be >= 0)",
                                                   options.deadlock_timeout.count()));
  options.eager_limit = std::min(options.eager_limit, max_eager_limit);
  state_ = std::make_unique<detail::team_state>(p, options);
}

// Comms and requests kept past the team find it ended instead of reading freed memory.
team::~team() { state_->end_comms(); }

int team::size() const { return state_->p; }
const team_options& team::options() const { return state_->options; }

comm team::attach(int rank, bool bind) {
  if (rank < 0 || rank >= state_->p)
    throw usage_error(no_rank, "attach", fmt::format("rank {} outside 0..{}", rank, state_->p - 1));
  detail::rank_slot& s = state_->slots[rank];
  if (s.attached.exchange(true)) throw usage_error(rank, "attach", "rank attached twice");
  if (bind) s.binding = detail::bind_this_thread(rank, state_->p, state_->options.binding);
  else s.binding = binding_info{rank, binding_policy::none, -1, "", "application thread, not bound"};
  return comm(state_.get(), rank);
}

void team::run_as(int rank, const std::function<void(comm&)>& fn, bool bind) {
  comm c = attach(rank, bind);
  try {
    fn(c);
  } catch (...) {
    state_->fail_with_current_exception(rank);
    throw;
  }
}

bool team::failed() const { return state_->failed.load(); }

void team::rethrow_if_failed() const {
  if (!state_->failed.load()) return;
  if (auto e = state_->first_failure()) std::rethrow_exception(e);
}

std::vector<binding_info> team::bindings() const {
  std::vector<binding_info> out;
  for (int r = 0; r < state_->p; ++r) out.push_back(state_->slots[r].binding);
  return out;
}

std::vector<trace_event> team::trace() const {
  std::vector<trace_event> out;
  for (int r = 0; r < state_->p; ++r)
    out.insert(out.end(), state_->slots[r].trace.begin(), state_->slots[r].trace.end());
  return out;
}

void team::write_trace_json_lines(std::ostream& out) const {
  for (const trace_event& e : trace())
    out << fmt::format(
        R"({{"rank":{},"call":{},"coll":"{}","round":{},"to":{},"from":{},"bytes_sent":{},"bytes_received":{},"begin_ns":{},"end_ns":{}}})"
        "\n",
        e.rank, e.call, e.coll, e.round, e.to, e.from, e.bytes_sent, e.bytes_received, e.begin_ns, e.end_ns);
}

void run(team& t, const std::function<void(comm&)>& fn) {
  const int p = t.size();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    try {
      threads.emplace_back([&t, &fn, r] {
        try {
          t.run_as(r, fn, /*bind=*/true);
        } catch (...) {
          // recorded by run_as; rethrown below from the calling thread
        }
      });
    } catch (const std::system_error& e) {
      // Release the ranks already started (they would wait for rank r forever), join them.
      const usage_error failure(no_rank, "run",
                                fmt::format("could not start the thread of rank {} of {}: {} (more ranks than this "
                                            "system allows threads?)", r, p, e.what()));
      t.state().fail(no_rank, std::make_exception_ptr(failure), failure.what(), detail::failure_kind::rank_error);
      for (auto& th : threads) th.join();
      throw failure;
    }
  }
  for (auto& th : threads) th.join();
  t.rethrow_if_failed();
  t.state().check_quiet();
}

void run(int p, const std::function<void(comm&)>& fn, team_options options) {
  team t(p, options);
  run(t, fn);
}

}  // namespace ranklab
