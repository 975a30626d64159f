// Broadcast, k-nomial tree (MPICH's and Open MPI's "knomial" broadcast), radix k =
// a.params.radix (default 4; k = 2 is the binomial tree, k >= p the flat tree), over
// root-relative ranks. One-ported: a rank sends to its children one per round, as soon as it
// has the data (the round after it receives), farthest level first; the tree and its receive
// rounds are in patterns/tree_knomial.hpp.
// Rounds: max over v of R(v) + 1, at most ceil(log_k p)(k - 1), with equality when p = k^L;
// exactly ceil(log2 p) for k = 2. Cost: rounds (alpha + beta m).
#include <fmt/format.h>

#include "patterns/rank_arithmetic.hpp"
#include "patterns/tree_knomial.hpp"
#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

int radix_of(const coll_args& a, int rank) {
  const int k = a.params.radix == 0 ? detail::default_knomial_radix : a.params.radix;
  if (k < 2) throw usage_error(rank, "bcast", fmt::format("knomial: radix {} (need at least 2)", k));
  return k;
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const detail::knomial_tree t(a.p, radix_of(a, rank));
  const std::int64_t v = detail::relative(rank, a.root, a.p);
  const region all{out_buffer, 0, a.count};
  const detail::rooted_at real{a.root, a.p};
  std::int64_t round = t.recv_round(v);  // then one child per round
  if (v != 0) {
    detail::open_rounds(s, round + 1);
    s.recv(real(t.parent(v)), all);
  }
  for (const std::int64_t child : t.children(v)) {
    ++round;
    detail::open_rounds(s, round + 1);
    s.send(real(child), all);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const detail::knomial_tree t(a.p, radix_of(a, no_rank));
  return static_cast<double>(t.rounds()) * (m.alpha + m.beta * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "knomial",
    .coll = collective::bcast,
    .summary =
        "k-nomial tree (radix param, default 4; 2 = binomial), one-ported, children served as soon as "
        "possible: <= ceil(log_k p)(k-1) rounds, rounds(alpha + beta m)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
