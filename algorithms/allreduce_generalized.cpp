// Allreduce, the generalized algorithm of Kolmakov and Zhang (seed 002, "A Generalization of
// the Allreduce Operation") with the cyclic group T_P = <shift by 1>, for any p (prime too)
// and r = a.params.removed_steps removed distribution steps, 0 <= r <= L = ceil(log2 p):
//   r = 0: bandwidth-optimal (section 7): L reduction steps, in step i the upper
//          floor(N_i/2) distributed vectors move by -floor(N_i/2) (every rank sends to
//          r - floor(N_i/2), receives from r + floor(N_i/2)) and are combined with the lower
//          ones, N_0 = p, N_{i+1} = ceil(N_i/2); then the reverse without combining. 2L
//          rounds, 2(p-1) parts of m/p sent per rank, no final data shift. For p a power of
//          two this is recursive halving + doubling step for step.
//   0 < r < L (section 8): the reduction phase produces K = N_{L-r} <= 2^r result vectors by
//          running the K shifted copies of the reduction schedule at once (shared vectors are
//          sent and combined once), and the first r distribution steps disappear: 2L - r
//          rounds, 2(p-1) + (L-1)(K-1) parts sent (equation (36), whose worst case assumes
//          2^r results, for the bound; equal when p is a power of two).
//   r = L: latency-optimal (section 9, equation (44)): L rounds, p L parts sent (for p a
//          power of two, recursive doubling's rounds and volume).
// r = -1 chooses r by equation (37) with the default cost model and m = count * elem_size
// (detail/generalized_allreduce_util.hpp). Parts are combined in an order fixed by the
// schedule but not by rank (cyclic shifts): commutative operators only; results are
// deterministic (bitwise the same every run).
// Storage: the receive buffer holds every placement's part (part j - a of the vector at
// placement a); vectors of the other kind at the same placement, and received parts that
// cannot be combined in place, use up to two scratch buffers of m.
// Rounds: 2L - r. Cost: (2L - r) alpha + V m/p beta + C m/p gamma, V and C as above.
#include <fmt/format.h>

#include <vector>

#include "patterns/generalized_allreduce_util.hpp"
#include "patterns/reduce_scatter_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

namespace gen = detail::generalized;
namespace rs = detail::rs;

int removed_steps(const coll_args& a, int rank) {
  const int L = gen::levels(a.p);
  const int r = a.params.removed_steps;
  if (r == -1)
    return gen::auto_removed_steps(a.p, static_cast<double>(a.count) * static_cast<double>(a.elem_size), cost_model{});
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
  layers(schedule& s, int rank, int p, std::uint64_t n) : s_(s), rank_(rank), p_(p), n_(n), parts_(rs::equal_split(n, p)) {}
  region at(int layer, int placement) {
    const rs::span& c = parts_[static_cast<std::size_t>(detail::mod(rank_ - placement, p_))];
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
  std::vector<rs::span> parts_;
  buffer_id scratch_[2] = {0, 0};
};

// What happens to the vector arriving at placement x.
struct arrival {
  int x = 0;
  enum kind { fused, temp, from_survivor, two } how = fused;
  int dst = 0;        // layer of the new vector (fused, temp, from_survivor)
  int tmp = 0;        // layer the message lands in (temp, two)
};

void reduction_step(schedule& s, layers& st, const gen::shape& sh, int i, int rank, bool& merged) {
  const gen::step_sets t = gen::sets_of(sh, i);
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
      case arrival::fused: in.add(st.at(a.dst, a.x)); break;
      case arrival::from_survivor: in.add(st.at(a.dst, a.x)); break;
      case arrival::temp:
      case arrival::two: in.add(st.at(a.tmp, a.x)); break;
    }
  }
  const int to = detail::mod(rank - t.fl, p), from = detail::mod(rank + t.fl, p);
  detail::send_list(s, to, out);
  detail::recv_list(s, from, in, all_fused ? combine::reduce_in_right : combine::copy);  // lower (+) arriving
  for (const arrival& a : arr) {
    switch (a.how) {
      case arrival::fused: break;
      case arrival::temp: s.reduce(st.at(a.tmp, a.x), st.at(a.dst, a.x), combine::reduce_in_right); break;
      case arrival::from_survivor: s.reduce(st.at(0, a.x), st.at(a.dst, a.x), combine::reduce_in_left); break;
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
void distribution_step(schedule& s, layers& st, const gen::shape& sh, int i, int rank) {
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
  s.copy(region{in_buffer, 0, n}, region{out_buffer, 0, n});
  if (a.p == 1) return s;
  const gen::shape sh = gen::make_shape(a.p, r);
  layers st(s, rank, a.p, n);
  bool merged = true;
  for (int i = 0; i < sh.L; ++i) reduction_step(s, st, sh, i, rank, merged);
  for (int i = sh.L - r - 1; i >= 0; --i) distribution_step(s, st, sh, i, rank);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const int L = gen::levels(a.p);
  int r = a.params.removed_steps;
  const double bytes = static_cast<double>(a.count * elem);
  if (r == -1) r = gen::auto_removed_steps(a.p, bytes, cost_model{});
  r = std::clamp(r, 0, L);
  const gen::volume v = gen::exact_volume(a.p, r);
  const double u = bytes / a.p;
  return (2 * L - r) * m.alpha + static_cast<double>(v.sent) * u * m.beta + static_cast<double>(v.combined) * u * m.gamma;
}

const algorithm info{
    .name = "generalized",
    .coll = collective::allreduce,
    .summary = "generalized allreduce (Kolmakov-Zhang, cyclic group), any p incl. prime, r removed steps "
               "(removed_steps param; -1: equation 37): 2 ceil(log2 p) - r rounds, volume of equation 36 "
               "(r = 0: bandwidth-optimal 2(p-1)m/p; r = ceil(log2 p): latency-optimal); commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
