// Reproducible sums: the same bits for any number of ranks, any algorithm, any order.
//
// ranklab::repro_sum<T> (T = float or double) is an exact superaccumulator: a fixed array of
// signed 64-bit "digits", each holding a 32-bit chunk of a fixed-point number whose lowest
// bit is T's smallest subnormal (2^-1074 for double, 2^-149 for float) and whose range
// covers every finite T with headroom for carries. Adding a value deposits its 53 (24)
// significand bits into two or three digits, exactly; nothing is ever rounded until
// value(), which rounds the exact sum once, to nearest, ties to even. The sum is therefore
// independent of the order of the additions and of how they were grouped into
// accumulators, and merging two accumulators (ops::repro_merge) is integer addition:
// commutative and associative bit for bit, so any collective and any algorithm may reduce
// them.
//
//   layout          repro_sum<double>: 67 digits + 16 bytes of header = 552 bytes
//                   repro_sum<float>:  10 digits + 16 bytes of header =  96 bytes
//   bound           value() is the exact sum correctly rounded (round to nearest even):
//                   |value() - S| <= 0.5 ulp(S), exact when S is representable; a result
//                   beyond the largest finite T is +-inf, as IEEE rounding says.
//   exactness       for up to 2^77 (double) / 2^74 (float) added values; digits are
//                   normalized (carries propagated) after every 2^30 additions.
//   special values  any NaN -> NaN; +inf and -inf together -> NaN; +inf alone -> +inf;
//                   -inf alone -> -inf (finite values beside them do not matter); an exact
//                   sum of zero is +0, or -0 when every value added was -0 (as IEEE
//                   addition gives); subnormals are added exactly like any other value.
//                   Only the final sum can overflow: DBL_MAX + DBL_MAX - DBL_MAX is
//                   DBL_MAX here, where a left-to-right sum gives inf.
//
// Merging (ops::repro_merge, or merge()) leaves the result in canonical form: the digit
// vector is a function of the exact sum alone (balanced digits: those below the top in
// [-2^31, 2^31), the top one any int64), as is the range of nonzero digits kept in the
// header, plus the special-value flags; so merged accumulators have identical bytes
// whichever order or tree combined them. A merge touches only the digits in its operands'
// ranges (an accumulator of one value has two or three). add() leaves digits unnormalized
// for speed; normalize() makes any accumulator canonical, and value() never depends on it.
//
// Element-wise: an std::span<repro_sum<double>> is a buffer like any other; reduce it with
// ops::repro_merge through allreduce, reduce, reduce_scatter(_block), scan or exscan, in any
// form (blocking, i-, _init) on any backend. to_repro / from_repro convert spans of T to
// accumulators and back; allreduce_reproducible and friends do both around the collective.
// See docs/reproducibility.md.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ranges>
#include <span>
#include <type_traits>
#include <vector>

#include "ranklab/call.hpp"
#include "ranklab/collectives.hpp"
#include "ranklab/datatype.hpp"
#include "ranklab/errors.hpp"

namespace ranklab {

namespace detail {

template <class T>
struct repro_format;

template <>
struct repro_format<double> {
  using bits = std::uint64_t;
  static constexpr int significand = 53;    // bits, the hidden one included
  static constexpr int exponent_bits = 11;  // biased exponent field
  static constexpr int lowest = 1074;       // the lowest digit bit weighs 2^-lowest
  // Bits 0 .. 2097 hold every finite double (2045 + 53): digits 0 .. 65; one more of headroom.
  static constexpr int digits = 67;
  static constexpr std::uint32_t tag = 0x31445352;  // "RSD1": what repro_merge checks
};

template <>
struct repro_format<float> {
  using bits = std::uint32_t;
  static constexpr int significand = 24;
  static constexpr int exponent_bits = 8;
  static constexpr int lowest = 149;
  // Bits 0 .. 276 (253 + 24): digits 0 .. 8; one more of headroom.
  static constexpr int digits = 10;
  static constexpr std::uint32_t tag = 0x31465352;  // "RSF1"
};

}  // namespace detail

template <class T>
class repro_sum {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "repro_sum<T>: T is float or double");
  using format = detail::repro_format<T>;
  using bits = typename format::bits;

 public:
  using value_type = T;
  static constexpr int digit_count = format::digits;
  static constexpr int digit_bits = 32;
  // add() normalizes after this many additions (each moves a digit by less than 2^32).
  static constexpr std::uint32_t normalize_every = std::uint32_t{1} << 30;

  // The special-value flags (flags()).
  enum : std::uint32_t {
    nan_seen = 1,
    plus_infinity_seen = 2,
    minus_infinity_seen = 4,
    minus_zero_seen = 8,  // a -0 was added
    other_seen = 16,      // anything but -0 was added (with minus_zero_seen: the sign of a zero sum)
  };

  repro_sum() = default;
  explicit repro_sum(T x) noexcept { add(x); }
  // An accumulator holding x alone, already canonical (what to_repro makes per element).
  static repro_sum of(T x) noexcept;
  // Makes this accumulator the one of x alone, canonical (clearing only what it must).
  void assign(T x) noexcept;

  // Adds x exactly.
  void add(T x) noexcept {
    flags_ |= deposit(x);
    if (++pending_ >= normalize_every) normalize();
  }
  // Adds every value of xs exactly.
  void add(std::span<const T> xs) noexcept;
  repro_sum& operator+=(T x) noexcept {
    add(x);
    return *this;
  }
  // Adds another accumulator's exact sum and flags; leaves this one canonical.
  void merge(const repro_sum& other) noexcept;
  repro_sum& operator+=(const repro_sum& other) noexcept {
    merge(other);
    return *this;
  }

  // The exact sum rounded once to nearest (ties to even), with the special values above.
  T value() const noexcept;

  // Propagates carries: afterwards the digits are the canonical form of the exact sum.
  void normalize() noexcept;
  bool canonical() const noexcept { return pending_ == 0; }
  // The digits [first, last) outside which every digit is zero; exact when canonical (empty,
  // 0 and 0, for a zero sum), the whole vector otherwise.
  int first_digit() const noexcept { return pending_ == 0 ? static_cast<int>(range_ & 0xffff) : 0; }
  int last_digit() const noexcept { return pending_ == 0 ? static_cast<int>(range_ >> 16) : format::digits; }

  std::uint32_t flags() const noexcept { return flags_; }
  // The digits (digit i weighs 2^(32 i - lowest)), for inspection and tests.
  std::span<const std::int64_t, format::digits> digits() const noexcept { return std::span(digit_); }

  // The same exact sum and the same special-value flags (whatever the digits' form).
  friend bool operator==(const repro_sum& a, const repro_sum& b) noexcept {
    repro_sum x = a, y = b;
    x.normalize();
    y.normalize();
    return std::memcmp(&x, &y, sizeof(repro_sum)) == 0;
  }

 private:
  // Balanced carries from digit `from` up to `to` and on while one remains (the digits below
  // `from` must be canonical); returns the index past the last digit changed.
  int carry(int from, int to) noexcept;
  // The range of nonzero digits, looked for within [from, to); marks the accumulator canonical.
  void set_range(int from, int to) noexcept;

  // Adds x's significand into the digits; returns the flags it sets.
  std::uint32_t deposit(T x) noexcept { return deposit(x, digit_); }
  static std::uint32_t deposit(T x, std::int64_t* digit) noexcept {
    constexpr int stored = format::significand - 1;
    constexpr unsigned max_exponent = (1u << format::exponent_bits) - 1;
    const bits b = std::bit_cast<bits>(x);
    const bool negative = (b >> (8 * sizeof(bits) - 1)) != 0;
    const unsigned e = static_cast<unsigned>(b >> stored) & max_exponent;
    std::uint64_t m = static_cast<std::uint64_t>(b & ((bits{1} << stored) - 1));
    if (e == max_exponent) return m != 0 ? nan_seen : negative ? minus_infinity_seen : plus_infinity_seen;
    if (e == 0) {
      if (m == 0) return negative ? minus_zero_seen : other_seen;
    } else {
      m |= std::uint64_t{1} << stored;
    }
    const unsigned position = e == 0 ? 0 : e - 1;  // of the significand's lowest bit
    const unsigned shift = position % 32;
    std::int64_t* d = digit + position / 32;
    // The signed significand times 2^shift as chunks c0 + c1 2^32 + c2 2^64, c0 and c1 in
    // [0, 2^32), c2 signed: the two's-complement bits of the (at most 86-bit) product.
    const std::int64_t mask = negative ? -1 : 0;
    const std::int64_t sm = (static_cast<std::int64_t>(m) ^ mask) - mask;
    const auto low = static_cast<std::uint64_t>(sm) << shift;
    if constexpr (std::is_same_v<T, double>) {
      const std::int64_t high = (sm >> 1) >> (63 - shift);  // sm >> (64 - shift), arithmetic
      d[0] += static_cast<std::int64_t>(low & 0xffffffff);
      d[1] += static_cast<std::int64_t>(low >> 32);
      d[2] += high;
    } else {
      // |sm| < 2^24: the product fits 56 bits and a signed 64-bit shift.
      const std::int64_t v = static_cast<std::int64_t>(low);
      d[0] += v & 0xffffffff;
      d[1] += v >> 32;
    }
    return other_seen;
  }

  // The layout is fixed and has no padding: equal sums in canonical form have equal bytes.
  std::uint32_t format_ = format::tag;
  std::uint32_t flags_ = 0;
  std::uint32_t pending_ = 0;  // additions since the last normalization
  std::uint32_t range_ = 0;    // when canonical: first nonzero digit | (last + 1) << 16
  std::int64_t digit_[format::digits] = {};
};

extern template class repro_sum<float>;
extern template class repro_sum<double>;

static_assert(std::is_trivially_copyable_v<repro_sum<double>> && std::is_trivially_copyable_v<repro_sum<float>>);
static_assert(sizeof(repro_sum<double>) == 16 + 8 * 67 && sizeof(repro_sum<float>) == 16 + 8 * 10);

namespace detail {
// inout[i] = in[i] (+) inout[i] for accumulators of either type (told apart by their
// header); throws usage_error for elements that are not repro_sum accumulators.
void repro_merge_kernel(const void* in, void* inout, std::size_t n, const void* context);
// The same without throwing: false (and nothing merged from that element on) when an
// element is not an accumulator of the type of inout[0]. For C callers (an MPI_Op).
bool repro_merge_elements(const void* in, void* inout, std::size_t n) noexcept;
}  // namespace detail

namespace ops {
// Merges repro_sum accumulators (float or double) exactly: commutative and associative bit
// for bit, so every algorithm of every collective may use it.
inline constinit const op repro_merge{op_kind::user, true, &detail::repro_merge_kernel};
}  // namespace ops

// ---- conversions --------------------------------------------------------------------------

// out[i] = an accumulator holding in[i] alone, canonical. Throws usage_error on a length mismatch.
template <class T>
void to_repro(std::span<const T> in, std::span<repro_sum<T>> out);
template <class T>
std::vector<repro_sum<T>> to_repro(std::span<const T> in) {
  std::vector<repro_sum<T>> out(in.size());
  to_repro(in, std::span(out));
  return out;
}
// out[i] = in[i].value(). Throws usage_error on a length mismatch.
template <class T>
void from_repro(std::span<const repro_sum<T>> in, std::span<T> out);

extern template void to_repro<float>(std::span<const float>, std::span<repro_sum<float>>);
extern template void to_repro<double>(std::span<const double>, std::span<repro_sum<double>>);
extern template void from_repro<float>(std::span<const repro_sum<float>>, std::span<float>);
extern template void from_repro<double>(std::span<const repro_sum<double>>, std::span<double>);

// ---- collectives --------------------------------------------------------------------------
// For every backend (ranklab::comm, ranklab::mpi::comm, a thread_team's ranklab::mpi::team_comm ...):
// anything deriving from collectives<Backend, Request>.

template <class R>
concept repro_value_range = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    (std::is_same_v<std::remove_cv_t<std::ranges::range_value_t<R>>, float> ||
     std::is_same_v<std::remove_cv_t<std::ranges::range_value_t<R>>, double>);

namespace detail {
template <class R>
auto repro_span(R&& r) {
  using T = std::remove_cv_t<std::ranges::range_value_t<R>>;
  return std::span<const T>(std::ranges::data(r), std::ranges::size(r));
}
template <class R>
auto repro_out_span(R&& r) {
  using T = std::ranges::range_value_t<R>;
  static_assert(!std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>,
                "the output of a reproducible collective must be writable");
  return std::span<T>(std::ranges::data(r), std::ranges::size(r));
}
}  // namespace detail

// The global sum of every rank's `local` values, the same bits on every rank and for any
// number of ranks, any split of the same global data and any allreduce algorithm: the exact
// sum, rounded once. One allreduce of one accumulator (552 bytes for double).
template <class Backend, class Request, repro_value_range R>
auto sum_reproducible(collectives<Backend, Request>& c, const R& local, const algo& a = {}) {
  using T = std::remove_cv_t<std::ranges::range_value_t<R>>;
  repro_sum<T> acc;
  acc.add(detail::repro_span(local));
  acc.normalize();  // canonical, so that p = 1 (no merge at all) gives the same bytes too
  c.allreduce(std::span(&acc, 1), ops::repro_merge, a);
  return acc.value();
}

// The accumulator of the global sum instead of its value (to merge further, or to read flags).
template <class Backend, class Request, repro_value_range R>
auto sum_reproducible_accumulator(collectives<Backend, Request>& c, const R& local, const algo& a = {}) {
  using T = std::remove_cv_t<std::ranges::range_value_t<R>>;
  repro_sum<T> acc;
  acc.add(detail::repro_span(local));
  acc.normalize();
  c.allreduce(std::span(&acc, 1), ops::repro_merge, a);
  return acc;
}

// Element-wise: out[i] = the reproducible sum over ranks of in[i]. Each element costs one
// accumulator in transit (552 bytes for double, 96 for float); `in` and `out` may be the
// same buffer.
template <class Backend, class Request, repro_value_range I, repro_value_range O>
void allreduce_reproducible(collectives<Backend, Request>& c, const I& in, O&& out, const algo& a = {}) {
  auto acc = to_repro(detail::repro_span(in));
  c.allreduce(acc, ops::repro_merge, a);
  from_repro(std::span<const typename decltype(acc)::value_type>(acc), detail::repro_out_span(out));
}

// The root's `out` gets the reproducible element-wise sum (may be empty elsewhere).
template <class Backend, class Request, repro_value_range I, repro_value_range O>
void reduce_reproducible(collectives<Backend, Request>& c, const I& in, O&& out, int root, const algo& a = {}) {
  auto acc = to_repro(detail::repro_span(in));
  const bool at_root = static_cast<Backend&>(c).rank() == root;
  decltype(acc) result(at_root ? acc.size() : 0);
  c.reduce(acc, result, ops::repro_merge, root, a);
  if (at_root) from_repro(std::span<const typename decltype(acc)::value_type>(result), detail::repro_out_span(out));
}

// `in` holds p blocks of out.size() elements; rank r gets block r of the reproducible sum.
template <class Backend, class Request, repro_value_range I, repro_value_range O>
void reduce_scatter_block_reproducible(collectives<Backend, Request>& c, const I& in, O&& out, const algo& a = {}) {
  auto acc = to_repro(detail::repro_span(in));
  decltype(acc) result(std::ranges::size(out));
  c.reduce_scatter_block(acc, result, ops::repro_merge, a);
  from_repro(std::span<const typename decltype(acc)::value_type>(result), detail::repro_out_span(out));
}

// reduce_scatter: rank r gets the counts[r] elements of its block of the reproducible sum.
template <class Backend, class Request, repro_value_range I, repro_value_range O>
void reduce_scatter_reproducible(collectives<Backend, Request>& c, const I& in, O&& out,
                                 std::span<const std::uint64_t> counts, const algo& a = {}) {
  auto acc = to_repro(detail::repro_span(in));
  decltype(acc) result(std::ranges::size(out));
  c.reduce_scatter(acc, result, counts, ops::repro_merge, a);
  from_repro(std::span<const typename decltype(acc)::value_type>(result), detail::repro_out_span(out));
}

// Inclusive prefix: rank r's out[i] = the reproducible sum of in[i] over ranks 0..r.
template <class Backend, class Request, repro_value_range I, repro_value_range O>
void scan_reproducible(collectives<Backend, Request>& c, const I& in, O&& out, const algo& a = {}) {
  auto acc = to_repro(detail::repro_span(in));
  c.scan(acc, acc, ops::repro_merge, a);
  from_repro(std::span<const typename decltype(acc)::value_type>(acc), detail::repro_out_span(out));
}

}  // namespace ranklab
