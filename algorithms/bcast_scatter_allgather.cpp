// Broadcast = scatter + allgather (seed 001, "improved one-to-all broadcast"; MPICH's
// scatter + recursive-doubling allgather for medium messages). The buffer is cut into p
// chunks (chunk v, for root-relative rank v, has floor or ceil of count/p elements; with
// count < p the last chunks are empty), scattered down the top-down binomial tree
// (detail/bcast_util.hpp), then allgathered:
// - p a power of two: recursive doubling on the hypercube (seed 001): in round k rank v
//   exchanges its 2^k chunks [v & ~(2^k - 1), +2^k) with v XOR 2^k;
// - any other p: the same doubling as dissemination (Bruck et al.; no local rotation is
//   needed because a message may have several pieces): in round k rank v sends its chunks
//   [v, v + n) mod p, n = min(2^k, p - 2^k), to v - 2^k and receives [v + 2^k, v + 2^k + n)
//   from v + 2^k. Either way every rank receives each missing chunk exactly once.
// Rounds: 2 ceil(log2 p). Cost: 2 ceil(log2 p) alpha + 2 beta m (p - 1)/p.
#include <bit>

#include "patterns/bcast_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

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
      detail::region_list out, in;
      detail::add_chunks(out, ch, v, n);
      detail::add_chunks(in, ch, v + dist, n);
      detail::send_list(s, real(v - dist), out);
      detail::recv_list(s, real(v + dist), in);
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
    .summary = "binomial scatter + recursive-doubling allgather (dissemination for non-power-of-two p): "
               "2 ceil(log2 p) rounds, 2 ceil(log2 p) alpha + 2 beta m (p-1)/p",
    .composition = "scatter + allgather (seed 001, improved one-to-all broadcast)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
