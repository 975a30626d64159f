// Reduce, k-nomial tree (MPICH's and Open MPI's "knomial" reduce), radix k = a.params.radix
// (default 4, as the k-nomial broadcast; k = 2 is the binomial tree, k >= p the flat tree).
// The tree is the one-ported k-nomial broadcast's (patterns/tree_knomial.hpp), run backwards:
// where the broadcast delivers to child c in round R(c) of T, c sends its partial to its parent
// in round T - 1 - R(c), after all of its own children (R larger), one message per round at
// every parent. Children are combined in reverse broadcast order, so the operator must be
// commutative.
// Rounds: T <= (k - 1) ceil(log_k p) (equality when p = k^L; ceil(log2 p) for k = 2).
// Cost: T (alpha + (beta + gamma) m).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "patterns/rank_arithmetic.hpp"
#include "patterns/tree_knomial.hpp"
#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

int radix_of(const coll_args& a, int rank) {
  const int k = a.params.radix == 0 ? detail::default_knomial_radix : a.params.radix;
  if (k < 2) throw usage_error(rank, "reduce", fmt::format("knomial: radix {} (need at least 2)", k));
  return static_cast<int>(std::min<std::int64_t>(k, std::max(a.p, 2)));
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, rank == a.root ? a.count : 0);
  const detail::knomial_tree t(a.p, radix_of(a, rank));
  const std::int64_t rounds = t.rounds();
  const std::int64_t v = detail::relative(rank, a.root, a.p);
  const std::vector<std::int64_t> kids = t.children(v);
  const region acc = detail::tree_accumulator(s, a, rank, !kids.empty());
  const detail::rooted_at real{a.root, a.p};
  // Children in reverse broadcast order, then the parent: the broadcast's rounds reversed.
  for (auto it = kids.rbegin(); it != kids.rend(); ++it) {
    detail::open_rounds(s, rounds - t.recv_round(*it));
    s.recv(real(*it), acc, combine::reduce_in_right);
  }
  if (v != 0) {
    detail::open_rounds(s, rounds - t.recv_round(v));
    s.send(real(t.parent(v)), acc);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const int k = a.params.radix == 0 ? detail::default_knomial_radix : std::max(2, a.params.radix);
  const detail::knomial_tree t(a.p, static_cast<int>(std::min<std::int64_t>(k, std::max(a.p, 2))));
  return static_cast<double>(t.rounds()) * (m.alpha + (m.beta + m.gamma) * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "knomial",
    .coll = collective::reduce,
    .summary =
        "k-nomial tree (radix param, default 4; 2 = binomial), the one-ported k-nomial broadcast backwards: "
        "T <= (k-1) ceil(log_k p) rounds, T(alpha + (beta + gamma) m); commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
