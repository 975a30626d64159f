// Pure helpers of `ranklab bench` (see bench_util.hpp).
#include "bench_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

namespace ranklab::tools::bench {

std::uint64_t parse_size(std::string_view text) {
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

std::vector<std::string> split_list(std::string_view text, char sep) {
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

std::vector<std::uint64_t> parse_size_list(std::string_view text) {
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

std::string size_label(std::uint64_t b) {
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) return fmt::format("{}Gi", b >> 30);
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return fmt::format("{}Mi", b >> 20);
  if (b >= (1ull << 10) && b % (1ull << 10) == 0) return fmt::format("{}Ki", b >> 10);
  return fmt::format("{}", b);
}

std::vector<int> parse_int_list(std::string_view text) {
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

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

batch_stats summarize(const std::vector<double>& v) {
  if (v.empty()) return {};
  return {median(v), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

bool uses_int32(collective c) { return is_reduction(c); }

std::uint64_t reported_bytes(collective c, std::uint64_t requested) {
  if (c == collective::barrier) return 0;
  if (uses_int32(c)) return std::max<std::uint64_t>(requested / 4, 1) * 4;
  return requested;
}

std::uint64_t result_bytes(collective c, int p, std::uint64_t bytes) {
  const auto P = static_cast<std::uint64_t>(p);
  switch (c) {
    case collective::allgather: case collective::allgatherv: case collective::gather:
    case collective::gatherv: case collective::alltoall: case collective::alltoallv:
      return P * bytes;
    case collective::barrier: return 0;
    default: return bytes;
  }
}

call make_bench_call(collective c, int p, std::uint64_t bytes, std::string_view algo) {
  call cl;
  cl.args.coll = c;
  cl.args.p = p;
  cl.args.root = 0;
  cl.choice.name = algo;
  cl.reduction = ops::sum;
  cl.type = uses_int32(c) ? datatype_of<std::int32_t>() : datatype_of<std::uint8_t>();
  const std::uint64_t n = c == collective::barrier ? 0 : reported_bytes(c, bytes) / cl.type.size;
  const auto P = static_cast<std::size_t>(p);
  switch (c) {
    case collective::allgatherv: case collective::gatherv: case collective::scatterv:
    case collective::reduce_scatter:
      cl.args.counts.assign(P, n);
      break;
    case collective::alltoallv: cl.args.counts.assign(P * P, n); break;
    default: cl.args.count = n; break;
  }
  cl.args.elem_size = cl.type.size;
  cl.args.commutative = true;
  return cl;
}

std::uint64_t buffer_bytes(const call& c) {
  std::uint64_t total = 0;
  for (int r = 0; r < c.args.p; ++r) {
    const buffer_extent e = buffer_extents(c.args, r);
    total += (e.in + e.out) * c.type.size;
  }
  return total;
}

}  // namespace ranklab::tools::bench
