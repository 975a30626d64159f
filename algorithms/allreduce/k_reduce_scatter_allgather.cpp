// Allreduce, radix-k reduce-scatter + allgather by recursive exchange (MPICH,
// MPIR_Allreduce_intra_k_reduce_scatter_allgather: Rabenseifner's scheme with radix k;
// radix = algo_params::radix, default 4 here). Any p: the ranks beyond p' = the largest
// power of k <= p hand their vector to the last rank of their set of k consecutive ranks
// before the exchange and get the result back after it (patterns/recexch_plan.hpp). The
// vector is cut into p' near-equal blocks. Reduce-scatter, distance doubling: in phase
// i = 0 .. L-1 (L = log_k p') participant v keeps the 1/k of its current share whose block
// digit L-1-i equals its own digit i, sends the other k-1 parts to the k-1 participants whose
// base-k digit i differs (each gets the part of its own digit), receives their partials of
// its part and combines the k of them in digit order. Numbering the blocks with reversed
// digits, as MPICH does, keeps every share one contiguous range (one region per message);
// after L phases participant v holds block rev(v) reduced over all ranks. Allgather, distance
// halving: the phases backwards (digit L-1 first), each participant sending its share to the
// same k-1 peers, so the shares grow by k per phase. Each partial covers an aligned group of
// participants, a contiguous rank range, and the k are combined in rank order: unlike MPICH
// (which asserts a commutative operator) non-commutative operators are fine here.
// Rounds: k-1 ports (MPICH's, which posts a phase's k-1 exchanges at once): 2 log_k p' (+2
// when p' < p); one-ported here: 2 (k-1) log_k p' (+ 2f), f = min(k-1, T) fold rounds
// (T = floor((p-p') k/(k-1))). Radix 2 has the rounds of rabenseifner (2 log2 p' (+2)).
// Cost: rounds alpha + (p'-1)/p' m (2 beta + gamma) (+ f m (2 beta + gamma) when folded).
// See docs/algorithms.md, "allreduce".
#include <algorithm>
#include <vector>

#include "patterns/recexch_plan.hpp"
#include "patterns/reduce_blocks.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, n);
  const region out = detail::own_vector_in_out(s, n);
  const detail::recexch_plan f(a.p, detail::recexch_radix(a, rank, "allreduce"));
  if (a.p == 1) return s;
  const int k = f.k, L = f.levels;
  const std::vector<detail::elem_range> blocks = detail::equal_split(n, f.pofk);
  // The share of participant v after m reduce-scatter phases: the blocks whose digit L-1-q
  // is v's digit q for q < m, k^(L-m) consecutive blocks, as a region of out.
  auto share = [&](int v, int m) {
    int lo = 0;
    for (int q = 0; q < m; ++q) lo += f.digit(v, q) * f.power(L - 1 - q);
    const int hi = lo + f.power(L - m);
    const std::uint64_t from = blocks[static_cast<std::size_t>(lo)].offset;
    const std::uint64_t to = hi < f.pofk ? blocks[static_cast<std::size_t>(hi)].offset : n;
    return region{out_buffer, from, to - from};
  };
  std::vector<buffer_id> slot;  // incoming vectors / partials, slot j for round j + 1
  auto buf = [&](int j) {
    while (static_cast<int>(slot.size()) <= j) slot.push_back(s.scratch(n));
    return slot[static_cast<std::size_t>(j)];
  };
  // dst holds operand `mine` of `count` operands in rank order, at(e) the others:
  // dst = operand_0 (+) ... (+) operand_{count-1}, a left fold.
  auto fold = [&](int count, int mine, region dst, auto at) {
    if (dst.count == 0) return;
    if (mine > 0) {
      const region first = at(0);
      for (int e = 1; e < mine; ++e) s.reduce(at(e), first, combine::reduce_in_right);
      s.reduce(first, dst, combine::reduce_in_left);
    }
    for (int e = mine + 1; e < count; ++e) s.reduce(at(e), dst, combine::reduce_in_right);
  };
  const int v = f.newrank(rank), own = f.owner(rank);
  const int first = f.first_rank(own), senders = f.real(own) - first;
  // Fold: the k-1 (or fewer) lower ranks of a set hand their vectors to its participant.
  for (int t = 0; t < f.fold_rounds; ++t) {
    s.next_round();
    if (v < 0 && rank - first == t) s.send(f.real(own), out);
    if (v >= 0 && t < senders) {
      s.recv(first + t, region{buf(t), 0, n});
      if (t == senders - 1) fold(t + 2, t + 1, out, [&](int e) { return region{buf(e), 0, n}; });
    }
  }
  // Reduce-scatter, digits 0 .. L-1.
  for (int i = 0; i < L; ++i)
    for (int j = 1; j < k; ++j) {
      s.next_round();
      if (v < 0) continue;
      const int d = f.digit(v, i);
      const int to = f.with_digit(v, i, (d + j) % k), from = f.with_digit(v, i, (d - j + k) % k);
      s.send(f.real(to), share(to, i + 1));
      const region mine = share(v, i + 1);
      s.recv(f.real(from), region{buf(j - 1), 0, mine.count});
      if (j == k - 1)  // round j brought digit d - j into slot j - 1
        fold(k, d, mine, [&](int e) { return region{buf((d - e + k) % k - 1), 0, mine.count}; });
    }
  // Allgather, digits L-1 .. 0.
  for (int i = L - 1; i >= 0; --i)
    for (int j = 1; j < k; ++j) {
      s.next_round();
      if (v < 0) continue;
      const int d = f.digit(v, i);
      const int to = f.with_digit(v, i, (d + j) % k), from = f.with_digit(v, i, (d - j + k) % k);
      s.send(f.real(to), share(v, i + 1));
      s.recv(f.real(from), share(from, i + 1));
    }
  // Unfold: the participant hands the result to the ranks it stood for.
  for (int t = 0; t < f.fold_rounds; ++t) {
    s.next_round();
    if (v < 0 && rank - first == t) s.recv(f.real(own), out);
    if (v >= 0 && t < senders) s.send(first + t, out);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const detail::recexch_plan f(a.p, detail::recexch_radix(a, no_rank, "allreduce"));
  if (a.p == 1) return 0;
  const double bytes = static_cast<double>(a.count * elem), q = f.pofk;
  double t = (2 * (f.k - 1) * f.levels + 2 * f.fold_rounds) * m.alpha + (q - 1) / q * bytes * (2 * m.beta + m.gamma);
  if (f.rem > 0) t += f.fold_rounds * bytes * (2 * m.beta + m.gamma);
  return t;
}

const algorithm info{
    .name = "k_reduce_scatter_allgather",
    .coll = collective::allreduce,
    .summary = "MPICH k_reduce_scatter_allgather: radix-k (param, default 4) recursive-exchange reduce-scatter + "
               "allgather; k-1 ports 2 log_k p' (+2) rounds, one-ported 2(k-1) log_k p' (+2f); rounds alpha + "
               "(p'-1)/p' m (2 beta + gamma) (+ folding); radix 2 = rabenseifner's rounds; rank-ordered",
    .composition = "reduce-scatter + allgather (radix-k recursive exchange)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
