// How `ranklab tune` reports: progress and notes on stderr (unless -q), sizes as "64 KiB"
// and times as "1.25 us", the units of the selection table's notes.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

namespace ranklab::tools::tune {

inline bool quiet = false;  // -q: no progress on stderr (set by the command before measuring)

template <class... Args>
void progress(fmt::format_string<Args...> format, Args&&... args) {
  if (!quiet) fmt::print(stderr, format, std::forward<Args>(args)...);
}

inline std::string show_bytes(std::uint64_t b) {
  if (b >= (1u << 20) && b % (1u << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

inline std::string show_seconds(double s) {
  if (s >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.2f} us", s * 1e6);
  return fmt::format("{:.2f} ns", s * 1e9);
}

}  // namespace ranklab::tools::tune
