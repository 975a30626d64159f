// The generalized allreduce of Kolmakov and Zhang (seed 002) with the cyclic group: shape of
// the schedule (rank independent), exact volumes, the paper's cost formulas (36), (44) and
// the choice of r by equation (37). Used by algorithms/allreduce_generalized.cpp and its tests.
//
// Notation (seed 002 sections 5-9, algorithms.md section 2): the vector is split into P
// parts; the distributed vector "at placement a" holds part c at rank c + a (mod P). At
// the start rank j's own vector gives P distributed vectors, placement a holding x_{c+a}'s
// part c. Reduction step i with N_i vectors at placements s .. s + N_i - 1 moves the upper
// floor(N_i/2) by -floor(N_i/2) (every rank sends to rank - floor(N_i/2)) and combines them
// with the lower ones; N_{i+1} = ceil(N_i/2), N_0 = P, L = ceil(log2 P) steps. The
// schedule "for shift s" ends with the full result at placement s. Removing r distribution
// steps needs K = N_{L-r} results (placements 0 .. K-1, K <= 2^r), i.e. the K shifted
// schedules at once: vectors shared between shifts are sent and combined once. In step i
// all shifts' vectors are of two kinds: index 0 of a shift (placements [0, K)), the "q*" of
// the paper, and the others, which are all the same set of original vectors translated to
// their placement. While every N_0 .. N_{i-1} was even the two kinds coincide ("merged").
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::detail::generalized {

inline int levels(int p) { return ceil_log2(static_cast<std::uint64_t>(p)); }

struct shape {
  int p = 1, L = 0, r = 0, K = 1;
  std::vector<int> N;  // N[0] = p, N[i+1] = ceil(N[i]/2), N[L] = 1
};

inline shape make_shape(int p, int r) {
  shape s;
  s.p = p;
  s.L = levels(p);
  s.r = r;
  s.N.push_back(p);
  for (int i = 0; i < s.L; ++i) s.N.push_back((s.N.back() + 1) / 2);
  s.K = s.N[static_cast<std::size_t>(s.L - r)];
  return s;
}

// Placement sets of reduction step i (all mod p). Vectors sent (R kind, each to rank -
// floor(N/2)), in message order: ce, ce+1, ..., length min(p, fl + K - 1).
// New R vectors after the step: 1, 2, ..., length min(p, ce + K - 2) (none when ce == 1).
// Z vectors: placements [0, K). Every received vector lands at y - fl and takes part in a
// Z combination (N even, x < K) and/or an R combination (x a new R placement).
struct step_sets {
  int n = 0, fl = 0, ce = 0;
  bool odd = false;
  std::vector<int> sent;        // placements y, message order
  std::vector<char> is_sent;    // by placement
  std::vector<char> new_r;      // by placement
};

inline step_sets sets_of(const shape& s, int i) {
  step_sets t;
  const int p = s.p, K = s.K;
  t.n = s.N[static_cast<std::size_t>(i)];
  t.fl = t.n / 2;
  t.ce = t.n - t.fl;
  t.odd = t.n % 2 == 1;
  t.is_sent.assign(static_cast<std::size_t>(p), 0);
  t.new_r.assign(static_cast<std::size_t>(p), 0);
  const int sent_len = std::min(p, t.fl + K - 1);
  for (int k = 0; k < sent_len; ++k) {
    const int y = (t.ce + k) % p;
    t.sent.push_back(y);
    t.is_sent[static_cast<std::size_t>(y)] = 1;
  }
  const int new_len = t.ce >= 2 ? std::min(p, t.ce + K - 2) : 0;
  for (int k = 0; k < new_len; ++k) t.new_r[static_cast<std::size_t>((1 + k) % p)] = 1;
  return t;
}

// Parts (of m/p) one rank sends and combines, exactly as the builder does.
struct volume {
  std::uint64_t sent = 0;
  std::uint64_t combined = 0;
};
inline volume exact_volume(int p, int r) {
  const shape s = make_shape(p, r);
  volume v;
  bool merged = true;
  for (int i = 0; i < s.L; ++i) {
    const step_sets t = sets_of(s, i);
    v.sent += t.sent.size();
    for (int y : t.sent) {
      const int x = mod(y - t.fl, p);
      const bool zc = !t.odd && x < s.K, rc = t.new_r[static_cast<std::size_t>(x)] != 0;
      v.combined += merged ? 1 : static_cast<std::uint64_t>(zc) + static_cast<std::uint64_t>(rc);
    }
    if (t.odd) merged = false;
  }
  for (int i = s.L - r - 1; i >= 0; --i) v.sent += static_cast<std::uint64_t>(s.N[static_cast<std::size_t>(i)] / 2);
  return v;
}

// The same in closed form: 2(p-1) + (L-1)(K-1) for r < L (equation (36) with K = N_{L-r}
// results instead of its worst case 2^r: equal when p is a power of two), p L for r = L
// (equation (44)).
inline std::uint64_t volume_parts(int p, int r) {
  const shape s = make_shape(p, r);
  if (p == 1) return 0;
  if (r == s.L) return static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(s.L);
  return 2 * static_cast<std::uint64_t>(p - 1) + static_cast<std::uint64_t>(s.L - 1) * static_cast<std::uint64_t>(s.K - 1);
}

// The paper's formulas, in parts u = m/p per rank.
inline double eq36_parts_beta(int p, int r) {
  const int L = levels(p);
  return 2.0 * (p - 1) + (std::ldexp(1.0, r) - 1) * (L - 1);
}
inline double eq36_parts_gamma(int p, int r) {
  const int L = levels(p);
  return (p - 1) + (std::ldexp(1.0, r) - 1) * (2.0 * L - 2);
}

// Time by (36) for r < L and (44) for r = L.
inline double paper_time(int p, int r, double bytes, const cost_model& m) {
  const int L = levels(p);
  if (p <= 1) return 0;
  const double u = bytes / p;
  if (r >= L) return L * m.alpha + p * L * u * m.beta + p * (2.0 * L - 2) * u * m.gamma;
  return (2.0 * L - r) * m.alpha + eq36_parts_beta(p, r) * u * m.beta + eq36_parts_gamma(p, r) * u * m.gamma;
}

// Equation (37): the r minimising (36), as a real number (+inf when it is unbounded).
inline double eq37(int p, double bytes, const cost_model& m) {
  const int L = levels(p);
  if (L <= 1 || bytes <= 0) return std::numeric_limits<double>::infinity();
  return std::log2(m.alpha / (bytes * (m.beta + 2 * m.gamma))) + std::log2(p / ((L - 1) * std::log(2.0)));
}

// r for removed_steps == -1. Equation (37) minimises (36), which is convex in r, over real
// r; (36) holds for 0 <= r < L, so the best integer there is the better of the two integers
// around (37) (clamped to 0 .. L-1). The latency-optimal r = L has its own cost (44) (the
// paper treats it separately and compares (25), (36), (44)): it wins when cheaper.
inline int auto_removed_steps(int p, double bytes, const cost_model& m) {
  const int L = levels(p);
  if (L <= 1) return L;
  const double x = eq37(p, bytes, m);
  int r;
  if (x <= 0) r = 0;
  else if (x >= L - 1) r = L - 1;
  else {
    const int lo = static_cast<int>(std::floor(x)), hi = lo + 1;
    r = paper_time(p, hi, bytes, m) < paper_time(p, lo, bytes, m) ? hi : lo;
  }
  return paper_time(p, L, bytes, m) < paper_time(p, r, bytes, m) ? L : r;
}

}  // namespace ranklab::detail::generalized
