// The k-nomial tree of MPICH's and Open MPI's "knomial" broadcast and reduce, over
// root-relative ranks 0 .. p-1, scheduled one-ported. Ranks are written in base k with
// L = ceil(log_k p) digits; the parent of v != 0 is v with its lowest nonzero digit cleared,
// and a rank whose lowest nonzero digit is at position j (j = L for the root) has the children
// v + i k^l for l = j-1 .. 0, i = 1 .. k-1 (those < p). The broadcast serves a rank's children
// one per round as soon as it has the data (the round after it receives), farthest level
// first, i ascending, so a child receives in round R(child) = R(parent) + 1 + its index among
// the parent's children (R(root) = -1); rounds() = max R + 1. The reduce runs these rounds
// backwards in time. Used by bcast knomial and reduce knomial.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace ranklab::detail {

inline constexpr int default_knomial_radix = 4;

struct knomial_tree {
  std::int64_t p, k;
  std::vector<std::int64_t> power;  // power[l] = k^l, up to the first >= p

  knomial_tree(int p_, int radix) : p(p_), k(radix) {
    power.push_back(1);
    while (power.back() < p) power.push_back(power.back() * k);
  }
  int levels() const { return static_cast<int>(power.size()) - 1; }
  std::int64_t unit(int l) const { return power[static_cast<std::size_t>(l)]; }
  // Children of `node` at level l that exist (node + i k^l < p, 1 <= i <= k-1).
  std::int64_t children_at(std::int64_t node, int l) const { return std::min(k - 1, (p - 1 - node) / unit(l)); }
  // Position of v's lowest nonzero base-k digit; levels() for the root.
  int low_level(std::int64_t v) const {
    if (v == 0) return levels();
    int j = 0;
    while ((v / unit(j)) % k == 0) ++j;
    return j;
  }
  std::int64_t parent(std::int64_t v) const {
    const std::int64_t u = unit(low_level(v));
    return v - (v / u) % k * u;
  }
  // v's children in broadcast order.
  std::vector<std::int64_t> children(std::int64_t v) const {
    std::vector<std::int64_t> out;
    for (int l = low_level(v) - 1; l >= 0; --l)
      for (std::int64_t i = 1; i <= children_at(v, l); ++i) out.push_back(v + i * unit(l));
    return out;
  }
  // R(v), the broadcast round in which v receives (-1 for the root): walk down from the root
  // along v's digits.
  std::int64_t recv_round(std::int64_t v) const {
    std::int64_t node = 0, round = -1;
    int node_level = levels();
    for (int j = levels() - 1; j >= 0; --j) {
      const std::int64_t d = (v / unit(j)) % k;
      if (d == 0) continue;
      std::int64_t index = d - 1;  // children of node before v's ancestor at level j
      for (int l = node_level - 1; l > j; --l) index += children_at(node, l);
      round += 1 + index;
      node += d * unit(j);
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

}  // namespace ranklab::detail
