// The sequential reference of thread_team_check: every rank computes, by itself, what each
// collective must leave in its own buffers. Rank r's input element i is a function of
// (r, i, salt) only, so a rank can compute any other rank's input without a message; the
// expected results are folds and copies of those inputs in rank order, written here from
// MPI's definitions and sharing nothing with ranklab's schedules or its own test data.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "ranklab/collective.hpp"

namespace team_check {

using ranklab::collective;
using counts = std::vector<std::uint64_t>;

// The map x -> a*x + b on uint32 (wrapping). Composition is associative but not
// commutative, so a reduction that combines ranks out of order gives another map; with odd
// multipliers a swapped pair changes the result almost surely.
struct affine {
  std::uint32_t a = 1, b = 0;
  friend bool operator==(const affine&, const affine&) = default;
};
// `first` applied, then `then`: the reduction's a (+) b with a from the lower rank.
inline affine compose(const affine& first, const affine& then) { return {then.a * first.a, then.a * first.b + then.b}; }

enum class elem { i32, f64, affine };
enum class reduction { sum, max, compose };

inline std::string_view name(elem e) {
  switch (e) {
    case elem::i32:
      return "int32";
    case elem::f64:
      return "float64";
    case elem::affine:
      return "affine";
  }
  return "?";
}
inline std::string_view name(reduction r) {
  switch (r) {
    case reduction::sum:
      return "sum";
    case reduction::max:
      return "max";
    case reduction::compose:
      return "compose (non-commutative)";
  }
  return "?";
}

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
inline std::uint64_t draw(int rank, std::uint64_t i, int salt) {
  return mix(mix((static_cast<std::uint64_t>(rank) << 32) ^ static_cast<std::uint32_t>(salt)) + i);
}

// Small integers (also as doubles): sums of 16 ranks stay exact in any order.
template <class T>
T value(int rank, std::uint64_t i, int salt);
template <>
inline std::int32_t value<std::int32_t>(int rank, std::uint64_t i, int salt) {
  return static_cast<std::int32_t>(draw(rank, i, salt) % 2001) - 1000;
}
template <>
inline double value<double>(int rank, std::uint64_t i, int salt) {
  return static_cast<double>(value<std::int32_t>(rank, i, salt));
}
template <>
inline affine value<affine>(int rank, std::uint64_t i, int salt) {
  const std::uint64_t d = draw(rank, i, salt);
  return {static_cast<std::uint32_t>(d) | 1u, static_cast<std::uint32_t>(d >> 32)};
}

// What an output holds before the call: never a value() (outside [-1000, 1000]; an even
// multiplier), so an element left unwritten shows.
template <class T>
T sentinel();
template <>
inline std::int32_t sentinel<std::int32_t>() {
  return -7777777;
}
template <>
inline double sentinel<double>() {
  return -0.5e9 - 0.25;
}
template <>
inline affine sentinel<affine>() {
  return {0, 0xA5A5A5A5u};
}

template <class T>
T combine(reduction r, const T& a, const T& b) {
  if constexpr (std::is_same_v<T, affine>) {
    return compose(a, b);
  } else {
    return r == reduction::max ? std::max(a, b) : a + b;
  }
}

inline std::string show(std::int32_t v) { return std::to_string(v); }
inline std::string show(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}
inline std::string show(const affine& v) { return "{" + std::to_string(v.a) + "," + std::to_string(v.b) + "}"; }

inline std::string show(const counts& c) {
  std::string s = "[";
  for (std::size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
  return s + "]";
}

// One collective call as every rank of a comm makes it.
struct spec {
  collective coll = collective::barrier;
  int p = 1;
  int root = 0;
  std::uint64_t count = 0;  // MPI's count: the buffer, or the per-rank block
  counts cnt;               // v-collectives: p entries; alltoallv p*p, row = sender
  counts displs;            // empty: packed in rank order
  bool in_place = false;    // allreduce, scan, exscan
  elem type = elem::i32;
  reduction red = reduction::sum;
  int salt = 0;
  std::string_view algorithm = "auto";  // the algorithm between processes (a literal)
};

inline std::string describe(const spec& s) {
  std::string d = std::string(ranklab::name(s.coll)) + "(p=" + std::to_string(s.p);
  if (ranklab::is_rooted(s.coll)) d += ", root=" + std::to_string(s.root);
  if (ranklab::has_vector_counts(s.coll)) {
    d += ", counts=" + show(s.cnt);
    if (!s.displs.empty()) d += ", displs=" + show(s.displs);
  } else if (s.coll != collective::barrier) {
    d += ", count=" + std::to_string(s.count);
  }
  if (s.coll != collective::barrier) d += ", " + std::string(name(s.type));
  if (ranklab::is_reduction(s.coll)) d += ", " + std::string(name(s.red));
  if (s.in_place) d += ", in place";
  if (s.algorithm != "auto") d += ", algorithm " + std::string(s.algorithm);
  return d + ", salt " + std::to_string(s.salt) + ")";
}

// Where rank r's block starts in a gathered/scattered layout, and how long the layout is.
inline std::uint64_t block_at(const counts& cnt, const counts& displs, int r) {
  if (!displs.empty()) return displs[static_cast<std::size_t>(r)];
  return std::accumulate(cnt.begin(), cnt.begin() + r, std::uint64_t{0});
}
inline std::uint64_t layout_extent(const counts& cnt, const counts& displs) {
  std::uint64_t end = 0;
  for (std::size_t r = 0; r < cnt.size(); ++r) end = std::max(end, block_at(cnt, displs, static_cast<int>(r)) + cnt[r]);
  return end;
}
// alltoallv: the row of sender i, and where the block for j starts in it.
inline std::uint64_t row_total(const counts& m, int p, int i) {
  std::uint64_t n = 0;
  for (int j = 0; j < p; ++j) n += m[static_cast<std::size_t>(i * p + j)];
  return n;
}
inline std::uint64_t row_offset(const counts& m, int p, int i, int j) {
  std::uint64_t n = 0;
  for (int k = 0; k < j; ++k) n += m[static_cast<std::size_t>(i * p + k)];
  return n;
}

// One rank's buffers for a call and what `out` must hold afterwards (`in` unused when empty;
// in place, `out` is also the input).
template <class T>
struct buffers {
  std::vector<T> in, out, expected;
};

template <class T>
std::vector<T> input_of(int r, std::uint64_t n, int salt) {
  std::vector<T> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = value<T>(r, i, salt);
  return v;
}

// in_0 (+) in_1 (+) ... (+) in_{last-1}, element-wise over n elements, in rank order.
template <class T>
std::vector<T> fold_of(const spec& s, int last, std::uint64_t n) {
  std::vector<T> acc = input_of<T>(0, n, s.salt);
  for (int r = 1; r < last; ++r)
    for (std::uint64_t i = 0; i < n; ++i) acc[i] = combine(s.red, acc[i], value<T>(r, i, s.salt));
  return acc;
}

template <class T>
buffers<T> make_buffers(const spec& s, int me) {
  const int p = s.p;
  const std::uint64_t n = s.count;
  const auto up = static_cast<std::uint64_t>(p);
  const auto mine = static_cast<std::size_t>(me);
  buffers<T> b;
  auto blank = [](std::uint64_t len) { return std::vector<T>(len, sentinel<T>()); };
  auto in = [&](int r, std::uint64_t len) { return input_of<T>(r, len, s.salt); };
  auto slice = [](const std::vector<T>& v, std::uint64_t at, std::uint64_t len) {
    return std::vector<T>(v.begin() + static_cast<std::ptrdiff_t>(at),
                          v.begin() + static_cast<std::ptrdiff_t>(at + len));
  };
  auto place = [](std::vector<T>& into, std::uint64_t at, const std::vector<T>& what) {
    std::copy(what.begin(), what.end(), into.begin() + static_cast<std::ptrdiff_t>(at));
  };
  switch (s.coll) {
    case collective::barrier:
      break;
    case collective::bcast:
      b.out = me == s.root ? in(s.root, n) : blank(n);
      b.expected = in(s.root, n);
      break;
    case collective::reduce:
      b.in = in(me, n);
      if (me == s.root) {  // the other ranks pass no output at all
        b.out = blank(n);
        b.expected = fold_of<T>(s, p, n);
      }
      break;
    case collective::allreduce:
    case collective::scan:
    case collective::exscan: {
      if (s.in_place) {
        b.out = in(me, n);
      } else {
        b.in = in(me, n);
        b.out = blank(n);
      }
      const int upto = s.coll == collective::allreduce ? p : s.coll == collective::scan ? me + 1 : me;
      // exscan: rank 0's out is left as it was (collectives.hpp; MPI: undefined).
      b.expected = upto == 0 ? b.out : fold_of<T>(s, upto, n);
      break;
    }
    case collective::allgather:
      b.in = in(me, n);
      b.out = blank(n * up);
      b.expected = blank(n * up);
      for (int r = 0; r < p; ++r) place(b.expected, n * static_cast<std::uint64_t>(r), in(r, n));
      break;
    case collective::allgatherv:
    case collective::gatherv: {
      b.in = in(me, s.cnt[mine]);
      if (s.coll == collective::gatherv && me != s.root) break;
      const std::uint64_t extent = layout_extent(s.cnt, s.displs);
      b.out = blank(extent);
      b.expected = blank(extent);  // gaps between blocks stay as they were
      for (int r = 0; r < p; ++r)
        place(b.expected, block_at(s.cnt, s.displs, r), in(r, s.cnt[static_cast<std::size_t>(r)]));
      break;
    }
    case collective::gather:
      b.in = in(me, n);
      if (me != s.root) break;
      b.out = blank(n * up);
      b.expected = blank(n * up);
      for (int r = 0; r < p; ++r) place(b.expected, n * static_cast<std::uint64_t>(r), in(r, n));
      break;
    case collective::reduce_scatter: {
      const std::uint64_t total = std::accumulate(s.cnt.begin(), s.cnt.end(), std::uint64_t{0});
      b.in = in(me, total);
      b.out = blank(s.cnt[mine]);
      b.expected = slice(fold_of<T>(s, p, total), block_at(s.cnt, {}, me), s.cnt[mine]);
      break;
    }
    case collective::reduce_scatter_block:
      b.in = in(me, n * up);
      b.out = blank(n);
      b.expected = slice(fold_of<T>(s, p, n * up), n * mine, n);
      break;
    case collective::scatter:
      if (me == s.root) b.in = in(s.root, n * up);
      b.out = blank(n);
      b.expected = slice(in(s.root, n * up), n * mine, n);
      break;
    case collective::scatterv: {
      const std::uint64_t extent = layout_extent(s.cnt, s.displs);
      if (me == s.root) b.in = in(s.root, extent);  // the gaps hold values too: none may arrive
      b.out = blank(s.cnt[mine]);
      b.expected = slice(in(s.root, extent), block_at(s.cnt, s.displs, me), s.cnt[mine]);
      break;
    }
    case collective::alltoall:
      b.in = in(me, n * up);
      b.out = blank(n * up);
      b.expected = blank(n * up);
      for (int r = 0; r < p; ++r)
        place(b.expected, n * static_cast<std::uint64_t>(r), slice(in(r, n * up), n * mine, n));
      break;
    case collective::alltoallv: {
      b.in = in(me, row_total(s.cnt, p, me));
      std::uint64_t received = 0;
      for (int r = 0; r < p; ++r) received += s.cnt[static_cast<std::size_t>(r * p + me)];
      b.out = blank(received);
      b.expected.reserve(received);
      for (int r = 0; r < p; ++r) {
        const std::vector<T> block = slice(in(r, row_total(s.cnt, p, r)), row_offset(s.cnt, p, r, me),
                                           s.cnt[static_cast<std::size_t>(r * p + me)]);
        b.expected.insert(b.expected.end(), block.begin(), block.end());
      }
      break;
    }
  }
  return b;
}

// Empty when `out` holds what is expected; else the first wrong element and how many are.
template <class T>
std::string difference(const buffers<T>& b) {
  if (b.out.size() != b.expected.size())
    return "output of " + std::to_string(b.out.size()) + " elements, expected " + std::to_string(b.expected.size());
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < b.out.size(); ++i)
    if (!(b.out[i] == b.expected[i]) && wrong++ == 0) first = i;
  if (wrong == 0) return {};
  return "element " + std::to_string(first) + " is " + show(b.out[first]) + ", expected " + show(b.expected[first]) +
         " (" + std::to_string(wrong) + " of " + std::to_string(b.out.size()) + " elements wrong)";
}

// Irregular v-counts with zeros (p entries), and an alltoallv matrix with zeros (p*p).
inline counts irregular_counts(int p, int salt, std::uint64_t scale = 1) {
  counts c(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) c[static_cast<std::size_t>(r)] = ((r + salt) * 7 % 5) * scale;  // 0..4
  return c;
}
inline counts one_rank_counts(int p, int hot, std::uint64_t n) {
  counts c(static_cast<std::size_t>(p), 0);
  c[static_cast<std::size_t>(hot)] = n;
  return c;
}
inline counts irregular_matrix(int p, int salt, std::uint64_t scale = 1) {
  counts m(static_cast<std::size_t>(p * p));
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) m[static_cast<std::size_t>(i * p + j)] = ((i * 3 + j * 5 + salt) % 4) * scale;
  return m;
}
// Displacements placing the blocks in reverse rank order with a one-element gap before each.
inline counts reversed_with_gaps(const counts& cnt) {
  counts d(cnt.size());
  std::uint64_t at = 0;
  for (std::size_t r = cnt.size(); r-- > 0;) {
    d[r] = at + 1;
    at += 1 + cnt[r];
  }
  return d;
}

}  // namespace team_check
