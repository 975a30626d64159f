// Broadcast, linear: the root sends the whole buffer to every other rank, one per round, in
// root-relative order (relative rank v = r - root mod p receives in round v - 1).
// Source: the flat tree every MPI library keeps as a baseline (Open MPI "basic_linear").
// Rounds: p - 1. Cost: (p - 1)(alpha + beta m).
#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const detail::tree t{detail::tree_shape::flat, a.p};
  detail::add_tree_rounds(s, t, detail::relative(rank, a.root, a.p), detail::tree_order::down,
                          detail::rooted_at{a.root, a.p}, region{out_buffer, 0, a.count});
  s.trim();
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return (a.p - 1) * (m.alpha + m.beta * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "linear",
    .coll = collective::bcast,
    .summary = "flat tree, root sends to each rank: p-1 rounds, (p-1)(alpha + beta m)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
