// Broadcast, k-nomial tree (MPICH's and Open MPI's "knomial" broadcast), radix k =
// a.params.radix (default 4; k = 2 is the binomial tree, k >= p the flat tree).
// Root-relative ranks v are written in base k with L = ceil(log_k p) digits; the parent of
// v != 0 is v with its lowest nonzero digit cleared, and a rank whose lowest nonzero digit
// is at position j (j = L for the root) has the children v + i k^l for l = j-1 .. 0,
// i = 1 .. k-1 (those < p). One-ported: a rank sends to its children one per round, as soon
// as it has the data (the round after it receives), farthest level first, i ascending.
// A child's receive round is therefore R(child) = R(parent) + 1 + its index among the
// parent's existing children (R(root) = -1).
// Rounds: max over v of R(v) + 1, at most ceil(log_k p)(k - 1), with equality when p = k^L;
// exactly ceil(log2 p) for k = 2. Cost: rounds (alpha + beta m).
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

constexpr int default_radix = 4;

struct knomial_tree {
  std::int64_t p, k;
  std::vector<std::int64_t> power;  // power[l] = k^l, l = 0 .. levels

  knomial_tree(int p_, int radix) : p(p_), k(radix) {
    power.push_back(1);
    while (power.back() < p) power.push_back(power.back() * k);
  }
  int levels() const { return static_cast<int>(power.size()) - 1; }
  // Children of `node` at level l that exist (node + i k^l < p, 1 <= i <= k-1).
  std::int64_t children_at(std::int64_t node, int l) const {
    return std::min(k - 1, (p - 1 - node) / power[static_cast<std::size_t>(l)]);
  }
  // Position of v's lowest nonzero base-k digit; levels() for the root.
  int low_level(std::int64_t v) const {
    if (v == 0) return levels();
    int j = 0;
    while ((v / power[static_cast<std::size_t>(j)]) % k == 0) ++j;
    return j;
  }
  std::int64_t parent(std::int64_t v) const {
    const std::int64_t unit = power[static_cast<std::size_t>(low_level(v))];
    return v - (v / unit) % k * unit;
  }
  // Round in which v receives (-1 for the root): walk down from the root along v's digits.
  std::int64_t recv_round(std::int64_t v) const {
    std::int64_t node = 0, round = -1;
    int node_level = levels();
    for (int j = levels() - 1; j >= 0; --j) {
      const std::int64_t d = (v / power[static_cast<std::size_t>(j)]) % k;
      if (d == 0) continue;
      std::int64_t index = d - 1;  // children of node before v's ancestor at level j
      for (int l = node_level - 1; l > j; --l) index += children_at(node, l);
      round += 1 + index;
      node += d * power[static_cast<std::size_t>(j)];
      node_level = j;
    }
    return round;
  }
  std::int64_t rounds() const {
    std::int64_t r = 0;
    for (std::int64_t v = 1; v < p; ++v) r = std::max(r, recv_round(v) + 1);
    return r;
  }
};

int radix_of(const coll_args& a, int rank) {
  const int k = a.params.radix == 0 ? default_radix : a.params.radix;
  if (k < 2) throw usage_error(rank, "bcast", fmt::format("knomial: radix {} (need at least 2)", k));
  return k;
}

void open_round(schedule& s, std::int64_t index) {
  while (static_cast<std::int64_t>(s.rounds().size()) <= index) s.next_round();
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, 0, a.count);
  const knomial_tree t(a.p, radix_of(a, rank));
  const std::int64_t v = detail::relative(rank, a.root, a.p);
  const region all{out_buffer, 0, a.count};
  auto real = [&](std::int64_t w) { return detail::absolute(static_cast<int>(w), a.root, a.p); };
  std::int64_t round = t.recv_round(v);
  if (v != 0) {
    open_round(s, round);
    s.recv(real(t.parent(v)), all);
  }
  for (int l = t.low_level(v) - 1; l >= 0; --l)
    for (std::int64_t i = 1; i <= t.children_at(v, l); ++i) {
      open_round(s, ++round);
      s.send(real(v + i * t.power[static_cast<std::size_t>(l)]), all);
    }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const knomial_tree t(a.p, radix_of(a, no_rank));
  return static_cast<double>(t.rounds()) * (m.alpha + m.beta * static_cast<double>(a.count * elem));
}

const algorithm info{
    .name = "knomial",
    .coll = collective::bcast,
    .summary = "k-nomial tree (radix param, default 4; 2 = binomial), one-ported, children served as soon as "
               "possible: <= ceil(log_k p)(k-1) rounds, rounds(alpha + beta m)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
