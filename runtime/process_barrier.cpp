// membarrier(2) for the asymmetric sleep/wake barrier (detail/process_barrier.hpp).
#include "detail/process_barrier.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace ranklab::detail {

namespace {

long membarrier(int command) { return syscall(__NR_membarrier, command, 0, 0); }

bool register_process_barrier() {
  if (const char* off = std::getenv("RANKLAB_ASYMMETRIC_FENCES"); off && std::string_view(off) == "0") return false;
  const long commands = membarrier(MEMBARRIER_CMD_QUERY);
  if (commands < 0 || !(commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;  // old kernel, or a seccomp filter
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

}  // namespace

bool process_barrier_available() {
  static const bool available = register_process_barrier();
  return available;
}

void process_barrier() {
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  // Registered, so the kernel cannot refuse; if it ever did, publishers that skipped their
  // barrier could leave a rank asleep for good: stop rather than hang.
  std::fprintf(stderr, "ranklab: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration: %s\n",
               std::strerror(errno));
  std::abort();
}

}  // namespace ranklab::detail
