// Alltoall and alltoallv, ring store-and-forward (the 5DV050 lecture "Algorithms for
// Collective Communication": all-to-all personalized on a ring): each rank's p-1 outgoing
// blocks travel right as one packet that leaves a block at every hop. In step k = 1..p-1 rank
// r forwards the packet of source r-k+1 (blocks for r+1 .. r+p-k) and receives the packet of
// source r-k (blocks for r .. r+p-k-1), whose first block lands in out and the rest in
// scratch, alternating two scratch buffers because a round's receive must not overwrite what
// it sends. Nothing is copied locally.
// Rounds: p-1. Cost: (p-1) alpha + beta m p(p-1)/2, m = bytes of a block.
// See docs/algorithms.md, "alltoall".
#include <algorithm>
#include <cstdint>

#include "patterns/block_layout.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"
#include "patterns/ring.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const detail::exchange_layout L(a, rank);
  schedule s = L.start(rank);
  const int p = a.p;
  if (p == 1) return s;
  using detail::mod;
  // The packet kept after step k holds the blocks of source r-k for r+1 .. r+p-k-1.
  auto kept = [&](int k, int i) { return L.elements(mod(rank - k, p), mod(rank + i, p)); };
  std::uint64_t largest = 0;
  for (int k = 1; k < p; ++k) {
    std::uint64_t n = 0;
    for (int i = 1; i <= p - k - 1; ++i) n += kept(k, i);
    largest = std::max(largest, n);
  }
  const buffer_id buf[2] = {s.scratch(largest), s.scratch(largest)};
  auto add_packet = [&](detail::region_list& l, int k) {
    std::uint64_t at = 0;
    for (int i = 1; i <= p - k - 1; ++i) {
      const std::uint64_t n = kept(k, i);
      l.add(region{buf[k % 2], at, n});
      at += n;
    }
  };
  const detail::ring r{p, rank};
  for (int k = 1; k < p; ++k) {
    s.next_round();
    detail::region_list out;
    if (k == 1) {
      for (int i = 1; i < p; ++i) out.add(L.send_block(mod(rank + i, p)));
    } else {
      add_packet(out, k - 1);
    }
    send_list(s, r.right(), out);
    detail::region_list in;
    in.add(L.recv_block(mod(rank - k, p)));
    add_packet(in, k);
    recv_list(s, r.left(), in);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return (a.p - 1) * m.alpha + m.beta * detail::mean_block_bytes(a, elem) * a.p * (a.p - 1) / 2.0;
}

const algorithm info{
    .name = "ring",
    .serves = {collective::alltoall, collective::alltoallv},
    .summary = "ring store-and-forward (5DV050 lecture): p-1 rounds, (p-1) alpha + beta m p(p-1)/2",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
