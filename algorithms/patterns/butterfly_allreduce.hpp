// The folded butterfly allreduce that Swing's bandwidth-optimal allreduce and Bine's share: a
// reduce-scatter over log2 q butterfly steps, then an allgather over the same steps backwards,
// among the q = floor_pow2(p) ranks that survive folding (folding.hpp: ranks 2i and 2i+1,
// i < p - q, pair up; the folded-away one sends its vector first and gets the result last).
// The two algorithms differ only in the peers and in which blocks move at each step, which
// the caller gives. Used by allreduce swing_bandwidth and allreduce bine.
#pragma once
#include <cstdint>
#include <vector>

#include "patterns/folding.hpp"
#include "patterns/recursive_halving.hpp"
#include "patterns/reduce_blocks.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// One butterfly step of a surviving rank: its peer (a new rank) and the labels of the blocks
// it keeps after the step's reduce-scatter exchange (mine) and of those its peer keeps (theirs).
struct butterfly_step {
  int peer = -1;
  std::vector<int> mine, theirs;
};

// Emits the whole allreduce into `st` (blocks labelled 0 .. q-1). `steps` has one entry per
// butterfly step for a surviving rank and is empty for a folded-away one, which idles through
// `count` rounds.
inline void butterfly_allreduce(block_store& st, const fold_plan& f, int rank, const std::vector<butterfly_step>& steps,
                                int count) {
  const int v = f.newrank(rank);
  if (f.rem > 0) fold_round(st, f, rank);
  const auto step = [&](int k, bool reduce_scatter) {
    exchange e;
    if (v >= 0) {
      const butterfly_step& b = steps[static_cast<std::size_t>(k)];
      e.send_to = e.recv_from = f.real(b.peer);
      e.send_blocks = reduce_scatter ? b.theirs : b.mine;
      e.recv_blocks = reduce_scatter ? b.mine : b.theirs;
      e.combines = reduce_scatter;
      e.incoming_lower = reduce_scatter && b.peer < v;
    }
    st.round(e);
  };
  for (int k = 0; k < count; ++k) step(k, true);        // reduce-scatter
  for (int k = count - 1; k >= 0; --k) step(k, false);  // allgather, the same steps backwards
  if (f.rem > 0) {
    const std::vector<int> all = all_blocks(st.size());
    unfold_round(st, f, rank, all, all);
  }
  st.settle_all();  // p == 1
}

// 2 log2 q alpha + (q-1)/q m (2 beta + gamma), plus 2 alpha + (2 beta + gamma) m to fold and unfold.
inline double butterfly_allreduce_cost(const coll_args& a, std::size_t elem, const cost_model& m, int count) {
  const fold_plan f(a.p);
  const double bytes = static_cast<double>(a.count * elem);
  const double frac = static_cast<double>(f.pof2 - 1) / f.pof2;
  double t = 2 * count * m.alpha + frac * bytes * (2 * m.beta + m.gamma);
  if (f.rem > 0) t += 2 * m.alpha + (2 * m.beta + m.gamma) * bytes;
  return t;
}

}  // namespace ranklab::detail
