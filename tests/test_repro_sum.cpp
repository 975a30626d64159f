// Reproducible sums (ranklab/repro_sum.hpp): the same bits for any number of ranks, any
// algorithm, any order. The same global arrays (wide dynamic range, heavy cancellation,
// subnormals; 1 .. 10^6 values) split across p = 1..64 in several ways and summed with every
// registered algorithm of allreduce, reduce, reduce_scatter(_block) and scan, on threads,
// fibers, deterministic fibers and the sequential executor: identical bits everywhere, equal
// to the exact sum rounded once to nearest even. The exact reference is computed here, by a
// big-integer sum of its own (sign and magnitude in 64-bit limbs, rounded by the hardware's
// conversion of the top 64 bits with the rest folded in as a sticky bit), independent of the
// accumulator's code. Then special values, the merge's algebra, and misuse.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ranklab/ranklab.hpp"
#include "ranklab/repro_sum.hpp"
#include "test_support.hpp"

using namespace ranklab;

namespace {

// ---- the exact reference ---------------------------------------------------------------------

template <class T>
struct exact_sum {
  static constexpr int lowest = std::is_same_v<T, double> ? 1074 : 149;  // units of 2^-lowest
  static constexpr int significand = std::numeric_limits<T>::digits;     // 53 / 24
  static constexpr int limbs = std::is_same_v<T, double> ? 40 : 8;       // 2560 / 512 bits
  std::array<std::uint64_t, limbs> plus{}, minus{};
  bool nan = false, plus_inf = false, minus_inf = false, only_minus_zeros = true;

  void add(T x) {
    if (!(x == 0 && std::signbit(x))) only_minus_zeros = false;
    if (std::isnan(x)) {
      nan = true;
      return;
    }
    if (std::isinf(x)) {
      (x > 0 ? plus_inf : minus_inf) = true;
      return;
    }
    if (x == 0) return;
    int e = 0;
    const T f = std::frexp(std::fabs(x), &e);  // |x| = f 2^e, f in [1/2, 1)
    auto m = static_cast<std::uint64_t>(std::ldexp(f, significand));
    int shift = e - significand + lowest;
    if (shift < 0) {  // a subnormal: its low bits are zero
      m >>= -shift;
      shift = 0;
    }
    auto& to = std::signbit(x) ? minus : plus;
    const unsigned __int128 v = static_cast<unsigned __int128>(m) << (shift % 64);
    std::uint64_t carry = 0;
    std::size_t k = static_cast<std::size_t>(shift / 64);
    for (std::uint64_t part : {static_cast<std::uint64_t>(v), static_cast<std::uint64_t>(v >> 64)}) {
      const unsigned __int128 s = static_cast<unsigned __int128>(to[k]) + part + carry;
      to[k++] = static_cast<std::uint64_t>(s);
      carry = static_cast<std::uint64_t>(s >> 64);
    }
    for (; carry && k < limbs; ++k) carry = ++to[k] == 0;
  }
  void add(const std::vector<T>& xs) {
    for (T x : xs) add(x);
  }

  static bool less(const std::array<std::uint64_t, limbs>& a, const std::array<std::uint64_t, limbs>& b) {
    for (std::size_t i = limbs; i-- > 0;)
      if (a[i] != b[i]) return a[i] < b[i];
    return false;
  }

  T rounded() const {
    if (nan || (plus_inf && minus_inf)) return std::numeric_limits<T>::quiet_NaN();
    if (plus_inf) return std::numeric_limits<T>::infinity();
    if (minus_inf) return -std::numeric_limits<T>::infinity();
    const bool negative = less(plus, minus);
    const auto& big = negative ? minus : plus;
    const auto& small = negative ? plus : minus;
    std::array<std::uint64_t, limbs> mag{};
    std::uint64_t borrow = 0;
    for (std::size_t i = 0; i < limbs; ++i) {
      const unsigned __int128 d = static_cast<unsigned __int128>(big[i]) - small[i] - borrow;
      mag[i] = static_cast<std::uint64_t>(d);
      borrow = (d >> 64) != 0;
    }
    int top = limbs - 1;
    while (top >= 0 && mag[static_cast<std::size_t>(top)] == 0) --top;
    if (top < 0) return only_minus_zeros ? -T(0) : T(0);
    const int length = 64 * top + std::bit_width(mag[static_cast<std::size_t>(top)]);
    T r;
    if (length <= 64) {
      // One rounding by the hardware's conversion; the scaling is exact (the result is
      // exact when below 2^significand units, and normal above).
      r = std::ldexp(static_cast<T>(mag[0]), -lowest);
    } else {
      // The top 64 bits, the rest folded into the lowest as a sticky bit (round to odd):
      // converting that rounds like the whole number, as 64 >= significand + 2.
      const int lo = length - 64;
      const std::size_t k = static_cast<std::size_t>(lo / 64);
      const int s = lo % 64;
      std::uint64_t window = mag[k] >> s;
      if (s != 0 && k + 1 < limbs) window |= mag[k + 1] << (64 - s);
      bool sticky = s != 0 && (mag[k] << (64 - s)) != 0;
      for (std::size_t i = 0; i < k; ++i) sticky = sticky || mag[i] != 0;
      r = std::ldexp(static_cast<T>(window | (sticky ? 1 : 0)), lo - lowest);
    }
    return negative ? -r : r;
  }
};

template <class T>
T exact(const std::vector<T>& xs) {
  exact_sum<T> e;
  e.add(xs);
  return e.rounded();
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}
template <class T>
bool same_bytes(const repro_sum<T>& a, const repro_sum<T>& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

template <class T>
std::string bits_of(T x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(x));
  return buf;
}

// ---- data ------------------------------------------------------------------------------------

// n values of the whole exponent range (normal, subnormal, a few huge and tiny), most of them
// cancelled by their negation (some nearly: off by a tiny amount), shuffled: an exact sum far
// below the largest values, which a floating-point sum in any particular order misses.
template <class T>
std::vector<T> badly_conditioned(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  constexpr int min_e = std::is_same_v<T, double> ? -1074 : -149;
  constexpr int max_e = std::is_same_v<T, double> ? 1000 : 120;  // partial sums stay finite
  std::uniform_int_distribution<int> expo(min_e, max_e);
  std::uniform_real_distribution<T> mant(T(0.5), T(1));
  auto one = [&] {
    T x = std::ldexp(mant(rng), expo(rng));
    if (rng() % 16 == 0) x = std::ldexp(mant(rng), min_e + static_cast<int>(rng() % 40));  // subnormal
    return rng() % 2 ? -x : x;
  };
  std::vector<T> v;
  v.reserve(n);
  while (v.size() < n) {
    const T x = one();
    v.push_back(x);
    if (v.size() < n && rng() % 8 != 0) {
      T y = -x;
      if (rng() % 4 == 0) y = std::nextafter(y, T(0));  // a near-cancellation
      v.push_back(y);
    }
  }
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

// The global array cut into p local arrays.
enum class split { blocks, uneven, cyclic, last_rank };
const split all_splits[] = {split::blocks, split::uneven, split::cyclic, split::last_rank};
const char* name(split s) {
  switch (s) {
    case split::blocks:
      return "blocks";
    case split::uneven:
      return "uneven";
    case split::cyclic:
      return "cyclic";
    case split::last_rank:
      return "last_rank";
  }
  return "?";
}

template <class T>
std::vector<std::vector<T>> cut(const std::vector<T>& g, int p, split s, unsigned seed = 5) {
  std::vector<std::vector<T>> local(static_cast<std::size_t>(p));
  const std::size_t n = g.size();
  switch (s) {
    case split::blocks:
      for (int r = 0; r < p; ++r)
        local[r].assign(g.begin() + static_cast<std::ptrdiff_t>(n * r / p),
                        g.begin() + static_cast<std::ptrdiff_t>(n * (r + 1) / p));
      break;
    case split::uneven: {  // random cut points: some ranks empty, some large
      std::mt19937_64 rng(seed + static_cast<unsigned>(p));
      std::vector<std::size_t> cuts{0, n};
      for (int r = 1; r < p; ++r) cuts.push_back(n ? rng() % (n + 1) : 0);
      std::sort(cuts.begin(), cuts.end());
      for (int r = 0; r < p; ++r)
        local[r].assign(g.begin() + static_cast<std::ptrdiff_t>(cuts[r]),
                        g.begin() + static_cast<std::ptrdiff_t>(cuts[r + 1]));
      break;
    }
    case split::cyclic:
      for (std::size_t i = 0; i < n; ++i) local[i % static_cast<std::size_t>(p)].push_back(g[i]);
      break;
    case split::last_rank:
      local.back() = g;
      break;
  }
  return local;
}

// Algorithms of collective c that take accumulators at p ranks (the shared-memory "slots"
// carry only a few bytes per rank).
std::vector<std::string> algorithms_for(collective c, int p, std::uint64_t count, datatype t) {
  std::vector<std::string> names;
  for (const algorithm* a : registry::for_collective(c)) {
    call k = make_call(c, p, count, 0, t, ops::repro_merge, {a->name});
    if (meets_preconditions(*a, k.args)) names.emplace_back(a->name);
  }
  return names;
}

// Failures counted by the ranks, the first few described (checked by the test's thread).
struct failures {
  std::mutex lock;
  int count = 0;
  std::string first;
  void add(const std::string& what) {
    std::lock_guard g(lock);
    if (++count <= 4) first += what + "\n";
  }
};

team_options mode_options(const std::string& mode) {
  team_options o;
  o.deadlock_timeout = std::chrono::milliseconds(60000);  // a loaded machine is slow, not stuck
  if (mode == "threads") o.execution = execution_mode::threads;
  if (mode == "fibers") o.execution = execution_mode::fibers;
  if (mode == "deterministic") o.seed = 20261124;
  return o;
}

}  // namespace

// ---- the accumulator alone -------------------------------------------------------------------

TEST_CASE("repro_sum: a trivially copyable fixed-size element, moved as bytes") {
  static_assert(std::is_trivially_copyable_v<repro_sum<double>>);
  static_assert(std::is_trivially_copyable_v<repro_sum<float>>);
  CHECK(sizeof(repro_sum<double>) == 552);
  CHECK(sizeof(repro_sum<float>) == 96);
  CHECK(datatype_of<repro_sum<double>>() == datatype{type_kind::bytes, 552});
  CHECK(ops::repro_merge.kind == op_kind::user);
  CHECK(ops::repro_merge.commutative);
  CHECK(repro_sum<double>{}.value() == 0.0);
  CHECK(!std::signbit(repro_sum<double>{}.value()));
}

TEST_CASE("repro_sum: the reference itself on hand-made sums") {
  CHECK(exact(std::vector<double>{1.0, 0x1p-53}) == 1.0);                                  // tie: even
  CHECK(exact(std::vector<double>{1.0, 0x1p-53, 0x1p-1074}) == std::nextafter(1.0, 2.0));  // above the tie
  CHECK(exact(std::vector<double>{0x1p1000, 1.0, -0x1p1000}) == 1.0);
  CHECK(exact(std::vector<double>{DBL_MAX, DBL_MAX, -DBL_MAX}) == DBL_MAX);
  CHECK(exact(std::vector<double>{0x1p-1074, 0x1p-1074}) == 0x1p-1073);
  CHECK(exact(std::vector<float>{1.0f, 0x1p-24f, 0x1p-60f}) == std::nextafter(1.0f, 2.0f));
}

TEST_CASE("repro_sum: equal to the exact sum rounded once, for any order and grouping (double and float)") {
  auto check = []<class T>(T) {
    for (std::size_t n :
         {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{10}, std::size_t{1000}, std::size_t{20000}}) {
      for (unsigned seed : {1u, 2u, 3u}) {
        std::vector<T> v = badly_conditioned<T>(n, seed * 101 + static_cast<unsigned>(n));
        const T want = exact(v);
        INFO("n = " << n << " seed " << seed << " want " << bits_of(want));
        repro_sum<T> all;
        all.add(std::span<const T>(v));
        const T got = all.value();
        CHECK(same_bits(got, want));
        // One at a time, reversed, shuffled, in random groups merged in random order.
        std::mt19937_64 rng(seed);
        repro_sum<T> one;
        for (auto it = v.rbegin(); it != v.rend(); ++it) one.add(*it);
        CHECK(same_bits(one.value(), want));
        std::shuffle(v.begin(), v.end(), rng);
        std::vector<repro_sum<T>> parts(1 + rng() % 17);
        for (T x : v) parts[rng() % parts.size()].add(x);
        std::shuffle(parts.begin(), parts.end(), rng);
        while (parts.size() > 1) {  // a random merge tree
          const std::size_t i = rng() % (parts.size() - 1);
          parts[i].merge(parts[i + 1]);
          parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        }
        CHECK(same_bits(parts[0].value(), want));
        all.normalize();
        parts[0].normalize();              // a merge leaves it canonical; with one part there was none
        CHECK(same_bytes(parts[0], all));  // canonical: the same bytes
        CHECK(parts[0] == one);
      }
    }
  };
  check(0.0);
  check(0.0f);
}

TEST_CASE("repro_sum: merge is commutative and associative bit for bit") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    repro_sum<double> a, b, c;
    for (double x : badly_conditioned<double>(1 + rng() % 50, static_cast<unsigned>(trial))) a.add(x);
    for (double x : badly_conditioned<double>(1 + rng() % 50, static_cast<unsigned>(trial + 100))) b.add(x);
    for (double x : badly_conditioned<double>(1 + rng() % 50, static_cast<unsigned>(trial + 200))) c.add(x);
    if (trial % 3 == 0) c.add(std::numeric_limits<double>::infinity());
    repro_sum<double> ab = a, ba = b;
    ab.merge(b);
    ba.merge(a);
    CHECK(same_bytes(ab, ba));
    repro_sum<double> ab_c = ab, bc = b, a_bc = a;
    ab_c.merge(c);
    bc.merge(c);
    a_bc.merge(bc);
    CHECK(same_bytes(ab_c, a_bc));
    // Through the operator's kernel, as the executors call it (inout = in (+) inout).
    repro_sum<double> k = b;
    kernel_for(ops::repro_merge, datatype_of<repro_sum<double>>())(&a, &k, 1, ops::repro_merge.context);
    CHECK(same_bytes(k, ab));
  }
}

TEST_CASE("repro_sum: digits at their bound, 2^30 additions after a normalization, stay exact") {
  // Digits are normalized every 2^30 additions, before a digit (moved by less than 2^32 per
  // value) can pass 2^62. Rather than 2^30 additions, an accumulator is set to the state
  // 2^30 - 4 additions of x = (2^32 - 1) 2^(1280 - 1074) leave (one digit at
  // (2^30 - 4)(2^32 - 1), through the documented layout: a header of four 32-bit words, then
  // the digits); 64 more additions of x cross the threshold inside add(span).
  const double x = std::ldexp(4294967295.0, 1280 - 1074);
  const std::uint32_t before = (std::uint32_t{1} << 30) - 4;
  repro_sum<double> a;
  std::uint32_t header[4];
  std::memcpy(header, &a, sizeof header);
  header[2] = before;  // additions since the last normalization
  std::memcpy(&a, header, sizeof header);
  const std::int64_t digit = static_cast<std::int64_t>(before) * 4294967295;
  std::memcpy(reinterpret_cast<unsigned char*>(&a) + sizeof header + 40 * sizeof(std::int64_t), &digit, sizeof digit);
  header[1] = repro_sum<double>::other_seen;
  std::memcpy(&a, header, sizeof header);
  CHECK(same_bits(a.value(), static_cast<double>(before) * x));
  const std::vector<double> more(64, x);
  a.add(std::span<const double>(more));
  CHECK(a.canonical() == false);  // normalized at 2^30, then 60 more
  const double count = static_cast<double>(before) + 64;
  CHECK(same_bits(a.value(), count * x));  // the product rounded once: the exact sum rounded once
  a.normalize();
  CHECK(a.digits()[40] >= -(std::int64_t{1} << 31));  // balanced digits
  CHECK(a.digits()[40] < (std::int64_t{1} << 31));
}

// ---- special values --------------------------------------------------------------------------

TEST_CASE("repro_sum: infinities, NaN, overflow, zeros and subnormals") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto sum = [](std::vector<double> v) {
    repro_sum<double> a;
    a.add(std::span<const double>(v));
    return a.value();
  };
  CHECK(sum({1.0, inf, 2.0}) == inf);
  CHECK(sum({1.0, -inf}) == -inf);
  CHECK(std::isnan(sum({inf, -inf})));
  CHECK(std::isnan(sum({1.0, nan, 2.0})));
  CHECK(std::isnan(sum({inf, nan})));
  CHECK(std::isnan(sum({-nan})));
  // Overflow: only the final sum, rounded as IEEE says.
  CHECK(sum({DBL_MAX, DBL_MAX}) == inf);
  CHECK(sum({-DBL_MAX, -DBL_MAX}) == -inf);
  CHECK(sum({DBL_MAX, DBL_MAX, -DBL_MAX}) == DBL_MAX);  // a left-to-right sum gives inf
  const double half_ulp = 0x1p970;                      // half an ulp of DBL_MAX
  CHECK(sum({DBL_MAX, half_ulp}) == inf);               // the tie rounds to even: beyond
  CHECK(sum({DBL_MAX, half_ulp, -0x1p-1074}) == DBL_MAX);
  CHECK(sum({DBL_MAX, std::nextafter(half_ulp, 0.0)}) == DBL_MAX);
  // Zeros: -0 only when every value was -0, as IEEE addition gives.
  CHECK(std::signbit(sum({-0.0})));
  CHECK(std::signbit(sum({-0.0, -0.0})));
  CHECK(!std::signbit(sum({-0.0, 0.0})));
  CHECK(!std::signbit(sum({1.0, -1.0})));
  CHECK(!std::signbit(sum({})));
  // Subnormals: exact, and results in the subnormal range rounded correctly (here exact).
  CHECK(sum({0x1p-1074, 0x1p-1074, 0x1p-1074}) == 0x3p-1074);
  CHECK(sum({DBL_MIN, -0x1p-1074}) == std::nextafter(DBL_MIN, 0.0));
  CHECK(sum({0x1p-1022, -0x1p-1022, 0x1p-1074}) == 0x1p-1074);
  CHECK(sum({1.0, 0x1p-1074, -1.0}) == 0x1p-1074);
  // Ties to even, and the sticky bits far below.
  CHECK(sum({1.0, 0x1p-53}) == 1.0);
  CHECK(sum({1.0, 0x1p-53, 0x1p-1074}) == std::nextafter(1.0, 2.0));
  CHECK(sum({std::nextafter(1.0, 2.0), 0x1p-53}) == 1.0 + 0x1p-51);
  // The special values survive merges, on either side, in any order.
  repro_sum<double> a, b;
  a.add(inf);
  b.add(-inf);
  repro_sum<double> ab = a;
  ab.merge(b);
  CHECK(std::isnan(ab.value()));
  // float: rounded from the exact sum, not through double (which would round twice here).
  repro_sum<float> f;
  for (float x : {1.0f, 0x1p-24f, 0x1p-60f}) f.add(x);
  CHECK(f.value() == std::nextafter(1.0f, 2.0f));
  repro_sum<float> fo;
  for (float x : {FLT_MAX, FLT_MAX}) fo.add(x);
  CHECK(fo.value() == std::numeric_limits<float>::infinity());
  repro_sum<float> fs;
  for (float x : {0x1p-149f, 0x1p-149f}) fs.add(x);
  CHECK(fs.value() == 0x1p-148f);
}

TEST_CASE("repro_sum: special values through a collective, for every allreduce algorithm") {
  const double inf = std::numeric_limits<double>::infinity();
  struct special_case {
    std::vector<double> global;
    double want;
  };
  const std::vector<special_case> cases = {
      {{1.0, inf, 2.0, 3.0}, inf},
      {{1.0, -inf, 2.0, 3.0}, -inf},
      {{inf, 1.0, -inf, 3.0}, std::numeric_limits<double>::quiet_NaN()},
      {{1.0, std::numeric_limits<double>::quiet_NaN(), 2.0}, std::numeric_limits<double>::quiet_NaN()},
      {{DBL_MAX, DBL_MAX, 1.0, 2.0}, inf},
      {{DBL_MAX, DBL_MAX, -DBL_MAX, 1.0}, DBL_MAX},
      {{0x1p-1074, 0x1p-1074, 0x1p-1060, -0x1p-1060, 0x1p-1074}, 0x3p-1074},
      {{-0.0, -0.0, -0.0}, -0.0},
  };
  for (int p : {1, 2, 3, 5}) {
    const auto names = algorithms_for(collective::allreduce, p, 1, datatype_of<repro_sum<double>>());
    failures f;
    ranklab::run(
        p,
        [&](comm& c) {
          for (const special_case& sc : cases)
            for (split s : all_splits)
              for (const std::string& a : names) {
                const auto local = cut(sc.global, p, s);
                const double got = sum_reproducible(c, local[static_cast<std::size_t>(c.rank())], {a});
                const bool ok = std::isnan(sc.want) ? std::isnan(got) : same_bits(got, sc.want);
                if (!ok) f.add("p " + std::to_string(p) + " " + a + " " + name(s) + ": " + bits_of(got));
              }
        },
        mode_options("auto"));
    INFO(f.first);
    CHECK(f.count == 0);
  }
}

// ---- p-independence: the scalar global sum ---------------------------------------------------

namespace {

// sum_reproducible of `global` cut every way at p ranks with every allreduce algorithm, in
// one team: every result must be `want`, bit for bit.
template <class T>
int sum_everywhere(const std::vector<T>& global, T want, int p, const std::string& mode,
                   const std::vector<split>& splits = {std::begin(all_splits), std::end(all_splits)}) {
  const auto names = algorithms_for(collective::allreduce, p, 1, datatype_of<repro_sum<T>>());
  std::vector<std::vector<std::vector<T>>> locals;
  for (split s : splits) locals.push_back(cut(global, p, s));
  failures f;
  ranklab::run(
      p,
      [&](comm& c) {
        for (std::size_t s = 0; s < splits.size(); ++s)
          for (const std::string& a : names) {
            const T got = sum_reproducible(c, locals[s][static_cast<std::size_t>(c.rank())], {a});
            if (!same_bits(got, want))
              f.add("p " + std::to_string(p) + " " + mode + " " + a + " " + name(splits[s]) + ": got " + bits_of(got) +
                    " want " + bits_of(want));
          }
      },
      mode_options(mode));
  if (f.count) MESSAGE(f.first);
  return f.count;
}

}  // namespace

TEST_CASE("sum_reproducible: p = 1..64, every split, every allreduce algorithm, automatic execution") {
  const std::vector<double> global = badly_conditioned<double>(3000, 11);
  const double want = exact(global);
  // The data is ill-conditioned: the plain sum misses the exact one.
  CHECK(!same_bits(std::accumulate(global.begin(), global.end(), 0.0), want));
  // Every one-ported allreduce algorithm takes a 552-byte element (the shared-memory slots
  // one only small ones).
  CHECK(algorithms_for(collective::allreduce, 8, 1, datatype_of<repro_sum<double>>()).size() >= 9);
  for (int p = 1; p <= 64; ++p) {
    INFO("p = " << p);
    CHECK(sum_everywhere(global, want, p, "auto") == 0);
  }
}

TEST_CASE("sum_reproducible: threads, fibers and deterministic fibers give the same bits") {
  const std::vector<double> global = badly_conditioned<double>(2000, 12);
  const double want = exact(global);
  for (int p : {1, 2, 3, 4, 7, 8}) CHECK(sum_everywhere(global, want, p, "threads") == 0);
  for (int p : {3, 16, 33, 64}) CHECK(sum_everywhere(global, want, p, "fibers") == 0);
  for (int p : {2, 5, 13, 64}) CHECK(sum_everywhere(global, want, p, "deterministic") == 0);
  const std::vector<float> fglobal = badly_conditioned<float>(2000, 13);
  const float fwant = exact(fglobal);
  for (int p : {1, 3, 8, 17}) CHECK(sum_everywhere(fglobal, fwant, p, "auto") == 0);
}

TEST_CASE("sum_reproducible: 1 and 10^6 values") {
  const std::vector<double> single{-0x1.23456789abcdep-1070};
  for (int p : {1, 4, 64}) CHECK(sum_everywhere(single, single[0], p, "auto") == 0);
  const std::vector<double> global = badly_conditioned<double>(1000000, 14);
  const double want = exact(global);
  for (int p : {1, 7, 64}) CHECK(sum_everywhere(global, want, p, "auto", {split::blocks, split::uneven}) == 0);
}

TEST_CASE("sum_reproducible: the sequential executor, every allreduce algorithm, p = 1..64") {
  // The schedules run by execute_sequential on accumulators: the same bits as the threads.
  const std::vector<double> global = badly_conditioned<double>(1500, 15);
  const double want = exact(global);
  const datatype t = datatype_of<repro_sum<double>>();
  int schedules = 0;
  for (int p = 1; p <= 64; p += (p < 12 ? 1 : 7)) {
    for (split s : all_splits) {
      const auto local = cut(global, p, s);
      std::vector<repro_sum<double>> in(static_cast<std::size_t>(p));
      for (int r = 0; r < p; ++r) {
        in[r].add(std::span<const double>(local[r]));
        in[r].normalize();
      }
      for (const std::string& a : algorithms_for(collective::allreduce, p, 1, t)) {
        const algorithm* alg = registry::find(collective::allreduce, a);
        if (!alg->one_ported) continue;  // the shared-memory ones run on threads only
        const call c = make_call(collective::allreduce, p, 1, 0, t, ops::repro_merge, {a});
        std::vector<repro_sum<double>> out(static_cast<std::size_t>(p));
        std::vector<rank_buffers> bufs;
        for (int r = 0; r < p; ++r) bufs.push_back({&in[r], &out[r]});
        execute_sequential(build_all(*alg, c.args), bufs, t, ops::repro_merge);
        ++schedules;
        for (int r = 0; r < p; ++r) {
          INFO("p " << p << " " << a << " " << name(s) << " rank " << r);
          CHECK(same_bits(out[r].value(), want));
          CHECK(same_bytes(out[r], out[0]));
        }
      }
    }
  }
  CHECK(schedules > 16 * 4 * 6);
}

// ---- element-wise ----------------------------------------------------------------------------

namespace {

// `k` badly conditioned columns: column i is a global array of its own, cut among the ranks
// (every rank holds a share of every column; shares differ in length, so a rank's element i
// is the accumulator of its share).
struct columns {
  std::vector<std::vector<double>> global;  // [column]
  std::vector<double> want;                 // exact, per column
};
columns make_columns(std::size_t k, std::size_t per_column, unsigned seed) {
  columns c;
  for (std::size_t i = 0; i < k; ++i) {
    c.global.push_back(badly_conditioned<double>(per_column, seed + static_cast<unsigned>(i)));
    c.want.push_back(exact(c.global.back()));
  }
  return c;
}
// Rank r's accumulators, one per column: its share under split s.
std::vector<std::vector<repro_sum<double>>> shares(const columns& cols, int p, split s) {
  std::vector<std::vector<repro_sum<double>>> acc(static_cast<std::size_t>(p),
                                                  std::vector<repro_sum<double>>(cols.global.size()));
  for (std::size_t i = 0; i < cols.global.size(); ++i) {
    const auto local = cut(cols.global[i], p, s, static_cast<unsigned>(i));
    for (int r = 0; r < p; ++r) {
      acc[r][i].add(std::span<const double>(local[r]));
      acc[r][i].normalize();
    }
  }
  return acc;
}

}  // namespace

TEST_CASE(
    "element-wise allreduce of accumulators (blocking, nonblocking in place, persistent): identical bytes across "
    "algorithms, splits and p") {
  const columns cols = make_columns(37, 120, 40);
  const datatype t = datatype_of<repro_sum<double>>();
  // The canonical bytes of each column's whole sum: what every merge must end with.
  std::vector<repro_sum<double>> whole(cols.global.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    whole[i].add(std::span<const double>(cols.global[i]));
    whole[i].normalize();
  }
  for (int p : {1, 2, 3, 4, 6, 8, 11, 16, 24, 32}) {
    const auto names = algorithms_for(collective::allreduce, p, cols.global.size(), t);
    std::vector<std::vector<std::vector<repro_sum<double>>>> in;
    for (split s : all_splits) in.push_back(shares(cols, p, s));
    failures f;
    ranklab::run(
        p,
        [&](comm& c) {
          const auto r = static_cast<std::size_t>(c.rank());
          for (std::size_t s = 0; s < in.size(); ++s)
            for (const std::string& a : names) {
              std::vector<repro_sum<double>> out(cols.global.size());
              c.allreduce(in[s][r], out, ops::repro_merge, {a});
              int wrong = 0;
              for (std::size_t i = 0; i < out.size(); ++i)
                wrong += !same_bits(out[i].value(), cols.want[i]) || !same_bytes(out[i], whole[i]);
              if (wrong)
                f.add(a + " " + name(all_splits[s]) + " rank " + std::to_string(r) + ": " + std::to_string(wrong) +
                      " elements");
              // In place, nonblocking.
              std::vector<repro_sum<double>> io = in[s][r];
              c.iallreduce(io, ops::repro_merge, {a}).wait();
              wrong = 0;
              for (std::size_t i = 0; i < io.size(); ++i) wrong += !same_bytes(io[i], whole[i]);
              if (wrong)
                f.add(a + " in place " + name(all_splits[s]) + " rank " + std::to_string(r) + ": " +
                      std::to_string(wrong) + " elements");
              // Persistent, started twice.
              std::vector<repro_sum<double>> po(cols.global.size());
              auto pr = c.allreduce_init(in[s][r], po, ops::repro_merge, {a});
              for (int run = 0; run < 2; ++run) {
                pr.start();
                pr.wait();
                wrong = 0;
                for (std::size_t i = 0; i < po.size(); ++i) wrong += !same_bytes(po[i], whole[i]);
                if (wrong) f.add(a + " persistent " + name(all_splits[s]) + " rank " + std::to_string(r));
              }
            }
        },
        mode_options("auto"));
    INFO("p = " << p << "\n" << f.first);
    CHECK(f.count == 0);
  }
}

TEST_CASE("element-wise reduce, reduce_scatter_block, reduce_scatter and scan: every algorithm, identical bits") {
  const datatype t = datatype_of<repro_sum<double>>();
  for (int p : {1, 2, 3, 5, 8, 13}) {
    const std::size_t block = 3;
    const columns cols = make_columns(block * static_cast<std::size_t>(p), 60, 70 + static_cast<unsigned>(p));
    const std::size_t k = cols.global.size();
    std::vector<std::vector<std::vector<repro_sum<double>>>> in;
    for (split s : {split::blocks, split::uneven, split::last_rank}) in.push_back(shares(cols, p, s));
    // Scan's reference: rank r's prefix is the exact sum of ranks 0..r's shares, which is
    // the merge of their accumulators; checked against the exact reference below.
    const auto reduce_names = algorithms_for(collective::reduce, p, k, t);
    const auto rsb_names = algorithms_for(collective::reduce_scatter_block, p, block, t);
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), block);
    const call rs = make_vcall(collective::reduce_scatter, p, counts, {}, 0, t, ops::repro_merge);
    std::vector<std::string> rs_names;
    for (const algorithm* a : registry::for_collective(collective::reduce_scatter))
      if (meets_preconditions(*a, rs.args)) rs_names.emplace_back(a->name);
    const auto scan_names = algorithms_for(collective::scan, p, k, t);
    std::atomic<int> wrong{0}, runs{0};
    ranklab::run(
        p,
        [&](comm& c) {
          const auto r = static_cast<std::size_t>(c.rank());
          for (std::size_t s = 0; s < in.size(); ++s) {
            const auto& mine = in[s][r];
            for (const std::string& a : reduce_names)
              for (int root : {0, p - 1}) {
                std::vector<repro_sum<double>> out(c.rank() == root ? k : 0);
                c.reduce(mine, out, ops::repro_merge, root, {a});
                for (std::size_t i = 0; i < out.size(); ++i) wrong += !same_bits(out[i].value(), cols.want[i]);
                ++runs;
              }
            for (const std::string& a : rsb_names) {
              std::vector<repro_sum<double>> out(block);
              c.reduce_scatter_block(mine, out, ops::repro_merge, {a});
              for (std::size_t i = 0; i < block; ++i) wrong += !same_bits(out[i].value(), cols.want[r * block + i]);
              ++runs;
            }
            for (const std::string& a : rs_names) {
              std::vector<repro_sum<double>> out(block);
              c.reduce_scatter(mine, out, counts, ops::repro_merge, {a});
              for (std::size_t i = 0; i < block; ++i) wrong += !same_bits(out[i].value(), cols.want[r * block + i]);
              ++runs;
            }
            // Scan: every algorithm gives the same bytes as merging ranks 0..r's accumulators
            // one by one here, and the last rank's prefix is the whole sum.
            std::vector<repro_sum<double>> prefix(k);
            for (std::size_t q = 0; q <= r; ++q)
              for (std::size_t i = 0; i < k; ++i) prefix[i].merge(in[s][q][i]);
            for (const std::string& a : scan_names) {
              std::vector<repro_sum<double>> out(k);
              c.scan(mine, out, ops::repro_merge, {a});
              for (std::size_t i = 0; i < k; ++i) {
                wrong += !same_bytes(out[i], prefix[i]);
                if (static_cast<int>(r) == p - 1) wrong += !same_bits(out[i].value(), cols.want[i]);
              }
              ++runs;
            }
          }
        },
        mode_options("auto"));
    INFO("p = " << p);
    CHECK(wrong == 0);
    CHECK(runs > 0);
  }
}

TEST_CASE("element-wise helpers: to_repro, from_repro and the *_reproducible forms on doubles and floats") {
  for (int p : {1, 3, 4, 9}) {
    const std::size_t k = 24;
    // Element i of rank r: a value of a per-element global array of p values (one per rank).
    std::vector<std::vector<double>> per_elem(k);
    std::mt19937_64 rng(static_cast<unsigned>(p));
    for (auto& e : per_elem) {
      e = badly_conditioned<double>(static_cast<std::size_t>(p), static_cast<unsigned>(rng()));
    }
    std::vector<double> want(k), want_prefix_last(k);
    for (std::size_t i = 0; i < k; ++i) want[i] = exact(per_elem[i]);
    std::atomic<int> wrong{0};
    ranklab::run(
        p,
        [&](comm& c) {
          const auto r = static_cast<std::size_t>(c.rank());
          std::vector<double> mine(k), out(k);
          std::vector<float> fmine(k), fout(k);
          for (std::size_t i = 0; i < k; ++i) {
            mine[i] = per_elem[i][r];
            fmine[i] = static_cast<float>(i + r) * 0.1f;
          }
          allreduce_reproducible(c, mine, out);
          for (std::size_t i = 0; i < k; ++i) wrong += !same_bits(out[i], want[i]);
          std::vector<double> io = mine;
          allreduce_reproducible(c, io, io);  // in and out the same buffer
          for (std::size_t i = 0; i < k; ++i) wrong += !same_bits(io[i], want[i]);
          std::vector<double> at_root(c.rank() == p - 1 ? k : 0);
          reduce_reproducible(c, mine, at_root, p - 1);
          for (std::size_t i = 0; i < at_root.size(); ++i) wrong += !same_bits(at_root[i], want[i]);
          std::vector<double> big(k * static_cast<std::size_t>(p)), part(k);
          for (std::size_t b = 0; b < static_cast<std::size_t>(p); ++b)
            for (std::size_t i = 0; i < k; ++i) big[b * k + i] = per_elem[i][r];
          reduce_scatter_block_reproducible(c, big, part);
          for (std::size_t i = 0; i < k; ++i) wrong += !same_bits(part[i], want[i]);
          std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), k);
          std::vector<double> part2(k);
          reduce_scatter_reproducible(c, big, part2, counts);
          for (std::size_t i = 0; i < k; ++i) wrong += !same_bits(part2[i], want[i]);
          std::vector<double> pre(k);
          scan_reproducible(c, mine, pre);
          for (std::size_t i = 0; i < k; ++i) {
            std::vector<double> head(per_elem[i].begin(), per_elem[i].begin() + static_cast<std::ptrdiff_t>(r) + 1);
            wrong += !same_bits(pre[i], exact(head));
          }
          allreduce_reproducible(c, fmine, fout);
          for (std::size_t i = 0; i < k; ++i) {
            std::vector<float> col;
            for (int q = 0; q < p; ++q) col.push_back(static_cast<float>(i + static_cast<std::size_t>(q)) * 0.1f);
            wrong += !same_bits(fout[i], exact(col));
          }
          // The scalar float sum, and the accumulator form.
          const float fs = sum_reproducible(c, fmine);
          std::vector<float> all;
          for (int q = 0; q < p; ++q)
            for (std::size_t i = 0; i < k; ++i)
              all.push_back(static_cast<float>(i + static_cast<std::size_t>(q)) * 0.1f);
          wrong += !same_bits(fs, exact(all));
          const repro_sum<float> facc = sum_reproducible_accumulator(c, fmine);
          wrong += !same_bits(facc.value(), fs);
        },
        mode_options("auto"));
    INFO("p = " << p);
    CHECK(wrong == 0);
  }
  // The conversions alone.
  const std::vector<double> v = badly_conditioned<double>(200, 3);
  const auto acc = to_repro(std::span<const double>(v));
  std::vector<double> back(v.size());
  from_repro(std::span<const repro_sum<double>>(acc), std::span<double>(back));
  CHECK(std::memcmp(back.data(), v.data(), v.size() * sizeof(double)) == 0);
  for (std::size_t i = 0; i < v.size(); ++i) {
    CHECK(acc[i].canonical());
    CHECK(acc[i].last_digit() - acc[i].first_digit() <= 3);  // sparse, either sign
    CHECK(same_bytes(acc[i], repro_sum<double>::of(v[i])));
    repro_sum<double> reused = acc[(i + 1) % v.size()];
    reused.assign(v[i]);
    CHECK(same_bytes(reused, acc[i]));
    repro_sum<double> slow;
    slow.add(v[i]);
    slow.normalize();
    CHECK(same_bytes(acc[i], slow));
  }
}

// ---- misuse ----------------------------------------------------------------------------------

TEST_CASE("repro_merge: elements that are not accumulators, and mismatched lengths") {
  const std::string err = testing::error_of([] {
    ranklab::run(2, [](comm& c) {
      std::vector<double> a(4, 1.0), b(4, 2.0);  // each rank's own
      c.allreduce(a, b, ops::repro_merge);
    });
  });
  CHECK(testing::contains(err, "repro_sum"));
  // A double accumulator merged with a float one: refused, not misread.
  repro_sum<double> d(1.0);
  repro_sum<float> f(1.0f);
  unsigned char raw[sizeof(repro_sum<double>)] = {};
  std::memcpy(raw, &f, sizeof f);
  CHECK(!detail::repro_merge_elements(raw, &d, 1));
  std::vector<double> three(3);
  std::vector<repro_sum<double>> two(2);
  CHECK(testing::contains(testing::error_of([&] { to_repro(std::span<const double>(three), std::span(two)); }),
                          "usage_error"));
}
