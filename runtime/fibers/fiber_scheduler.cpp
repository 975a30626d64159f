#include "fibers/fiber_scheduler.hpp"

#include <pthread.h>
#include <sched.h>

#include <cxxabi.h>

#include <boost/context/fiber.hpp>
#include <boost/context/preallocated.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "fibers/fiber_stack.hpp"
#include "fibers/sanitizer_fiber.hpp"
#include "mailbox/futex.hpp"

namespace ranklab::detail {

namespace ctx = boost::context;

namespace {

// Thrown by park() to unwind a fiber of a deadlocked run. Deliberately not a std::exception,
// so that `catch (const std::exception&)` in a body lets it pass.
struct fiber_cancelled {};

// Deterministic mode's generator: fixed arithmetic, the same on every platform and standard
// library (std:: distributions are not).
struct splitmix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

enum class switch_reason : std::uint8_t { yield, park, finish };

// The exceptions being handled (what `throw;` rethrows, std::current_exception, the
// uncaught count) are kept per thread by the C++ runtime, in the Itanium C++ ABI's
// __cxa_eh_globals: {caught exceptions, uncaught count}. A fiber that switches inside a
// catch block (a rank that waits for its peers while unwinding from a failure) must take
// its own along, or another fiber's catch would end it.
struct exception_state {
  void* caught = nullptr;
  unsigned int uncaught = 0;
};
void swap_exception_state(exception_state& save_to, const exception_state& load_from) {
  auto* globals = reinterpret_cast<exception_state*>(abi::__cxa_get_globals());
  save_to = *globals;
  *globals = load_from;
}

// run_state::activity packs the number of fibers that are neither parked nor finished (low
// half) with a generation that every wakeup bumps (high half), so that one load tells "all
// parked" apart from "all parked again, after a wakeup".
constexpr std::uint64_t one_generation = std::uint64_t{1} << 32;
std::uint32_t active_of(std::uint64_t activity) { return static_cast<std::uint32_t>(activity); }
std::uint32_t generation_of(std::uint64_t activity) { return static_cast<std::uint32_t>(activity >> 32); }

// Spinning before the futex sleep: long enough to catch a cross-worker unpark that is
// already on its way, short enough not to burn a core that an oversubscribed team needs.
constexpr int idle_spins = 1000;
// The sleep's timeout only bounds the cost of a missed wake; correctness does not need it.
constexpr auto idle_sleep = std::chrono::milliseconds(100);

// Memory mappings per fiber: the stack and its guard page.
constexpr long maps_per_fiber = 2;

long read_long(const char* path, long fallback) {
  std::ifstream in(path);
  long v = fallback;
  if (!(in >> v)) return fallback;
  return v;
}

long count_lines(const char* path) {
  std::ifstream in(path);
  long n = 0;
  std::string line;
  while (std::getline(in, line)) ++n;
  return n;
}

}  // namespace

struct fiber_scheduler::fiber_record {
  int rank = -1;
  worker* owner = nullptr;
  ctx::fiber context;  // the suspended fiber; empty while it runs and once it finished
  ctx::stack_context stack;
  bool started = false;  // `context` exists, so Boost.Context owns (and frees) the stack
  stack_guard guard;
  sanitizer::fiber_context san;
  exception_state exceptions;  // while suspended: its exceptions being handled
  switch_reason reason = switch_reason::yield;
  std::exception_ptr error;
  fiber_record* next_in_inbox = nullptr;  // written before the inbox push that publishes it
  // Shared with unparkers on other threads.
  alignas(64) std::atomic<std::uint64_t> epoch{0};
  std::atomic<bool> parked{false};  // whoever flips it to false must make the fiber runnable
  std::atomic<bool> done{false};
};

struct fiber_scheduler::worker {
  run_state* rs = nullptr;
  int cpu = -1;
  std::vector<fiber_record*> owned;
  // Owner thread only: the fast path touches nothing else.
  std::vector<fiber_record*> ring;  // runnable fibers, FIFO; every fiber at most once
  std::size_t head = 0, count = 0;
  fiber_record* running = nullptr;
  ctx::fiber scheduler_context;  // the scheduler loop, suspended while a fiber runs
  sanitizer::fiber_context san;
  exception_state exceptions;  // the worker thread's own, while a fiber runs
  stack_overflow_watch* watch = nullptr;
  std::optional<splitmix64> rng;
  std::thread thread;
  // Written by other threads.
  alignas(64) std::atomic<fiber_record*> inbox{nullptr};  // lock-free LIFO, drained whole
  alignas(64) std::atomic<std::uint32_t> sleeping{0};     // 1: about to futex-sleep on it

  void push(fiber_record* f) {
    ring[(head + count) % ring.size()] = f;
    ++count;
  }
  fiber_record* pop() {
    if (count == 0) return nullptr;
    if (rng) std::swap(ring[head], ring[(head + rng->next() % count) % ring.size()]);
    fiber_record* f = ring[head];
    head = (head + 1) % ring.size();
    --count;
    return f;
  }
};

struct fiber_scheduler::run_state {
  fiber_scheduler* owner = nullptr;
  const std::function<void(int)>* body = nullptr;
  const std::function<void()>* all_parked = nullptr;
  int p = 0;
  std::vector<std::unique_ptr<fiber_record>> fibers;
  std::vector<std::unique_ptr<worker>> workers;
  fiber_stack_allocator allocator{0};
  alignas(64) std::atomic<std::uint64_t> activity{0};
  std::atomic<std::uint32_t> handled_generation{0};  // of the last all-parked state handled
  std::atomic<int> finished{0};
  std::atomic<bool> all_done{false};
  std::atomic<bool> cancelling{false};
  std::atomic<std::uint32_t> gate{0};  // 0: workers wait, 1: go, 2: abort before starting
  std::mutex error_mutex;
  std::exception_ptr scheduler_error;  // deadlock, or the all-parked handler threw

  ~run_state() {
    // Stacks of fibers that never started; started ones were freed as they finished.
    for (auto& f : fibers)
      if (f && !f->started && f->stack.sp) allocator.deallocate(f->stack);
  }
};

namespace {

thread_local fiber_scheduler::worker* this_worker = nullptr;

}  // namespace

// ---- switching ----------------------------------------------------------------------------

namespace {

using fiber_record = fiber_scheduler::fiber_record;
using worker = fiber_scheduler::worker;
using run_state = fiber_scheduler::run_state;

// Fiber side: back to the scheduler loop, which acts on f.reason.
void suspend(worker& w, fiber_record& f, switch_reason reason) {
  f.reason = reason;
  sanitizer::start_switch(f.san, w.san);
  w.scheduler_context = std::move(w.scheduler_context).resume();
  sanitizer::finish_switch(f.san, &w.san);
}

void run_body(fiber_record& f) {
  try {
    (*f.owner->rs->body)(f.rank);
  } catch (const fiber_cancelled&) {
  } catch (...) {
    f.error = std::current_exception();
  }
}

void wake_worker(worker& w) {
  if (w.sleeping.exchange(0, std::memory_order_seq_cst) != 0) futex_wake_all(w.sleeping);
}

// Makes f runnable on its worker: a plain queue push on the owner thread, otherwise the
// owner's inbox (a Treiber-stack push: lock-free, no ABA since the consumer takes all).
void enqueue(fiber_record& f) {
  worker& w = *f.owner;
  if (this_worker == &w) {
    w.push(&f);
    return;
  }
  fiber_record* head = w.inbox.load(std::memory_order_relaxed);
  do f.next_in_inbox = head;
  while (!w.inbox.compare_exchange_weak(head, &f, std::memory_order_seq_cst, std::memory_order_relaxed));
  wake_worker(w);
}

void unpark_fiber(run_state& rs, fiber_record& f) {
  f.epoch.fetch_add(1, std::memory_order_seq_cst);
  // Pairs with park(): it stores parked then reads epoch, we bump epoch then read parked,
  // all seq_cst, so at least one of us sees the other.
  if (!f.parked.load(std::memory_order_seq_cst)) return;
  // Count the fiber active before it leaves `parked`, so that the activity count never
  // shows "all parked" while a fiber is on its way back.
  rs.activity.fetch_add(one_generation + 1, std::memory_order_seq_cst);
  if (f.parked.exchange(false, std::memory_order_acq_rel)) {
    enqueue(f);
  } else {
    rs.activity.fetch_sub(1, std::memory_order_seq_cst);  // someone else woke it
  }
}

void cancel_all(run_state& rs) {
  rs.cancelling.store(true, std::memory_order_seq_cst);
  for (auto& f : rs.fibers) unpark_fiber(rs, *f);
}

void fail_run(run_state& rs, std::exception_ptr e) {
  {
    std::lock_guard lock(rs.error_mutex);
    if (!rs.scheduler_error) rs.scheduler_error = std::move(e);
  }
  cancel_all(rs);
}

std::string deadlock_message(run_state& rs) {
  std::string ranks;
  int listed = 0, parked = 0;
  for (auto& f : rs.fibers) {
    if (f->done.load(std::memory_order_acquire)) continue;
    ++parked;
    if (listed < 32) ranks += (listed++ ? ", " : "") + std::to_string(f->rank);
  }
  if (parked > listed) ranks += ", ... (" + std::to_string(parked - listed) + " more)";
  return "ranklab: fiber deadlock: all " + std::to_string(parked) +
         " unfinished fibers are parked and none is left to unpark them (parked ranks: " + ranks + ")";
}

// Called by an idle worker. Returns true if it handled an all-parked state.
bool handle_all_parked(run_state& rs) {
  const std::uint64_t seen = rs.activity.load(std::memory_order_seq_cst);
  if (active_of(seen) != 0) return false;
  // Fibers count finished before they stop counting active: this sees them all.
  if (rs.finished.load(std::memory_order_seq_cst) >= rs.p) return false;
  const std::uint32_t generation = generation_of(seen);
  std::uint32_t handled = rs.handled_generation.load(std::memory_order_acquire);
  do {
    if (static_cast<std::int32_t>(generation - handled) <= 0) return false;  // already handled
  } while (!rs.handled_generation.compare_exchange_weak(handled, generation, std::memory_order_acq_rel));
  // Count the handler as active while it runs: it may wake fibers, and one that it woke
  // first may park again before it wakes the others, which is no new all-parked state.
  // If the count moved since the load, a wakeup ended this state (the next one has its
  // own generation).
  std::uint64_t expected = seen;
  if (!rs.activity.compare_exchange_strong(expected, seen + 1, std::memory_order_seq_cst)) return true;
  if (*rs.all_parked) {
    try {
      (*rs.all_parked)();
    } catch (...) {
      fail_run(rs, std::current_exception());
    }
  } else {
    fail_run(rs, std::make_exception_ptr(std::runtime_error(deadlock_message(rs))));
  }
  rs.activity.fetch_sub(1, std::memory_order_seq_cst);
  return true;
}

void on_finished(run_state& rs, fiber_record& f) {
  sanitizer::destroy(f.san);
  f.done.store(true, std::memory_order_release);
  const int finished = rs.finished.fetch_add(1, std::memory_order_seq_cst) + 1;
  rs.activity.fetch_sub(1, std::memory_order_seq_cst);
  if (finished == rs.p) {
    rs.all_done.store(true, std::memory_order_seq_cst);
    for (auto& w : rs.workers) wake_worker(*w);
  }
}

// Scheduler side: run f until it yields, parks or finishes.
void resume(worker& w, fiber_record& f) {
  w.running = &f;
  w.watch->set_running(&f.guard);
  swap_exception_state(w.exceptions, f.exceptions);
  sanitizer::start_switch(w.san, f.san);
  f.context = std::move(f.context).resume();
  sanitizer::finish_switch(w.san, nullptr);
  swap_exception_state(f.exceptions, w.exceptions);
  w.watch->set_running(nullptr);
  w.running = nullptr;
  switch (f.reason) {
    case switch_reason::yield:
      w.push(&f);
      break;
    case switch_reason::park:
      break;  // whoever unparks it enqueues it
    case switch_reason::finish:
      on_finished(*w.rs, f);
      break;
  }
}

void start_fiber(worker& w, fiber_record& f) {
  auto entry = [&f](ctx::fiber&& scheduler) -> ctx::fiber {
    worker& w = *f.owner;
    sanitizer::finish_first_switch(&w.san);
    w.scheduler_context = std::move(scheduler);
    run_body(f);
    f.reason = switch_reason::finish;
    // After this annotation nothing on this stack may call an instrumented function that
    // returns before the jump; this lambda and Boost's record inline into fiber_entry.
    sanitizer::start_switch(f.san, w.san, /*dying=*/true);
    return std::move(w.scheduler_context);
  };
  sanitizer::create(f.san, static_cast<char*>(f.stack.sp) - f.stack.size, f.stack.size);
  // Boost.Context's constructor jumps onto the new stack and straight back: TSan must see
  // that as the new fiber's code (ASan does not care: nothing there checks stack bounds).
  sanitizer::tsan_enter(f.san);
  f.context = ctx::fiber(std::allocator_arg, ctx::preallocated(f.stack.sp, f.stack.size, f.stack), w.rs->allocator,
                         std::move(entry));
  sanitizer::tsan_enter(w.san);
  f.started = true;
}

void drain_inbox(worker& w) {
  // A plain load first: the common case is an empty inbox, and it keeps the line shared.
  if (!w.inbox.load(std::memory_order_relaxed)) return;
  fiber_record* list = w.inbox.exchange(nullptr, std::memory_order_acquire);
  fiber_record* in_order = nullptr;  // the inbox is LIFO: reverse to arrival order
  while (list) {
    fiber_record* next = list->next_in_inbox;
    list->next_in_inbox = in_order;
    in_order = list;
    list = next;
  }
  while (in_order) {
    fiber_record* next = in_order->next_in_inbox;
    w.push(in_order);
    in_order = next;
  }
}

bool has_news(worker& w) {
  return w.inbox.load(std::memory_order_seq_cst) != nullptr || w.rs->all_done.load(std::memory_order_seq_cst);
}

void idle(worker& w) {
  for (int i = 0; i < idle_spins; ++i) {
    if (has_news(w)) return;
    cpu_relax();
  }
  // Pairs with enqueue(): we publish `sleeping` then look at the inbox, the pusher publishes
  // the inbox then looks at `sleeping`.
  w.sleeping.store(1, std::memory_order_seq_cst);
  if (!has_news(w)) futex_wait(w.sleeping, 1, idle_sleep);
  w.sleeping.store(0, std::memory_order_relaxed);
}

void pin_this_thread(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // Best effort, like the thread executor's binding: a cpu outside this process's cpuset
  // (containers, taskset) leaves the worker where the OS puts it.
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void worker_main(worker& w) {
  pin_this_thread(w.cpu);
  run_state& rs = *w.rs;
  while (rs.gate.load(std::memory_order_acquire) == 0) futex_wait(rs.gate, 0, idle_sleep);
  if (rs.gate.load(std::memory_order_acquire) != 1) return;
  this_worker = &w;
  stack_overflow_watch watch;
  w.watch = &watch;
  sanitizer::adopt_thread(w.san);
  for (fiber_record* f : w.owned) {
    start_fiber(w, *f);
    w.push(f);
  }
  for (;;) {
    drain_inbox(w);
    if (fiber_record* f = w.pop()) {
      resume(w, *f);
      continue;
    }
    if (rs.all_done.load(std::memory_order_seq_cst)) break;
    if (handle_all_parked(rs)) continue;
    idle(w);
  }
  w.watch = nullptr;
  this_worker = nullptr;
}

}  // namespace

// ---- public API -----------------------------------------------------------------------------

fiber_scheduler::fiber_scheduler(fiber_options options) : options_(std::move(options)) {
  if (options_.workers < 1) throw std::invalid_argument("fiber_scheduler: workers must be at least 1");
  if (options_.seed && options_.workers != 1)
    throw std::invalid_argument("fiber_scheduler: deterministic mode (a seed) needs exactly one worker");
  for (int cpu : options_.cpus)
    if (cpu < 0 || cpu >= CPU_SETSIZE)
      throw std::invalid_argument("fiber_scheduler: cpu id " + std::to_string(cpu) + " out of range");
}

fiber_scheduler::~fiber_scheduler() = default;

void fiber_scheduler::on_all_parked(std::function<void()> handler) { all_parked_ = std::move(handler); }

fiber_scheduler* fiber_scheduler::current() {
  worker* w = this_worker;
  return w && w->running ? w->rs->owner : nullptr;
}

int fiber_scheduler::current_rank() {
  worker* w = this_worker;
  return w && w->running ? w->running->rank : -1;
}

fiber_scheduler::worker& fiber_scheduler::calling_worker(const char* what) const {
  worker* w = this_worker;
  if (!w || !w->running || w->rs->owner != this)
    throw std::logic_error(std::string("fiber_scheduler::") + what + " called outside of one of its fibers");
  return *w;
}

void fiber_scheduler::yield() {
  worker& w = calling_worker("yield");
  suspend(w, *w.running, switch_reason::yield);
}

std::uint64_t fiber_scheduler::wake_epoch(int rank) const {
  return checked_fiber(rank).epoch.load(std::memory_order_seq_cst);
}

void fiber_scheduler::park(std::uint64_t epoch) {
  worker& w = calling_worker("park");
  run_state& rs = *w.rs;
  fiber_record& f = *w.running;
  if (rs.cancelling.load(std::memory_order_acquire)) throw fiber_cancelled{};
  if (f.epoch.load(std::memory_order_seq_cst) != epoch) return;
  f.parked.store(true, std::memory_order_seq_cst);
  // An unpark between the first check and the store above saw parked == false: take the
  // wakeup back ourselves unless it already did (then it enqueued us; park and be resumed).
  if (f.epoch.load(std::memory_order_seq_cst) != epoch && f.parked.exchange(false, std::memory_order_acq_rel)) return;
  rs.activity.fetch_sub(1, std::memory_order_seq_cst);
  suspend(w, f, switch_reason::park);
  if (rs.cancelling.load(std::memory_order_acquire)) throw fiber_cancelled{};
}

void fiber_scheduler::unpark(int rank) {
  worker* w = this_worker;
  if (w && w->rs->owner == this) {
    // From one of our fibers or our handler: run() cannot end before this returns.
    unpark_fiber(*w->rs, checked_fiber(rank));
    return;
  }
  // From a plain thread: the wakeup may let the last fiber finish and run() return while
  // this call still touches the worker it woke; run() waits for outside_unparks_ == 0.
  outside_unparks_.fetch_add(1, std::memory_order_seq_cst);
  try {
    run_state* rs = run_.load(std::memory_order_seq_cst);
    fiber_record& f = checked_fiber(rank);
    unpark_fiber(*rs, f);
  } catch (...) {
    outside_unparks_.fetch_sub(1, std::memory_order_seq_cst);
    throw;
  }
  outside_unparks_.fetch_sub(1, std::memory_order_seq_cst);
}

fiber_scheduler::fiber_record& fiber_scheduler::checked_fiber(int rank) const {
  run_state* rs = run_.load(std::memory_order_seq_cst);
  if (!rs) throw std::logic_error("fiber_scheduler: no run() in progress");
  if (rank < 0 || rank >= rs->p)
    throw std::out_of_range("fiber_scheduler: rank " + std::to_string(rank) + " not in [0, " + std::to_string(rs->p) +
                            ")");
  return *rs->fibers[static_cast<std::size_t>(rank)];
}

void fiber_scheduler::run(int p, const std::function<void(int rank)>& body) {
  if (p < 1) throw std::invalid_argument("fiber_scheduler::run: p must be at least 1");
  if (run_.load()) throw std::logic_error("fiber_scheduler::run is not reentrant");
  // Every fiber costs two memory mappings; running out of them half way would fail inside
  // mmap with a bare ENOMEM. Say what the limit is instead.
  const long max_maps = read_long("/proc/sys/vm/max_map_count", 65530);
  const long maps_now = count_lines("/proc/self/maps");
  if (static_cast<long>(p) * maps_per_fiber + maps_now + 64 > max_maps)
    throw std::runtime_error("ranklab: too many fibers: " + std::to_string(p) + " fibers need " +
                             std::to_string(static_cast<long>(p) * maps_per_fiber) +
                             " memory mappings (a stack and its guard page each), " + std::to_string(maps_now) +
                             " are in use and vm.max_map_count is " + std::to_string(max_maps) +
                             ": use fewer ranks or raise vm.max_map_count");

  run_state rs;
  rs.owner = this;
  rs.body = &body;
  rs.all_parked = &all_parked_;
  rs.p = p;
  rs.allocator = fiber_stack_allocator{fiber_stack_allocator::round_up(options_.stack_bytes)};
  rs.activity.store(one_generation + static_cast<std::uint64_t>(p));  // generation 1: 0 means "none handled"
  const int workers = std::min(options_.workers, p);
  for (int i = 0; i < workers; ++i) {
    auto w = std::make_unique<worker>();
    w->rs = &rs;
    if (!options_.cpus.empty()) w->cpu = options_.cpus[static_cast<std::size_t>(i) % options_.cpus.size()];
    if (options_.seed) w->rng = splitmix64{*options_.seed};
    w->ring.resize(static_cast<std::size_t>((p - i + workers - 1) / workers));
    rs.workers.push_back(std::move(w));
  }
  rs.fibers.reserve(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    auto f = std::make_unique<fiber_record>();
    f->rank = r;
    f->owner = rs.workers[static_cast<std::size_t>(r % workers)].get();
    f->owner->owned.push_back(f.get());
    rs.fibers.push_back(std::move(f));
    fiber_record& rec = *rs.fibers.back();
    rec.stack = rs.allocator.allocate();  // throws: ~run_state frees the earlier ones
    rec.guard = {fiber_stack_allocator::guard_begin(rec.stack), fiber_stack_allocator::guard_end(rec.stack), r,
                 rec.stack.size / 1024};
  }

  run_ = &rs;
  // After the workers: no unpark may find the run any more, and those from plain threads
  // already under way must be done with `rs` before it goes.
  auto leave_run = [this] {
    run_ = nullptr;
    while (outside_unparks_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  };
  std::size_t started = 0;
  try {
    for (auto& w : rs.workers) {
      worker* wp = w.get();
      w->thread = std::thread([wp] { worker_main(*wp); });
      ++started;
    }
  } catch (...) {
    rs.gate.store(2, std::memory_order_release);
    futex_wake_all(rs.gate);
    for (std::size_t i = 0; i < started; ++i) rs.workers[i]->thread.join();
    leave_run();
    throw;
  }
  rs.gate.store(1, std::memory_order_release);
  futex_wake_all(rs.gate);
  for (auto& w : rs.workers) w->thread.join();
  leave_run();

  for (auto& f : rs.fibers)
    if (f->error) std::rethrow_exception(f->error);
  if (rs.scheduler_error) std::rethrow_exception(rs.scheduler_error);
}

}  // namespace ranklab::detail
