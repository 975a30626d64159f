// The ring allreduce (reduce-scatter ring + allgather ring on p chunks), optionally with
// every ring step cut into sub-rounds of at most `segment` elements (Open MPI's segmented
// ring). Shared by allreduce ring and segmented_ring.
#pragma once
#include <algorithm>
#include <vector>

#include "patterns/reduce_scatter_util.hpp"

namespace ranklab::detail::rs {

// segment == 0: one sub-round per step (the plain ring).
inline schedule ring_allreduce(const coll_args& a, int rank, std::uint64_t segment) {
  const std::uint64_t n = a.count;
  const int p = a.p;
  schedule s(rank, p, n, n);
  const std::vector<span> chunks = equal_split(n, p);
  const std::uint64_t largest = chunks.front().count;
  const std::uint64_t seg = segment == 0 ? std::max<std::uint64_t>(largest, 1) : segment;
  const int subs = static_cast<int>(std::max<std::uint64_t>(1, (largest + seg - 1) / seg));
  // Block c * subs + k = elements [k seg, (k+1) seg) of chunk c (possibly empty).
  std::vector<span> blocks;
  for (const span& c : chunks)
    for (int k = 0; k < subs; ++k) {
      const std::uint64_t from = std::min(c.count, static_cast<std::uint64_t>(k) * seg);
      blocks.push_back(span{c.offset + from, std::min(seg, c.count - from)});
    }
  block_store st(s, blocks, out_buffer, 0, /*out_may_alias_in=*/true);
  auto block = [&](int chunk, int k) { return mod(chunk, p) * subs + k; };
  for (int t = 0; t + 1 < p; ++t)  // reduce-scatter: rank r ends with chunk r
    for (int k = 0; k < subs; ++k) {
      exchange e;
      e.send_to = mod(rank + 1, p);
      e.send_blocks = {block(rank - t - 1, k)};
      e.recv_from = mod(rank - 1, p);
      e.recv_blocks = {block(rank - t - 2, k)};
      e.incoming_lower = true;  // cyclic order; commutative operators only
      st.round(e);
    }
  for (int t = 0; t + 1 < p; ++t)  // allgather: pass the reduced chunks on
    for (int k = 0; k < subs; ++k) {
      exchange e;
      e.send_to = mod(rank + 1, p);
      e.send_blocks = {block(rank - t, k)};
      e.recv_from = mod(rank - 1, p);
      e.recv_blocks = {block(rank - t - 1, k)};
      e.combines = false;
      st.round(e);
    }
  for (int b = 0; b < static_cast<int>(blocks.size()); ++b) st.settle(b);  // p == 1
  return s;
}

// 2 (p-1) S rounds of ~m/(p S) bytes, (p-1)/p m reduced.
inline double ring_allreduce_cost(const coll_args& a, std::size_t elem, const cost_model& m, std::uint64_t segment) {
  const double p = a.p, bytes = static_cast<double>(a.count * elem);
  const std::uint64_t largest = (a.count + static_cast<std::uint64_t>(a.p) - 1) / static_cast<std::uint64_t>(a.p);
  const double subs = segment == 0 ? 1.0 : static_cast<double>(std::max<std::uint64_t>(1, (largest + segment - 1) / segment));
  return 2 * (p - 1) * subs * m.alpha + (p - 1) / p * bytes * (2 * m.beta + m.gamma);
}

}  // namespace ranklab::detail::rs
