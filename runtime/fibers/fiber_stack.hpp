// Fiber stacks: mmap'ed with a guard (16 pages of address space) below, so that a rank's memory is only the pages
// its stack really touched, and an overflow faults instead of corrupting a neighbour. The
// fault is then reported by name: a SIGSEGV handler that runs on a per-worker alternate
// signal stack (the overflowed stack has no room left) looks the address up in the guard
// of the fiber that the faulting worker is running.
#pragma once
#include <signal.h>

#include <boost/context/stack_context.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ranklab::detail {

// Boost.Context's StackAllocator concept. `usable_bytes` is a multiple of the page size;
// the mapping is a PROT_NONE guard of 16 pages plus that, reserved without swap
// (MAP_NORESERVE), so untouched pages cost nothing.
struct fiber_stack_allocator {
  std::size_t usable_bytes;

  // Throws std::runtime_error naming the size and errno when the mapping fails.
  boost::context::stack_context allocate() const;
  void deallocate(boost::context::stack_context& sc) const noexcept;

  // `bytes` rounded up to whole pages, at least 4 pages (a fiber's entry frames alone
  // need about a page).
  static std::size_t round_up(std::size_t bytes);
  // The guard below a stack from allocate(): [first, last).
  static std::uintptr_t guard_begin(const boost::context::stack_context& sc);
  static std::uintptr_t guard_end(const boost::context::stack_context& sc);
};

// What the overflow handler needs to know about a fiber: immutable while it exists.
struct stack_guard {
  std::uintptr_t begin = 0;  // the guard
  std::uintptr_t end = 0;
  int rank = -1;
  std::size_t stack_kib = 0;
};

// One per worker thread, alive while the worker runs fibers: makes the process-wide SIGSEGV
// handler current (installed over the previous one, which gets every fault that is not a
// guard page of a running fiber; see fiber_stack.cpp), gives this thread an alternate
// signal stack and a slot in a fixed table the handler can read without locks or malloc.
// Its `running` is what the handler checks: set it around every switch into a fiber.
class stack_overflow_watch {
 public:
  stack_overflow_watch();
  ~stack_overflow_watch();
  stack_overflow_watch(const stack_overflow_watch&) = delete;
  stack_overflow_watch& operator=(const stack_overflow_watch&) = delete;

  // The fiber this thread runs now, nullptr in the scheduler loop. A no-op when the
  // table was full (more than 1024 concurrent workers): those overflows are plain SIGSEGVs.
  void set_running(const stack_guard* g) {
    if (slot_) slot_->store(g, std::memory_order_relaxed);
  }

 private:
  std::atomic<const stack_guard*>* slot_ = nullptr;
  int slot_index_ = -1;
  void* alt_stack_ = nullptr;
  bool restore_alt_stack_ = false;
  stack_t old_alt_stack_{};
};

}  // namespace ranklab::detail
