// Reduce, k-nomial tree (MPICH's and Open MPI's "knomial" reduce), radix k = a.params.radix
// (default 4, as the k-nomial broadcast; k = 2 is the binomial tree, k >= p the flat tree).
// The tree is the k-nomial broadcast's, run backwards: root-relative ranks v are written in
// base k; the parent of v != 0 is v with its lowest nonzero digit cleared, and a rank whose
// lowest nonzero digit is at position j (j = L = ceil(log_k p) for the root) has the children
// v + i k^l, l = j-1 .. 0, i = 1 .. k-1 (those < p). In the one-ported broadcast a child
// receives in round R(child) = R(parent) + 1 + its index among its parent's children
// (R(root) = -1), T = max R + 1 rounds. Reversing time, child c sends its partial to its
// parent in round T - 1 - R(c): after all of its own children (R larger), one message per
// round at every parent. Children are combined in reverse broadcast order, so the operator
// must be commutative.
// Rounds: T <= (k - 1) ceil(log_k p) (equality when p = k^L; ceil(log2 p) for k = 2).
// Cost: T (alpha + (beta + gamma) m).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "patterns/rank_arithmetic.hpp"
#include "patterns/reduce_tree_util.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

constexpr int default_radix = 4;

struct knomial_tree {
  std::int64_t p, k;
  std::vector<std::int64_t> power;  // power[l] = k^l, up to the first >= p
  std::vector<int> receive_round;   // R(v) of the broadcast, R(0) = -1
  int rounds = 0;                   // T

  knomial_tree(int p_, int radix) : p(p_), k(radix) {
    power.push_back(1);
    while (power.back() < p) power.push_back(power.back() * k);
    receive_round.assign(static_cast<std::size_t>(p), -1);
    for (std::int64_t v = 1; v < p; ++v) {  // parents come first
      const int j = lowest_digit(v);
      const std::int64_t par = parent(v);
      receive_round[v] = receive_round[par] + 1 + static_cast<int>(index_among_children(par, v, j));
      rounds = std::max(rounds, receive_round[v] + 1);
    }
  }
  int levels() const { return static_cast<int>(power.size()) - 1; }
  // Position of the lowest nonzero base-k digit (levels() for 0).
  int lowest_digit(std::int64_t v) const {
    if (v == 0) return levels();
    int j = 0;
    while ((v / power[j]) % k == 0) ++j;
    return j;
  }
  std::int64_t parent(std::int64_t v) const {
    const int j = lowest_digit(v);
    return v - ((v / power[j]) % k) * power[j];
  }
  // Children of `par` in broadcast order that exist (< p) before child v = par + i k^l.
  std::int64_t index_among_children(std::int64_t par, std::int64_t v, int l) const {
    const int top = lowest_digit(par);
    std::int64_t idx = 0;
    for (int m = top - 1; m > l; --m) idx += std::min<std::int64_t>(k - 1, (p - 1 - par) / power[m]);
    return idx + (v - par) / power[l] - 1;
  }
  std::vector<std::int64_t> children(std::int64_t v) const {
    std::vector<std::int64_t> out;
    for (int l = lowest_digit(v) - 1; l >= 0; --l)
      for (std::int64_t i = 1; i < k && v + i * power[l] < p; ++i) out.push_back(v + i * power[l]);
    return out;
  }
};

int radix_of(const coll_args& a, int rank) {
  const int k = a.params.radix == 0 ? default_radix : a.params.radix;
  if (k < 2) throw usage_error(rank, "reduce", fmt::format("knomial: radix {} (need at least 2)", k));
  return static_cast<int>(std::min<std::int64_t>(k, std::max(a.p, 2)));
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, rank == a.root ? a.count : 0);
  const knomial_tree t(a.p, radix_of(a, rank));
  const std::int64_t v = detail::relative(rank, a.root, a.p);
  const std::vector<std::int64_t> kids = t.children(v);
  const region acc = detail::tree_accumulator(s, a, rank, !kids.empty());
  // (round, peer, sends) in round order: children in reverse broadcast order, then the parent.
  struct event {
    int round;
    std::int64_t peer;
    bool sends;
  };
  std::vector<event> ev;
  for (auto it = kids.rbegin(); it != kids.rend(); ++it) ev.push_back({t.rounds - 1 - t.receive_round[*it], *it, false});
  if (v != 0) ev.push_back({t.rounds - 1 - t.receive_round[v], t.parent(v), true});
  int round = 0;
  for (const event& e : ev) {
    for (; round <= e.round; ++round) s.next_round();
    const int peer = detail::absolute(static_cast<int>(e.peer), a.root, a.p);
    if (e.sends) s.send(peer, acc);
    else s.recv(peer, acc, combine::reduce_in_right);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const int k = a.params.radix == 0 ? default_radix : std::max(2, a.params.radix);
  const knomial_tree t(a.p, static_cast<int>(std::min<std::int64_t>(k, std::max(a.p, 2))));
  return t.rounds * (m.alpha + (m.beta + m.gamma) * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "knomial",
    .coll = collective::reduce,
    .summary = "k-nomial tree (radix param, default 4; 2 = binomial), the one-ported k-nomial broadcast backwards: "
               "T <= (k-1) ceil(log_k p) rounds, T(alpha + (beta + gamma) m); commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
