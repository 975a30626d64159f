#include "fibers/fiber_stack.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

namespace ranklab::detail {

namespace {

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// The guard below a stack: 16 pages of address space, no memory. One page is not enough: a
// frame larger than the guard (a few inlined levels of a recursion with a local array)
// steps over it into whatever lies below, and the overflow becomes an unexplained fault or
// silent corruption. Frames up to this size land in the guard and are reported.
std::size_t guard_bytes() { return 16 * page_size(); }

// ---- the handler's table: fixed size, constant-initialized, read with plain atomic loads ----

constexpr int max_watched_threads = 1024;

struct watch_slot {
  std::atomic<pid_t> tid{0};  // 0: free
  std::atomic<const stack_guard*> running{nullptr};
};
watch_slot watch_slots[max_watched_threads];

struct sigaction previous_segv_action;

pid_t this_tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// Async-signal-safe formatting into a fixed buffer: no malloc, no locale, no stdio.
struct signal_text {
  char buf[256];
  std::size_t len = 0;
  void add(const char* s) {
    while (*s && len < sizeof buf) buf[len++] = *s++;
  }
  void add(std::size_t v) {
    char digits[24];
    int n = 0;
    do digits[n++] = static_cast<char>('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0 && len < sizeof buf) buf[len++] = digits[--n];
  }
};

[[noreturn]] void report_overflow(const stack_guard& g) {
  signal_text t;
  t.add("ranklab: rank ");
  t.add(static_cast<std::size_t>(g.rank));
  t.add(" overflowed its fiber stack of ");
  t.add(g.stack_kib);
  t.add(" KiB (raise team_options::stack_bytes or RANKLAB_STACK_KIB)\n");
  const char* p = t.buf;
  std::size_t left = t.len;
  while (left > 0) {
    const ssize_t n = write(STDERR_FILENO, p, left);
    if (n <= 0) break;
    p += n, left -= static_cast<std::size_t>(n);
  }
  _exit(134);  // as if aborted, without running SIGABRT handlers on a broken stack
}

void on_segv(int sig, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const pid_t tid = this_tid();
  for (watch_slot& s : watch_slots) {
    if (s.tid.load(std::memory_order_relaxed) != tid) continue;
    const stack_guard* g = s.running.load(std::memory_order_relaxed);
    if (g && address >= g->begin && address < g->end) report_overflow(*g);
    break;
  }
  // Not ours: hand the signal to whoever handled it before us, exactly as if we had never
  // been installed: put their action back and return. A fault re-executes and faults
  // again into their handler (or the default action); a sent signal is re-raised, and
  // arrives once this handler returns. The next run() puts ours back on top.
  sigaction(SIGSEGV, &previous_segv_action, nullptr);
  if (info->si_code <= 0) raise(sig);
  (void)context;
}

// Called by every worker as it starts: ours must be the current handler, installed over
// whatever is current. Not just once per process: frameworks that install their own
// handler per scope (test runners do, per test case) put back the one they found when the
// scope ends, which removes ours.
void install_segv_handler() {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  struct sigaction current {};
  sigaction(SIGSEGV, nullptr, &current);
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_segv) return;
  struct sigaction act {};
  act.sa_sigaction = on_segv;
  act.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&act.sa_mask);
  sigaction(SIGSEGV, &act, &previous_segv_action);
}

// Room for our handler and for the handler that a fault which is not ours goes to next (a
// sanitizer's, which symbolizes on this stack when it asked for SA_ONSTACK). Reserved only: untouched pages cost
// nothing.
constexpr std::size_t alt_stack_bytes = 256 * 1024;

}  // namespace

// ---- fiber_stack_allocator ----

std::size_t fiber_stack_allocator::round_up(std::size_t bytes) {
  const std::size_t page = page_size();
  if (bytes > (std::size_t{1} << 46)) bytes = std::size_t{1} << 46;  // no overflow below; mmap refuses
  return std::max(4 * page, (bytes + page - 1) / page * page);
}

boost::context::stack_context fiber_stack_allocator::allocate() const {
  const std::size_t total = usable_bytes + guard_bytes();
  void* base =
      mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (base == MAP_FAILED) {
    const int e = errno;
    throw std::runtime_error(
        "ranklab: cannot map a fiber stack of " + std::to_string(usable_bytes / 1024) + " KiB: " + std::strerror(e) +
        (e == ENOMEM ? " (out of memory or address space, or too many fibers for vm.max_map_count)" : ""));
  }
  if (mprotect(base, guard_bytes(), PROT_NONE) != 0) {
    const int e = errno;
    munmap(base, total);
    throw std::runtime_error(std::string("ranklab: cannot protect a fiber stack's guard page: ") + std::strerror(e) +
                             (e == ENOMEM ? " (too many fibers for vm.max_map_count)" : ""));
  }
  boost::context::stack_context sc;
  sc.size = usable_bytes;
  sc.sp = static_cast<char*>(base) + total;  // stacks grow down: sp is the top
  return sc;
}

void fiber_stack_allocator::deallocate(boost::context::stack_context& sc) const noexcept {
  if (!sc.sp) return;
  char* bottom = static_cast<char*>(sc.sp) - sc.size;
  // Shadow poisoned by frames that never returned is cleared when a fiber is created on
  // the memory again (sanitizer::create).
  munmap(bottom - guard_bytes(), sc.size + guard_bytes());
  sc.sp = nullptr;
}

std::uintptr_t fiber_stack_allocator::guard_begin(const boost::context::stack_context& sc) {
  return reinterpret_cast<std::uintptr_t>(sc.sp) - sc.size - guard_bytes();
}

std::uintptr_t fiber_stack_allocator::guard_end(const boost::context::stack_context& sc) {
  return reinterpret_cast<std::uintptr_t>(sc.sp) - sc.size;
}

// ---- stack_overflow_watch ----

stack_overflow_watch::stack_overflow_watch() {
  install_segv_handler();
  const pid_t tid = this_tid();
  for (int i = 0; i < max_watched_threads; ++i) {
    pid_t expected = 0;
    if (watch_slots[i].tid.compare_exchange_strong(expected, tid)) {
      watch_slots[i].running.store(nullptr, std::memory_order_relaxed);
      slot_ = &watch_slots[i].running;
      slot_index_ = i;
      break;
    }
  }
  void* mem =
      mmap(nullptr, alt_stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) return;  // overflows of this worker become plain SIGSEGVs
  stack_t ss{};
  ss.ss_sp = mem;
  ss.ss_size = alt_stack_bytes;
  if (sigaltstack(&ss, &old_alt_stack_) == 0) {
    alt_stack_ = mem;
    restore_alt_stack_ = true;
  } else {
    munmap(mem, alt_stack_bytes);
  }
}

stack_overflow_watch::~stack_overflow_watch() {
  if (restore_alt_stack_) {
    // A thread without an alternate stack before gets SS_DISABLE back.
    if (old_alt_stack_.ss_flags & SS_DISABLE) {
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, nullptr);
    } else {
      sigaltstack(&old_alt_stack_, nullptr);
    }
    munmap(alt_stack_, alt_stack_bytes);
  }
  if (slot_) {
    slot_->store(nullptr, std::memory_order_relaxed);
    watch_slots[slot_index_].tid.store(0, std::memory_order_release);
  }
}

}  // namespace ranklab::detail
