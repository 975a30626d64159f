// Barrier, tree: a binomial gather of empty messages to rank 0 (round k: every rank whose
// lowest set bit is 2^k reports to r - 2^k, after hearing from all of its subtree), then the
// release as a binomial broadcast from rank 0 in the reverse order (Open MPI's tree barrier;
// the binomial tree of patterns/tree_rounds.hpp, up and down).
// Rank 0 is released only after everyone arrived, and releases everyone. Any p.
// Rounds: 2 ceil(log2 p). Cost: 2 ceil(log2 p) alpha.
#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, 0);
  const region none{out_buffer, 0, 0};
  const detail::tree t{detail::tree_shape::binomial, a.p};
  const detail::rooted_at at_zero{0, a.p};
  detail::add_tree_rounds(s, t, rank, detail::tree_order::up, at_zero, none);    // arrival
  detail::add_tree_rounds(s, t, rank, detail::tree_order::down, at_zero, none);  // release
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
