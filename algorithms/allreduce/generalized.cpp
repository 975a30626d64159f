// Allreduce, the generalized algorithm of D. Kolmakov and X. Zhang, "A Generalization of the
// Allreduce Operation", with the cyclic group T_P = <shift by 1>, for any p (prime too) and
// r = a.params.removed_steps removed distribution steps, 0 <= r <= L = ceil(log2 p):
//   r = 0: bandwidth-optimal: L reduction steps, in step i the upper floor(N_i/2)
//          distributed vectors move by -floor(N_i/2) (every rank sends to r - floor(N_i/2),
//          receives from r + floor(N_i/2)) and are combined with the lower ones, N_0 = p,
//          N_{i+1} = ceil(N_i/2); then the reverse without combining. 2L rounds, 2(p-1)
//          parts of m/p sent per rank, no final data shift. For p a power of two this is
//          recursive halving + doubling step for step.
//   0 < r < L: the reduction phase produces K = N_{L-r} <= 2^r result vectors by running the
//          K shifted copies of the reduction schedule at once (shared vectors are sent and
//          combined once), and the first r distribution steps disappear: 2L - r rounds,
//          2(p-1) + (L-1)(K-1) parts sent (the paper's equation (36), whose worst case
//          assumes 2^r results, for the bound; equal when p is a power of two).
//   r = L: latency-optimal (equation (44)): L rounds, p L parts sent (for p a power of two,
//          recursive doubling's rounds and volume).
// r = -1 chooses r by equation (37) with the default cost model and m = count * elem_size.
// Parts are combined in an order fixed by the schedule but not by rank (cyclic shifts):
// commutative operators only; results are deterministic (bitwise the same every run).
//
// Notation (see docs/algorithms.md, "allreduce"): the vector is split into P parts; the
// distributed vector "at placement a" holds part c at rank c + a (mod P). At the start rank
// j's own vector gives P distributed vectors, placement a holding x_{c+a}'s part c.
// Reduction step i with N_i vectors at placements s .. s + N_i - 1 moves the upper
// floor(N_i/2) by -floor(N_i/2) and combines them with the lower ones; N_{i+1} =
// ceil(N_i/2), L = ceil(log2 P) steps. The schedule "for shift s" ends with the full result
// at placement s. Removing r distribution steps needs K = N_{L-r} results (placements
// 0 .. K-1, K <= 2^r), i.e. the K shifted schedules at once: vectors shared between shifts
// are sent and combined once. In step i all shifts' vectors are of two kinds: index 0 of a
// shift (placements [0, K)), the "q*" of the paper, and the others, which are all the same
// set of original vectors translated to their placement. While every N_0 .. N_{i-1} was
// even the two kinds coincide ("merged").
// Storage: the receive buffer holds every placement's part (part j - a of the vector at
// placement a); vectors of the other kind at the same placement, and received parts that
// cannot be combined in place, use up to two scratch buffers of m.
// Rounds: 2L - r. Cost: (2L - r) alpha + V m/p beta + C m/p gamma, V and C the parts one
// rank sends and combines (exact_volume).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "patterns/rank_arithmetic.hpp"
#include "patterns/reduce_blocks.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

// ---- the shape of the schedule (rank independent) and the paper's cost formulas ----------

int levels(int p) { return detail::ceil_log2(static_cast<std::uint64_t>(p)); }

struct shape {
  int p = 1, L = 0, r = 0, K = 1;
  std::vector<int> N;  // N[0] = p, N[i+1] = ceil(N[i]/2), N[L] = 1
};

shape make_shape(int p, int r) {
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
  std::vector<int> sent;      // placements y, message order
  std::vector<char> is_sent;  // by placement
  std::vector<char> new_r;    // by placement
};

step_sets sets_of(const shape& s, int i) {
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
volume exact_volume(int p, int r) {
  const shape s = make_shape(p, r);
  volume v;
  bool merged = true;
  for (int i = 0; i < s.L; ++i) {
    const step_sets t = sets_of(s, i);
    v.sent += t.sent.size();
    for (int y : t.sent) {
      const int x = detail::mod(y - t.fl, p);
      const bool zc = !t.odd && x < s.K, rc = t.new_r[static_cast<std::size_t>(x)] != 0;
      v.combined += merged ? 1 : static_cast<std::uint64_t>(zc) + static_cast<std::uint64_t>(rc);
    }
    if (t.odd) merged = false;
  }
  for (int i = s.L - r - 1; i >= 0; --i) v.sent += static_cast<std::uint64_t>(s.N[static_cast<std::size_t>(i)] / 2);
  return v;
}

// The paper's formulas, in parts u = m/p per rank.
double eq36_parts_beta(int p, int r) {
  const int L = levels(p);
  return 2.0 * (p - 1) + (std::ldexp(1.0, r) - 1) * (L - 1);
}
double eq36_parts_gamma(int p, int r) {
  const int L = levels(p);
  return (p - 1) + (std::ldexp(1.0, r) - 1) * (2.0 * L - 2);
}

// Time by (36) for r < L and (44) for r = L.
double paper_time(int p, int r, double bytes, const cost_model& m) {
  const int L = levels(p);
  if (p <= 1) return 0;
  const double u = bytes / p;
  if (r >= L) return L * m.alpha + p * L * u * m.beta + p * (2.0 * L - 2) * u * m.gamma;
  return (2.0 * L - r) * m.alpha + eq36_parts_beta(p, r) * u * m.beta + eq36_parts_gamma(p, r) * u * m.gamma;
}

// Equation (37): the r minimising (36), as a real number (+inf when it is unbounded).
double eq37(int p, double bytes, const cost_model& m) {
  const int L = levels(p);
  if (L <= 1 || bytes <= 0) return std::numeric_limits<double>::infinity();
  return std::log2(m.alpha / (bytes * (m.beta + 2 * m.gamma))) + std::log2(p / ((L - 1) * std::log(2.0)));
}

// r for removed_steps == -1. Equation (37) minimises (36), which is convex in r, over real
// r; (36) holds for 0 <= r < L, so the best integer there is the better of the two integers
// around (37) (clamped to 0 .. L-1). The latency-optimal r = L has its own cost (44) (the
// paper treats it separately and compares (25), (36), (44)): it wins when cheaper.
int auto_removed_steps(int p, double bytes, const cost_model& m) {
  const int L = levels(p);
  if (L <= 1) return L;
  const double x = eq37(p, bytes, m);
  int r;
  if (x <= 0)
    r = 0;
  else if (x >= L - 1)
    r = L - 1;
  else {
    const int lo = static_cast<int>(std::floor(x)), hi = lo + 1;
    r = paper_time(p, hi, bytes, m) < paper_time(p, lo, bytes, m) ? hi : lo;
  }
  return paper_time(p, L, bytes, m) < paper_time(p, r, bytes, m) ? L : r;
}

// ---- the builder -------------------------------------------------------------------------

int removed_steps(const coll_args& a, int rank) {
  const int L = levels(a.p);
  const int r = a.params.removed_steps;
  if (r == -1)
    return auto_removed_steps(a.p, static_cast<double>(a.count) * static_cast<double>(a.elem_size), cost_model{});
  if (r < 0 || r > L)
    throw usage_error(rank, "allreduce",
                      fmt::format("generalized: removed_steps {} outside 0..{} (ceil(log2 p) for p = {}); "
                                  "-1 chooses r by equation (37)",
                                  r, L, a.p));
  return r;
}

// Storage of one rank: layer 0 = the receive buffer, layers 1 and 2 = scratch buffers of
// m elements allocated on first use; the vector at placement x is part (rank - x) mod p.
class layers {
 public:
  layers(schedule& s, int rank, int p, std::uint64_t n)
      : s_(s), rank_(rank), p_(p), n_(n), parts_(detail::equal_split(n, p)) {}
  region at(int layer, int placement) {
    const detail::elem_range& c = parts_[static_cast<std::size_t>(detail::mod(rank_ - placement, p_))];
    return region{buffer(layer), c.offset, c.count};
  }

 private:
  buffer_id buffer(int layer) {
    if (layer == 0) return out_buffer;
    buffer_id& b = scratch_[layer - 1];
    if (b == 0) b = s_.scratch(n_);
    return b;
  }
  schedule& s_;
  int rank_, p_;
  std::uint64_t n_;
  std::vector<detail::elem_range> parts_;
  buffer_id scratch_[2] = {0, 0};
};

// What happens to the vector arriving at placement x.
struct arrival {
  int x = 0;
  enum kind { fused, temp, from_survivor, two } how = fused;
  int dst = 0;  // layer of the new vector (fused, temp, from_survivor)
  int tmp = 0;  // layer the message lands in (temp, two)
};

void reduction_step(schedule& s, layers& st, const shape& sh, int i, int rank, bool& merged) {
  const step_sets t = sets_of(sh, i);
  const int p = sh.p, K = sh.K;
  auto r_layer = [&](int x) { return merged ? 0 : (x < K ? 1 : 0); };  // where the R vector at x lives
  // Placements in decreasing order are parts in increasing order (part = rank - placement),
  // so neighbouring parts merge into few regions per message.
  const std::vector<int> sent(t.sent.rbegin(), t.sent.rend());
  std::vector<arrival> arr;
  bool all_fused = true;
  for (int y : sent) {
    arrival a;
    a.x = detail::mod(y - t.fl, p);
    const bool zc = !t.odd && a.x < K, rc = t.new_r[static_cast<std::size_t>(a.x)] != 0;
    const bool lower_sent = t.is_sent[static_cast<std::size_t>(a.x)] != 0;  // the R vector at x leaves now
    if (merged) {
      if (t.odd && a.x < K) {  // the lower vector stays (as this shift's q*): the new R goes to layer 1
        a.how = arrival::from_survivor;
        a.dst = 1;
      } else {
        a.dst = 0;
        a.how = lower_sent ? arrival::temp : arrival::fused;
        a.tmp = 1;
      }
    } else if (zc && rc) {  // one arrival, two combinations (the paper's 2u extra computation)
      a.how = arrival::two;
      a.tmp = 2;
    } else if (zc) {  // Z vectors are never sent
      a.how = arrival::fused;
      a.dst = 0;
      a.tmp = 2;
    } else {
      a.dst = r_layer(a.x);
      a.how = lower_sent ? arrival::temp : arrival::fused;
      a.tmp = a.x < K ? 2 : 1;
    }
    all_fused = all_fused && a.how == arrival::fused;
    arr.push_back(a);
  }
  // One combine mode per message: unless every arrival can be reduced in place, all land in
  // free slots and are combined after the round.
  if (!all_fused)
    for (arrival& a : arr)
      if (a.how == arrival::fused) a.how = arrival::temp;

  s.next_round();
  detail::region_list out, in;
  for (int y : sent) out.add(st.at(r_layer(y), y));
  for (const arrival& a : arr) {
    switch (a.how) {
      case arrival::fused:
        in.add(st.at(a.dst, a.x));
        break;
      case arrival::from_survivor:
        in.add(st.at(a.dst, a.x));
        break;
      case arrival::temp:
      case arrival::two:
        in.add(st.at(a.tmp, a.x));
        break;
    }
  }
  const int to = detail::mod(rank - t.fl, p), from = detail::mod(rank + t.fl, p);
  detail::send_list(s, to, out);
  detail::recv_list(s, from, in, all_fused ? combine::reduce_in_right : combine::copy);  // lower (+) arriving
  for (const arrival& a : arr) {
    switch (a.how) {
      case arrival::fused:
        break;
      case arrival::temp:
        s.reduce(st.at(a.tmp, a.x), st.at(a.dst, a.x), combine::reduce_in_right);
        break;
      case arrival::from_survivor:
        s.reduce(st.at(0, a.x), st.at(a.dst, a.x), combine::reduce_in_left);
        break;
      case arrival::two:
        s.reduce(st.at(a.tmp, a.x), st.at(0, a.x), combine::reduce_in_right);
        s.reduce(st.at(a.tmp, a.x), st.at(1, a.x), combine::reduce_in_right);
        break;
    }
  }
  if (t.odd) merged = false;
}

// Reverse of reduction step i without combining: placements [N mod 2, ce) are copied to
// [ce, N) (rank j sends to j + fl, receives from j - fl); all in the receive buffer.
void distribution_step(schedule& s, layers& st, const shape& sh, int i, int rank) {
  const int n = sh.N[static_cast<std::size_t>(i)], fl = n / 2, ce = n - fl, p = sh.p;
  s.next_round();
  detail::region_list out, in;
  for (int a = ce - 1; a >= n % 2; --a) {  // decreasing placements: increasing parts
    out.add(st.at(0, a));
    in.add(st.at(0, a + fl));
  }
  detail::send_list(s, detail::mod(rank + fl, p), out);
  detail::recv_list(s, detail::mod(rank - fl, p), in, combine::copy);
}

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const int r = removed_steps(a, rank);
  // Every initial vector is part of this rank's own vector: start from a copy in the receive
  // buffer (skipped in place), so the send buffer is never read again.
  detail::own_vector_in_out(s, n);
  if (a.p == 1) return s;
  const shape sh = make_shape(a.p, r);
  layers st(s, rank, a.p, n);
  bool merged = true;
  for (int i = 0; i < sh.L; ++i) reduction_step(s, st, sh, i, rank, merged);
  for (int i = sh.L - r - 1; i >= 0; --i) distribution_step(s, st, sh, i, rank);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const int L = levels(a.p);
  int r = a.params.removed_steps;
  const double bytes = static_cast<double>(a.count * elem);
  if (r == -1) r = auto_removed_steps(a.p, bytes, cost_model{});
  r = std::clamp(r, 0, L);
  const volume v = exact_volume(a.p, r);
  const double u = bytes / a.p;
  return (2 * L - r) * m.alpha + static_cast<double>(v.sent) * u * m.beta +
         static_cast<double>(v.combined) * u * m.gamma;
}

const algorithm info{
    .name = "generalized",
    .coll = collective::allreduce,
    .summary =
        "generalized allreduce (Kolmakov-Zhang, cyclic group), any p incl. prime, r removed steps "
        "(removed_steps param; -1: equation 37): 2 ceil(log2 p) - r rounds, volume of equation 36 "
        "(r = 0: bandwidth-optimal 2(p-1)m/p; r = ceil(log2 p): latency-optimal); commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
