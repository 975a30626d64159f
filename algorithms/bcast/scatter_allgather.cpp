// Broadcast = scatter + allgather (the "improved one-to-all broadcast" of the 5DV050 lecture
// "Algorithms for Collective Communication"; MPICH's scatter + recursive-doubling allgather
// for medium messages). The buffer is cut into p chunks (chunk v, for root-relative rank v,
// has floor or ceil of count/p elements; with count < p the last chunks are empty), scattered
// down the binomial tree (patterns/chunking.hpp), then allgathered:
// - p a power of two: recursive doubling on the hypercube (the lecture's): in round k rank v
//   exchanges its 2^k chunks [v & ~(2^k - 1), +2^k) with v XOR 2^k;
// - any other p: the same doubling as dissemination (Bruck et al.; no local rotation is
//   needed because a message may have several pieces): in round k rank v sends its chunks
//   [v, v + n) mod p, n = min(2^k, p - 2^k), to v - 2^k and receives [v + 2^k, v + 2^k + n)
//   from v + 2^k. Either way every rank receives each missing chunk exactly once.
// Rounds: 2 ceil(log2 p). Cost: 2 ceil(log2 p) alpha + 2 beta m (p - 1)/p.
#include <bit>

#include "patterns/chunking.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

// Chunks [first, first + n) modulo p (at most two pieces).
detail::region_list chunks(const detail::chunking& ch, std::int64_t first, std::int64_t n) {
  detail::region_list l;
  first = detail::mod(first, ch.p);
  const std::int64_t head = std::min<std::int64_t>(n, ch.p - first);
  l.add(ch.range(first, head));
  if (n > head) l.add(ch.range(0, n - head));
  return l;
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const int p = a.p;
  const detail::chunking ch{a.count, p};
  const int v = detail::relative(rank, a.root, p);
  auto real = [&](std::int64_t w) { return detail::absolute(detail::mod(w, p), a.root, p); };
  detail::add_chunk_scatter(s, ch, v, a.root);
  if (std::has_single_bit(static_cast<unsigned>(p))) {
    for (std::int64_t mask = 1; mask < p; mask *= 2) {
      s.next_round();
      const std::int64_t partner = v ^ mask;
      s.send(real(partner), ch.range(v & ~(mask - 1), mask));
      s.recv(real(partner), ch.range(partner & ~(mask - 1), mask));
    }
  } else {
    for (std::int64_t dist = 1; dist < p; dist *= 2) {
      s.next_round();
      const std::int64_t n = std::min<std::int64_t>(dist, p - dist);
      detail::send_list(s, real(v - dist), chunks(ch, v, n));
      detail::recv_list(s, real(v + dist), chunks(ch, v + dist, n));
    }
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  const double steps = detail::ceil_log2(static_cast<std::uint64_t>(a.p));
  return 2 * steps * m.alpha + 2 * m.beta * bytes * (a.p - 1) / a.p;
}

const algorithm info{
    .name = "scatter_allgather",
    .coll = collective::bcast,
    .summary =
        "binomial scatter + recursive-doubling allgather (dissemination for non-power-of-two p): "
        "2 ceil(log2 p) rounds, 2 ceil(log2 p) alpha + 2 beta m (p-1)/p",
    .composition = "scatter + allgather (5DV050 lecture, improved one-to-all broadcast)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
