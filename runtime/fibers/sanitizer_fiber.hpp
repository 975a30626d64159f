// Telling AddressSanitizer and ThreadSanitizer about fiber switches. Both track "the stack"
// and "the thread" of running code; a context switch they do not know about makes ASan
// misjudge stack bounds (false reports after an exception, __asan_handle_no_return warnings)
// and makes TSan attribute one fiber's accesses and call stack to another. Without a
// sanitizer every function here is empty and inlines away.
#pragma once
#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RANKLAB_FIBER_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define RANKLAB_FIBER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(RANKLAB_FIBER_ASAN)
#define RANKLAB_FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(RANKLAB_FIBER_TSAN)
#define RANKLAB_FIBER_TSAN 1
#endif

#if RANKLAB_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if RANKLAB_FIBER_TSAN
#include <sanitizer/tsan_interface.h>
#if !defined(__OPTIMIZE__)
// The TSan annotations assume boost::context::fiber::resume() is inlined into the switching
// function (a frame entered after __tsan_switch_to_fiber but left after the switch back
// would unbalance TSan's shadow call stacks). Sanitizer builds use RelWithDebInfo.
#warning "ranklab fibers under ThreadSanitizer expect an optimized build (-O1 or higher)"
#endif
#endif

namespace ranklab::detail::sanitizer {

// The state one side of a switch keeps for ASan (its fake stack, for use-after-return
// detection) and TSan (its fiber handle). A worker's scheduler loop has one, every fiber one.
struct fiber_context {
#if RANKLAB_FIBER_ASAN
  void* fake_stack = nullptr;
  const void* bottom = nullptr;  // the stack bounds ASan needs when switching *to* this side
  std::size_t size = 0;
#endif
#if RANKLAB_FIBER_TSAN
  void* tsan = nullptr;
#endif
};

// The worker thread's own context (its native stack), captured on that thread.
inline void adopt_thread(fiber_context& c) {
#if RANKLAB_FIBER_TSAN
  c.tsan = __tsan_get_current_fiber();
#else
  (void)c;
#endif
}

// A new fiber on the stack [bottom, bottom + size).
inline void create(fiber_context& c, const void* bottom, std::size_t size) {
#if RANKLAB_FIBER_ASAN
  c.bottom = bottom;
  c.size = size;
  // The stack may reuse memory whose shadow still marks the frames of an earlier fiber that
  // never returned (a finished fiber leaves by a jump): stale redzones, false reports.
  __asan_unpoison_memory_region(bottom, size);
#else
  (void)bottom, (void)size;
#endif
#if RANKLAB_FIBER_TSAN
  c.tsan = __tsan_create_fiber(0);
#else
  (void)c;
#endif
}

inline void destroy(fiber_context& c) {
#if RANKLAB_FIBER_TSAN
  if (c.tsan) __tsan_destroy_fiber(c.tsan);
  c.tsan = nullptr;
#else
  (void)c;
#endif
}

// TSan only: run the next code as `to` without an ASan stack switch. Used around the
// constructor of boost::context::fiber, which jumps onto the new stack and straight back.
inline void tsan_enter(const fiber_context& to) {
#if RANKLAB_FIBER_TSAN
  __tsan_switch_to_fiber(to.tsan, 0);
#else
  (void)to;
#endif
}

// Call right before jumping from `from` to `to`; `dying`: `from` never runs again.
inline void start_switch(fiber_context& from, const fiber_context& to, bool dying = false) {
#if RANKLAB_FIBER_ASAN
  __sanitizer_start_switch_fiber(dying ? nullptr : &from.fake_stack, to.bottom, to.size);
#else
  (void)from, (void)dying;
#endif
#if RANKLAB_FIBER_TSAN
  __tsan_switch_to_fiber(to.tsan, 0);
#else
  (void)to;
#endif
}

// Call first thing after a jump landed in `self`; `came_from` learns the bounds of the stack
// that was left (ASan reports them only here), so that the way back can name them.
inline void finish_switch(fiber_context& self, fiber_context* came_from) {
#if RANKLAB_FIBER_ASAN
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(self.fake_stack, &bottom, &size);
  if (came_from) came_from->bottom = bottom, came_from->size = size;
#else
  (void)self, (void)came_from;
#endif
}

// A fiber's first landing: it has no fake stack yet.
inline void finish_first_switch(fiber_context* came_from) {
#if RANKLAB_FIBER_ASAN
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(nullptr, &bottom, &size);
  if (came_from) came_from->bottom = bottom, came_from->size = size;
#else
  (void)came_from;
#endif
}

}  // namespace ranklab::detail::sanitizer
