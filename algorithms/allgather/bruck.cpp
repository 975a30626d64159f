// Allgather and allgatherv, Bruck's algorithm as implemented in LibNBC (A. D. Anenkov,
// "Implementation of J. Bruck's algorithm for the non-blocking Allgather operation in LibNBC").
// Rank i collects the blocks in rotated order (position t holds block i+t mod p): in step k it
// sends positions [0, n) to i - 2^k and receives positions [2^k, 2^k + n) from i + 2^k,
// n = min(2^k, p - 2^k), so every message is one contiguous piece of the rotated buffer and
// the last step sends only the blocks still missing (position 0, the rank's own block, goes
// out from the send buffer rather than from its copy). Finally the rotated buffer is turned into
// rank order by local copies, as LibNBC does: when the layout is packed the rotation happens in
// out itself (three copies through a scratch buffer of the smaller part); with displacements
// the rotated buffer is scratch and each block is copied to its place.
// Rounds: ceil(log2 p), any p. Cost: ceil(log2 p) alpha + beta N (p-1)/p, plus a local copy of
// about N bytes for the rotation, N = bytes of the gathered result.
// See docs/algorithms.md, "allgather".
#include <algorithm>
#include <cstdint>
#include <vector>

#include "patterns/block_layout.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

// Turns out = [blocks i..p-1 | blocks 0..i-1] = [A | B] into [B | A], i = rank.
void rotate_in_place(schedule& s, const detail::gathered_layout& L, int rank) {
  const std::uint64_t size_a = L.total() - L.offset(rank), size_b = L.offset(rank);
  const buffer_id tmp = s.scratch(std::min(size_a, size_b));
  if (size_a <= size_b) {
    s.copy(region{out_buffer, 0, size_a}, region{tmp, 0, size_a});
    s.copy(region{out_buffer, size_a, size_b}, region{out_buffer, 0, size_b});  // overlapping move
    s.copy(region{tmp, 0, size_a}, region{out_buffer, size_b, size_a});
  } else {
    s.copy(region{out_buffer, size_a, size_b}, region{tmp, 0, size_b});
    s.copy(region{out_buffer, 0, size_a}, region{out_buffer, size_b, size_a});  // overlapping move
    s.copy(region{tmp, 0, size_b}, region{out_buffer, 0, size_b});
  }
}

schedule build(const coll_args& a, int rank) {
  const detail::gathered_layout L(a);
  const buffer_extent e = buffer_extents(a, rank);
  schedule s(rank, a.p, e.in, e.out);
  const int p = a.p;
  // Offsets of the positions in the rotated buffer.
  std::vector<std::uint64_t> at(static_cast<std::size_t>(p) + 1, 0);
  for (int t = 0; t < p; ++t) at[t + 1] = at[t] + L.count((rank + t) % p);
  const buffer_id rot = L.packed() ? out_buffer : s.scratch(L.total());
  auto positions = [&](int lo, int n) { return region{rot, at[lo], at[lo + n] - at[lo]}; };

  s.copy(region{in_buffer, 0, L.count(rank)}, positions(0, 1));
  for (int dist = 1; dist < p; dist *= 2) {
    s.next_round();
    const int n = std::min(dist, p - dist);
    // Position 0 is the own block: sent from in, which the call never writes (see
    // gathered_layout::sent), the positions after it from the rotated buffer.
    detail::region_list msg;
    msg.add(region{in_buffer, 0, L.count(rank)});
    msg.add(positions(1, n - 1));
    send_list(s, detail::mod(rank - dist, p), msg);
    s.recv(detail::mod(rank + dist, p), positions(dist, n));
  }
  // The rotation: local steps after the last round's messages (or the prologue when p == 1).
  if (!L.packed()) {
    for (int t = 0; t < p; ++t) s.copy(positions(t, 1), L.block((rank + t) % p));
  } else if (rank != 0 && L.total() > 0) {
    rotate_in_place(s, L, rank);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return detail::gathered_cost(a, elem, m, detail::ceil_log2(static_cast<std::uint64_t>(a.p)));
}

const algorithm info{
    .name = "bruck",
    .serves = {collective::allgather, collective::allgatherv},
    .summary =
        "Bruck (Anenkov's LibNBC implementation): ceil(log2 p) rounds for any p, final rotation by local copies; "
        "ceil(log2 p) alpha + beta N(p-1)/p",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
