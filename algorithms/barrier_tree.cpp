// Barrier, tree: a binomial gather of empty messages to rank 0 (round k: every rank whose
// lowest set bit is 2^k reports to r - 2^k, after hearing from all of its subtree), then the
// release as a binomial broadcast from rank 0 in the reverse order (Open MPI's tree barrier).
// Rank 0 is released only after everyone arrived, and releases everyone. Any p.
// Rounds: 2 ceil(log2 p). Cost: 2 ceil(log2 p) alpha.
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, 0);
  const region none{out_buffer, 0, 0};
  const int steps = detail::ceil_log2(static_cast<std::uint64_t>(a.p));
  for (int k = 0; k < steps; ++k) {  // gather: children report to parents
    const int mask = 1 << k;
    s.next_round();
    if ((rank & (2 * mask - 1)) == mask) s.send(rank - mask, none);
    else if ((rank & (2 * mask - 1)) == 0 && rank + mask < a.p) s.recv(rank + mask, none);
  }
  for (int k = steps - 1; k >= 0; --k) {  // release: parents wake children
    const int mask = 1 << k;
    s.next_round();
    if ((rank & (2 * mask - 1)) == 0 && rank + mask < a.p) s.send(rank + mask, none);
    else if ((rank & (2 * mask - 1)) == mask) s.recv(rank - mask, none);
  }
  s.trim();
  return s;
}

double cost(const coll_args& a, std::size_t, const cost_model& m) {
  return 2 * detail::ceil_log2(static_cast<std::uint64_t>(a.p)) * m.alpha;
}

const algorithm info{
    .name = "tree",
    .coll = collective::barrier,
    .summary = "binomial gather to rank 0 + binomial release: 2 ceil(log2 p) rounds, 2 ceil(log2 p) alpha",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
