// The exact superaccumulator of ranklab/repro_sum.hpp: carry propagation into the canonical
// form, the merge, the one rounding of value(), and the reduction kernel of ops::repro_merge.
#include "ranklab/repro_sum.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ranklab/errors.hpp"

namespace ranklab {

// Balanced digits: v = d + carry splits into d' in [-2^31, 2^31) and carry' = floor((v + 2^31) / 2^32),
// so that an accumulator of a few values, of either sign, has only a few nonzero digits
// (two's-complement digits would turn every digit above a negative sum into 2^32 - 1).
template <class T>
int repro_sum<T>::carry(int from, int to) noexcept {
  constexpr int n = format::digits;
  constexpr std::int64_t half = std::int64_t{1} << 31;
  std::int64_t c = 0;
  int i = from;
  for (; i < n - 1 && (i < to || c != 0); ++i) {
    const std::int64_t v = digit_[i] + c;  // |v| < 2^63: digits stay below 2^62 + 2^33
    c = (v + half) >> 32;                  // arithmetic shift: floor division
    digit_[i] = v - c * (std::int64_t{1} << 32);
  }
  if (c != 0 || (i == n - 1 && to == n)) {
    digit_[n - 1] += c;
    return n;
  }
  return std::max(i, to);
}

template <class T>
void repro_sum<T>::set_range(int from, int to) noexcept {
  while (from < to && digit_[from] == 0) ++from;
  while (to > from && digit_[to - 1] == 0) --to;
  if (from == to) from = to = 0;
  range_ = static_cast<std::uint32_t>(from) | static_cast<std::uint32_t>(to) << 16;
  pending_ = 0;
}

template <class T>
void repro_sum<T>::normalize() noexcept {
  set_range(0, carry(0, format::digits));
}

template <class T>
void repro_sum<T>::add(std::span<const T> xs) noexcept {
  // Values in a row often land in the same digits: four digit vectors, one per value of
  // four in a row, keep the additions of neighbours independent (no store-to-load chain),
  // and are added up at the end. Their digits move by less than 2^32 per value like this
  // one's, so the count since the last normalization bounds their sum just the same.
  constexpr std::size_t lanes = 4;
  constexpr int n = format::digits;
  std::size_t i = 0;
  while (i < xs.size()) {
    const std::size_t room = normalize_every - pending_;
    const std::size_t count = std::min<std::size_t>(room, xs.size() - i);
    const T* x = xs.data() + i;
    std::uint32_t f = 0;
    std::size_t k = 0;
    if (count >= 8 * lanes) {
      std::int64_t lane[lanes - 1][n] = {};
      for (; k + lanes <= count; k += lanes) {
        f |= deposit(x[k], digit_);
        f |= deposit(x[k + 1], lane[0]);
        f |= deposit(x[k + 2], lane[1]);
        f |= deposit(x[k + 3], lane[2]);
      }
      for (int d = 0; d < n; ++d) digit_[d] += lane[0][d] + lane[1][d] + lane[2][d];
    }
    for (; k < count; ++k) f |= deposit(x[k], digit_);
    flags_ |= f;
    pending_ += static_cast<std::uint32_t>(count);
    i += count;
    if (pending_ >= normalize_every) normalize();
  }
}

template <class T>
void repro_sum<T>::assign(T x) noexcept {
  if (pending_ != 0) {
    std::memset(digit_, 0, sizeof digit_);
  } else {
    const int first = first_digit(), last = last_digit();
    for (int i = first; i < last; ++i) digit_[i] = 0;
  }
  format_ = format::tag;
  flags_ = deposit(x, digit_);
  pending_ = 0;
  range_ = 0;
  if (flags_ & other_seen) {
    // Its chunks are in digits k .. k+2 (k .. k+1 for float), the others zero.
    const auto b = std::bit_cast<bits>(x);
    const unsigned e = static_cast<unsigned>(b >> (format::significand - 1)) & ((1u << format::exponent_bits) - 1);
    const int k = static_cast<int>((e == 0 ? 0 : e - 1) / 32);
    const int chunks = std::is_same_v<T, double> ? 3 : 2;
    set_range(k, carry(k, k + chunks));
  }
}

template <class T>
repro_sum<T> repro_sum<T>::of(T x) noexcept {
  repro_sum r;
  r.assign(x);
  return r;
}

template <class T>
void repro_sum<T>::merge(const repro_sum& other) noexcept {
  flags_ |= other.flags_;
  const repro_sum* o = &other;
  repro_sum copy;
  if (other.pending_ != 0) {
    copy = other;
    copy.normalize();
    o = &copy;
  }
  if (pending_ != 0) normalize();
  // Both canonical: digits below 2^31 in magnitude (the tops any), nonzero only in their
  // ranges. Add those, carry, and find the new range.
  const int a_first = first_digit(), a_last = last_digit();
  const int b_first = o->first_digit(), b_last = o->last_digit();
  if (b_first == b_last) return;  // adding zero
  const int from = a_first == a_last ? b_first : std::min(a_first, b_first);
  const int to = std::max(a_last, b_last);
  for (int i = from; i < to; ++i) digit_[i] += o->digit_[i];
  set_range(from, carry(from, to));
}

template <class T>
T repro_sum<T>::value() const noexcept {
  if ((flags_ & nan_seen) || ((flags_ & plus_infinity_seen) && (flags_ & minus_infinity_seen)))
    return std::numeric_limits<T>::quiet_NaN();
  if (flags_ & plus_infinity_seen) return std::numeric_limits<T>::infinity();
  if (flags_ & minus_infinity_seen) return -std::numeric_limits<T>::infinity();

  if (pending_ != 0) {
    repro_sum copy = *this;
    copy.normalize();
    return copy.value();
  }
  constexpr int n = format::digits;
  constexpr int m = format::significand;
  const int first = first_digit(), last = last_digit();
  if (first == last) return (flags_ & minus_zero_seen) && !(flags_ & other_seen) ? -T(0) : T(0);
  // Balanced digits: the sign of the sum is the sign of its highest nonzero digit.
  const bool negative = digit_[last - 1] < 0;
  // The magnitude as n + 1 limbs of 32 bits in [0, 2^32) (the top digit may exceed 2^32);
  // those outside [first, last] are zero and never read.
  std::uint32_t limb[n + 1];
  std::int64_t c = 0;
  for (int i = first; i < last; ++i) {
    const std::int64_t v = (negative ? -digit_[i] : digit_[i]) + c;
    if (i == n - 1) {  // the top: v >= 0, as the magnitude is
      limb[i] = static_cast<std::uint32_t>(v);
      limb[i + 1] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(v) >> 32);
    } else {
      limb[i] = static_cast<std::uint32_t>(v & 0xffffffff);
      c = v >> 32;
    }
  }
  // (The carry out of the highest digit is 0: the magnitude is below 2^(32 last).)
  const int end = last == n ? n + 1 : last;  // limbs [first, end) hold the magnitude
  auto at = [&](int i) -> std::uint32_t { return i >= first && i < end ? limb[i] : 0; };
  int h = end - 1;
  while (h > first && limb[h] == 0) --h;
  const int length = 32 * h + std::bit_width(limb[h]);  // bits of the magnitude
  const std::uint64_t low = at(0) | (std::uint64_t{at(1)} << 32);
  T r;
  if (length <= m) {
    // Representable as it is: a subnormal, or a normal number whose lowest bit is 2^-lowest.
    r = std::ldexp(static_cast<T>(low), -format::lowest);
  } else {
    // The 64 bits from the top down, and whether any bit below them is set.
    std::uint64_t window = 0;
    bool sticky = false;
    const int lo = length - 64;
    if (lo <= 0) {
      window = low << -lo;
    } else {
      const int k = lo / 32, shift = lo % 32;
      const unsigned __int128 v =
          at(k) | (static_cast<unsigned __int128>(at(k + 1)) << 32) | (static_cast<unsigned __int128>(at(k + 2)) << 64);
      window = static_cast<std::uint64_t>(v >> shift);
      sticky = (at(k) & ((std::uint32_t{1} << shift) - 1)) != 0;
      for (int i = first; i < k && !sticky; ++i) sticky = at(i) != 0;
    }
    std::uint64_t significand = window >> (64 - m);
    const std::uint64_t rest = window & ((std::uint64_t{1} << (64 - m)) - 1);
    const std::uint64_t half = std::uint64_t{1} << (63 - m);
    int exponent = length - m;  // of the significand's lowest bit, above 2^-lowest
    // Round to nearest, ties to even.
    if (rest > half || (rest == half && (sticky || (significand & 1)))) {
      if (++significand == std::uint64_t{1} << m) {
        significand >>= 1;
        ++exponent;
      }
    }
    // Exact (the result is normal) unless it is beyond the largest finite T: then inf, as
    // round to nearest gives.
    r = std::ldexp(static_cast<T>(significand), exponent - format::lowest);
  }
  return negative ? -r : r;
}

template class repro_sum<float>;
template class repro_sum<double>;

template <class T>
void to_repro(std::span<const T> in, std::span<repro_sum<T>> out) {
  if (in.size() != out.size())
    throw usage_error(no_rank, "to_repro", "the accumulators' span is not as long as the values'");
  for (std::size_t i = 0; i < in.size(); ++i) out[i].assign(in[i]);
}

template <class T>
void from_repro(std::span<const repro_sum<T>> in, std::span<T> out) {
  if (in.size() != out.size())
    throw usage_error(no_rank, "from_repro", "the values' span is not as long as the accumulators'");
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = in[i].value();
}

template void to_repro<float>(std::span<const float>, std::span<repro_sum<float>>);
template void to_repro<double>(std::span<const double>, std::span<repro_sum<double>>);
template void from_repro<float>(std::span<const repro_sum<float>>, std::span<float>);
template void from_repro<double>(std::span<const repro_sum<double>>, std::span<double>);

namespace detail {

namespace {

std::uint32_t tag_of(const std::byte* element) {
  std::uint32_t tag;
  std::memcpy(&tag, element, sizeof tag);  // the first member of every repro_sum
  return tag;
}

template <class T>
bool merge_all(const std::byte* in, std::byte* inout, std::size_t n) noexcept {
  using acc = repro_sum<T>;
  constexpr std::uint32_t tag = repro_format<T>::tag;
  const bool aligned =
      (reinterpret_cast<std::uintptr_t>(in) | reinterpret_cast<std::uintptr_t>(inout)) % alignof(acc) == 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::byte* a = in + i * sizeof(acc);
    std::byte* b = inout + i * sizeof(acc);
    if (tag_of(a) != tag || tag_of(b) != tag) return false;
    if (aligned) {
      // Trivially copyable (an implicit-lifetime type): the bytes the executor moved are one.
      reinterpret_cast<acc*>(b)->merge(*reinterpret_cast<const acc*>(a));
    } else {
      acc x, y;
      std::memcpy(&x, a, sizeof(acc));
      std::memcpy(&y, b, sizeof(acc));
      y.merge(x);
      std::memcpy(b, &y, sizeof(acc));
    }
  }
  return true;
}

}  // namespace

bool repro_merge_elements(const void* in, void* inout, std::size_t n) noexcept {
  if (n == 0) return true;
  const auto* a = static_cast<const std::byte*>(in);
  auto* b = static_cast<std::byte*>(inout);
  switch (tag_of(b)) {
    case repro_format<double>::tag:
      return merge_all<double>(a, b, n);
    case repro_format<float>::tag:
      return merge_all<float>(a, b, n);
    default:
      return false;
  }
}

void repro_merge_kernel(const void* in, void* inout, std::size_t n, const void*) {
  if (!repro_merge_elements(in, inout, n))
    throw usage_error(no_rank, "ops::repro_merge",
                      "reduces repro_sum<float> or repro_sum<double> accumulators only (an element's header is "
                      "not one of theirs, or the two operands differ in type)");
}

}  // namespace detail

}  // namespace ranklab
