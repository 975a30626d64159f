// Barrier, recursive doubling (MPICH's MPIR_Barrier recursive doubling): empty messages
// exchanged with r XOR 2^k. Any p, by the fold of patterns/folding.hpp: with p' the largest
// power of two <= p and rem = p - p', ranks 2i (i < rem) first notify 2i+1, the p' survivors
// (2i+1 and the ranks >= 2 rem) exchange in log2 p' rounds, and the odd ranks finally release
// their even partner. After the exchange rounds every survivor has heard, transitively, of
// every survivor and so of every rank; the release round passes that on.
// Rounds: log2 p (p a power of two), floor(log2 p) + 2 otherwise. Cost: rounds * alpha.
#include "patterns/recursive_doubling.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, 0);
  const region none{out_buffer, 0, 0};
  const detail::fold_plan f(a.p);
  // A message towards the survivor says "arrived", one from it "released".
  auto arrive = [&](int partner, bool survives) { survives ? s.recv(partner, none) : s.send(partner, none); };
  auto release = [&](int partner, bool survives) { survives ? s.send(partner, none) : s.recv(partner, none); };
  auto exchange = [&](int v, int mask) {
    s.send(f.real(v ^ mask), none);
    s.recv(f.real(v ^ mask), none);
  };
  detail::folded_doubling_rounds(s, f, rank, arrive, exchange, release);
  return s;
}

double cost(const coll_args& a, std::size_t, const cost_model& m) {
  const auto pof2 = detail::floor_pow2(static_cast<std::uint64_t>(a.p));
  return (detail::ceil_log2(pof2) + (pof2 == static_cast<std::uint64_t>(a.p) ? 0 : 2)) * m.alpha;
}

const algorithm info{
    .name = "recursive_doubling",
    .coll = collective::barrier,
    .summary =
        "recursive doubling with r XOR 2^k, non-power-of-two p by folding pairs: log2 p rounds "
        "(p = 2^k), floor(log2 p)+2 otherwise; rounds * alpha",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
