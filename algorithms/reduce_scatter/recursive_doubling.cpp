// Reduce-scatter and reduce_scatter_block, recursive doubling on whole vectors (MPICH,
// `MPIR_Reduce_scatter_intra_recursive_doubling` and its _block twin; Open MPI coll/base
// `ompi_coll_base_reduce_scatter_block_intra_recursivedoubling`, the same scheme; SMPI
// `mpich_rdb`). MPICH uses it for short vectors and for non-commutative operators.
// Step i = 0 .. ceil(log2 p)-1 (mask 2^i): the ranks fall into aligned groups of 2^i; rank r
// exchanges with r XOR 2^i the partials of every block outside the sender's group (the
// blocks inside it are the group's own business from now on): after step i, r holds the
// group of 2^(i+1)'s partial of every block outside that group, and of its own block. The
// volume shrinks from M (p-1)/p to M/2. The arriving partial covers a contiguous rank
// range, lower or higher than r's, and goes on that side: rank-ordered, so non-commutative
// operators are fine (the association is a tree, not the left fold).
// Other p (as MPICH does, no folding): a rank whose partner r XOR 2^i does not exist gets
// the data from a rank of its own group that had a partner: with c of the 2^i ranks of the
// partner group existing, the first c ranks of the group hold what their partners sent, and
// a doubling broadcast inside the group (distance 2^(i-1), ..., 1; only the rounds that move
// something) hands it to the others before anyone combines it. A message arrives in scratch
// and is combined at the end of its step, so a relay forwards the partner's data unchanged.
// Rounds (one-ported, as MPICH): ceil(log2 p) + sum over the steps i with
// c_i = (p mod 2^(i+1)) - 2^i > 0 of ceil(log2(2^i / c_i)); log2 p for p = 2^k.
// Cost (p = 2^k): log2 p alpha + M (log2 p - (p-1)/p)(beta + gamma), M = all blocks' bytes;
// the relays add alpha + beta V_i each (V_i: step i's volume). Against recursive_halving
// and noncommutative (log2 p' (+2) rounds, M (p'-1)/p' (beta + gamma)) it has the same
// rounds for p = 2^k and more otherwise (odd p: 2 floor(log2 p) + 1), and moves about
// M (log2 p - 1) instead of M: in the model noncommutative, which also takes any operator,
// is never worse. Its messages are two contiguous ranges, where noncommutative's are
// strided blocks.
// See docs/algorithms.md, "reduce_scatter".
#include <algorithm>
#include <cstdint>
#include <vector>

#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

// What every rank knows about step i of a call on p ranks.
struct step_plan {
  int mask = 1;
  int c = 0;                    // ranks of the incomplete partner group (0: no relays)
  std::vector<int> relay_masks;  // the relay rounds' distances, largest first
};

std::vector<step_plan> plan_of(int p) {
  std::vector<step_plan> steps;
  for (int mask = 1; mask < p; mask *= 2) {
    step_plan st;
    st.mask = mask;
    const int c = p % (2 * mask) - mask;  // existing ranks of the last (lower) group's partner group
    if (c > 0) {
      st.c = c;
      for (int t = mask / 2; t > 0; t /= 2)
        if (c < 2 * t) st.relay_masks.push_back(t);  // some rank < c of a 2t-subtree sends to one >= c
    }
    steps.push_back(st);
  }
  return steps;
}

schedule build(const coll_args& a, int rank) {
  const int p = a.p;
  const buffer_extent e = buffer_extents(a, rank);
  schedule s(rank, p, e.in, e.out);
  std::vector<std::uint64_t> at(static_cast<std::size_t>(p) + 1, 0);  // block j: [at[j], at[j+1])
  for (int j = 0; j < p; ++j) at[j + 1] = at[j] + block_count(a, j);
  const std::uint64_t n = at[p];
  auto ix = [](int j) { return static_cast<std::size_t>(j); };
  // Partials: block `rank` directly in out, the others in acc at their own offsets;
  // arriving data in tmp, laid out like the vector.
  const buffer_id acc = s.scratch(n), tmp = s.scratch(n);
  auto acc_part = [&](int lo, int hi) {  // blocks [lo, hi) that do not contain `rank`
    return region{acc, at[ix(lo)], at[ix(hi)] - at[ix(lo)]};
  };
  // The accumulator of blocks [lo, hi), split around this rank's block.
  auto for_pieces = [&](int lo, int hi, auto f) {
    if (lo >= hi) return;
    if (rank < lo || rank >= hi) return f(lo, hi);
    if (lo < rank) f(lo, rank);
    f(rank, rank + 1);
    if (rank + 1 < hi) f(rank + 1, hi);
  };
  auto target = [&](int lo, int hi) {
    return lo == rank ? region{out_buffer, 0, at[ix(rank) + 1] - at[ix(rank)]} : acc_part(lo, hi);
  };
  for_pieces(0, p, [&](int lo, int hi) {
    const region dst = target(lo, hi);
    if (dst.count > 0) s.copy(region{in_buffer, at[ix(lo)], dst.count}, dst);
  });
  // Blocks outside the group of 2^i starting at g: [0, g) and [g + mask, p).
  auto outside = [&](int g, int mask, auto f) {
    f(0, g);
    f(std::min(g + mask, p), p);
  };
  auto acc_list = [&](int g, int mask) {
    detail::region_list l;
    outside(g, mask, [&](int lo, int hi) { for_pieces(lo, hi, [&](int x, int y) { l.add(target(x, y)); }); });
    return l;
  };
  auto tmp_list = [&](int g, int mask) {
    detail::region_list l;
    outside(g, mask, [&](int lo, int hi) { l.add(region{tmp, at[ix(lo)], at[ix(hi)] - at[ix(lo)]}); });
    return l;
  };

  for (const step_plan& st : plan_of(p)) {
    const int mask = st.mask, dst = rank ^ mask;
    const int my_root = rank & ~(mask - 1), dst_root = dst & ~(mask - 1);
    bool received = false;
    s.next_round();
    if (dst < p) {
      send_list(s, dst, acc_list(my_root, mask));
      recv_list(s, dst, tmp_list(dst_root, mask));
      received = true;
    }
    // Relays inside the lower group of the last pair, whose partner group has c ranks.
    const bool relaying = st.c > 0 && dst_root == my_root + mask && dst_root + mask > p;
    for (int t : st.relay_masks) {
      s.next_round();
      if (!relaying) continue;
      const int peer = rank ^ t, sub = rank & ~(2 * t - 1);
      const bool has = rank < sub + st.c, peer_has = peer < sub + st.c;
      if (peer > rank && has && !peer_has) send_list(s, peer, tmp_list(dst_root, mask));
      if (peer < rank && peer_has && !has) {
        recv_list(s, peer, tmp_list(dst_root, mask));
        received = true;
      }
    }
    if (!received) continue;
    // Combine at the end of the step: the partner group's partial on its side.
    const combine how = dst_root < my_root ? combine::reduce_in_left : combine::reduce_in_right;
    outside(dst_root, mask, [&](int lo, int hi) {
      for_pieces(lo, hi, [&](int x, int y) {
        const region d = target(x, y);
        if (d.count > 0) s.reduce(region{tmp, at[ix(x)], d.count}, d, how);
      });
    });
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  std::uint64_t n = 0;
  for (int j = 0; j < a.p; ++j) n += block_count(a, j);
  const double M = static_cast<double>(n) * static_cast<double>(elem);
  double t = 0;
  for (const step_plan& st : plan_of(a.p)) {
    const double v = M * (1.0 - static_cast<double>(std::min(st.mask, a.p)) / a.p);  // outside a group of 2^i
    const double relays = static_cast<double>(st.relay_masks.size());
    t += (1 + relays) * m.alpha + v * (m.beta + m.gamma) + relays * v * m.beta;
  }
  return t;
}

const algorithm info{
    .name = "recursive_doubling",
    .serves = {collective::reduce_scatter, collective::reduce_scatter_block},
    .summary = "MPICH recursive doubling on whole vectors, rank-ordered (non-commutative ok), other p by relays "
               "inside the incomplete group: ceil(log2 p) (+ relay) rounds, log2 p alpha + M(log2 p - (p-1)/p)"
               "(beta + gamma)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
