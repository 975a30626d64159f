// Allgather and allgatherv, Bruck's algorithm with radix k (Open MPI coll/base,
// `ompi_coll_base_allgather_intra_k_bruck`; J. Bruck et al., "Efficient Algorithms for
// All-to-All Communications in Multiport Message-Passing Systems", 1997). Rank r gathers the
// blocks in rotated order (position t holds block r + t mod p). Phase i (distance
// d = k^i, while d < p) lets rank r send positions [0, n_j) to r - j d and receive positions
// [j d, j d + n_j) from r + j d, for j = 1, ..., k-1 with j d < p, n_j = min(d, p - j d): after
// the phase the first k d positions (or all p) are filled. A final local rotation puts the
// blocks in rank order, as in ranklab's bruck. Radix k = algo_params::radix, default 2 (the
// radix Open MPI's own bruck and recursive-doubling fallback use); k = 2 is ranklab's bruck,
// k >= p the direct exchange with everyone.
// Open MPI posts the k-1 exchanges of a phase at once (k-1 ports): ceil(log_k p) rounds.
// One-ported here every exchange is a round: sum over phases of #{j < k : j k^i < p}, which
// is (k-1) log_k p for p = k^m and at most (k-1) ceil(log_k p).
// Cost: R alpha + beta N (p-1)/p (R: the one-ported rounds), plus a local copy of about N
// bytes for the rotation, N = bytes of the gathered result.
// See docs/algorithms.md, "allgather".
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "patterns/block_layout.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

constexpr int default_radix = 2;

int radix_of(const coll_args& a, int rank) {
  const int k = a.params.radix <= 0 ? default_radix : a.params.radix;
  if (k < 2) throw usage_error(rank, std::string(name(a.coll)), "k_bruck: radix 1 (need at least 2)");
  return k;
}

// One-ported rounds: one per exchange (distance j k^i < p).
int exchanges(int p, int k) {
  int n = 0;
  for (std::int64_t d = 1; d < p; d *= k)
    for (int j = 1; j < k && j * d < p; ++j) ++n;
  return n;
}

// out = [blocks r..p-1 | blocks 0..r-1] becomes rank order: the part after the seam moves to
// the front, through a scratch copy of the smaller part.
void unrotate(schedule& s, const detail::gathered_layout& L, int rank) {
  const std::uint64_t head = L.total() - L.offset(rank), tail = L.offset(rank);
  const buffer_id keep = s.scratch(std::min(head, tail));
  if (head <= tail) {
    s.copy(region{out_buffer, 0, head}, region{keep, 0, head});
    s.copy(region{out_buffer, head, tail}, region{out_buffer, 0, tail});
    s.copy(region{keep, 0, head}, region{out_buffer, tail, head});
  } else {
    s.copy(region{out_buffer, head, tail}, region{keep, 0, tail});
    s.copy(region{out_buffer, 0, head}, region{out_buffer, tail, head});
    s.copy(region{keep, 0, tail}, region{out_buffer, 0, tail});
  }
}

schedule build(const coll_args& a, int rank) {
  const int k = radix_of(a, rank);
  const detail::gathered_layout L(a);
  const buffer_extent e = buffer_extents(a, rank);
  schedule s(rank, a.p, e.in, e.out);
  const int p = a.p;
  std::vector<std::uint64_t> at(static_cast<std::size_t>(p) + 1, 0);  // rotated positions
  for (int t = 0; t < p; ++t) at[t + 1] = at[t] + L.count((rank + t) % p);
  const buffer_id rot = L.packed() ? out_buffer : s.scratch(L.total());
  auto positions = [&](std::int64_t lo, std::int64_t n) {
    return region{rot, at[lo], at[lo + n] - at[lo]};
  };
  s.copy(region{in_buffer, 0, L.count(rank)}, positions(0, 1));
  for (std::int64_t d = 1; d < p; d *= k) {
    for (int j = 1; j < k && j * d < p; ++j) {
      s.next_round();
      const std::int64_t n = std::min<std::int64_t>(d, p - j * d);
      detail::region_list msg;  // position 0 (own block) from in
      msg.add(region{in_buffer, 0, L.count(rank)});
      msg.add(positions(1, n - 1));
      send_list(s, detail::mod(rank - j * d, p), msg);
      s.recv(detail::mod(rank + j * d, p), positions(j * d, n));
    }
  }
  if (!L.packed()) {
    for (int t = 0; t < p; ++t) s.copy(positions(t, 1), L.block((rank + t) % p));
  } else if (rank != 0 && L.total() > 0) {
    unrotate(s, L, rank);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::gathered_cost(a, elem, m, exchanges(a.p, radix_of(a, no_rank)));
}

const algorithm info{
    .name = "k_bruck",
    .serves = {collective::allgather, collective::allgatherv},
    .summary =
        "Bruck with radix k (Open MPI k_bruck; radix param, default 2 = bruck): k-1 ports ceil(log_k p) rounds, "
        "one-ported (k-1) per phase, <= (k-1)ceil(log_k p); rounds alpha + beta N(p-1)/p",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
