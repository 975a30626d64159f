// Parsers of option values shared by every subcommand (sizes, lists), so that `bench`,
// `tune`, the rest and the bench/ programs accept one syntax. Pure functions that throw
// std::invalid_argument with a message naming the text; cli/checks.hpp turns that into a
// usage error naming the option. Header-only: the bench/ programs and test_bench_output
// use it without the tool's other sources.
#pragma once
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ranklab::tools {

// "a,b,,c" -> {"a","b","c"}.
inline std::vector<std::string> split_list(std::string_view text, char sep = ',') {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find(sep, at);
    if (end == std::string_view::npos) end = text.size();
    if (end > at) out.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// "4096", "4K", "4Ki", "4KiB", "16Mi", "1G" -> bytes (K/M/G binary, as the MPI peers).
inline std::uint64_t parse_size(std::string_view text) {
  const std::string shown(text);
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr == text.data())
    throw std::invalid_argument("'" + shown + "' is not a size (e.g. 8, 64Ki, 1Mi)");
  std::string unit(ptr, end);
  for (char& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::uint64_t scale = 1;
  if (!unit.empty() && (unit[0] == 'k' || unit[0] == 'm' || unit[0] == 'g')) {
    scale = unit[0] == 'k' ? 1ull << 10 : unit[0] == 'm' ? 1ull << 20 : 1ull << 30;
    unit.erase(0, 1);
    if (!unit.empty() && unit[0] == 'i') unit.erase(0, 1);
  }
  if (unit == "b") unit.clear();
  if (!unit.empty()) throw std::invalid_argument("'" + shown + "': unknown unit (use Ki, Mi or Gi)");
  if (value > (~0ull) / scale) throw std::invalid_argument("'" + shown + "' is too large");
  return value * scale;
}

// Comma separated sizes or geometric ranges "lo:hi[:factor]" (factor defaults to 2).
inline std::vector<std::uint64_t> parse_size_list(std::string_view text) {
  std::vector<std::uint64_t> out;
  for (const std::string& item : split_list(text)) {
    const auto parts = split_list(item, ':');
    if (parts.size() == 1) {
      out.push_back(parse_size(parts[0]));
      continue;
    }
    if (parts.size() > 3) throw std::invalid_argument("'" + item + "': a range is lo:hi[:factor]");
    const std::uint64_t lo = parse_size(parts[0]), hi = parse_size(parts[1]);
    const std::uint64_t f = parts.size() == 3 ? parse_size(parts[2]) : 2;
    if (f < 2) throw std::invalid_argument("'" + item + "': the factor must be at least 2");
    if (lo > hi) throw std::invalid_argument("'" + item + "': lo is larger than hi");
    for (std::uint64_t s = lo; s <= hi; s = s == 0 ? 1 : s * f) {
      out.push_back(s);
      if (out.size() > 64) throw std::invalid_argument("'" + item + "': more than 64 sizes");
      if (s > hi / f) break;
    }
  }
  if (out.empty()) throw std::invalid_argument("no sizes given");
  return out;
}

// 1048576 -> "1Mi", 65536 -> "64Ki", 100 -> "100".
inline std::string size_label(std::uint64_t b) {
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) return fmt::format("{}Gi", b >> 30);
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return fmt::format("{}Mi", b >> 20);
  if (b >= (1ull << 10) && b % (1ull << 10) == 0) return fmt::format("{}Ki", b >> 10);
  return fmt::format("{}", b);
}

// "2,4,8" -> {2,4,8}; throws for non-numbers or values < 1.
inline std::vector<int> parse_int_list(std::string_view text) {
  std::vector<int> out;
  for (const std::string& item : split_list(text)) {
    int v = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc{} || ptr != item.data() + item.size() || v < 1)
      throw std::invalid_argument("'" + item + "' is not a positive integer");
    out.push_back(v);
  }
  if (out.empty()) throw std::invalid_argument("empty list");
  return out;
}

}  // namespace ranklab::tools
