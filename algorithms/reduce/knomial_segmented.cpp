// Reduce, pipelined k-nomial tree (MPICH `MPIR_TSP_Ireduce_sched_intra_tree` with a k-nomial
// tree: the vector is cut into chunks, and a rank combines each chunk of its children's
// partials into its own and passes it to its parent while the next chunk is on its way). The
// schedule is bcast knomial_segmented's run backwards in time: where the broadcast delivers
// segment i to rank v in round a, v sends its partial of segment i to its parent in round
// T_S - 1 - a (T_S: the rounds of the whole call), and where the broadcast forwards segment i
// to child c in round f, v receives c's partial of segment i in round T_S - 1 - f and combines
// it into its accumulator. A segment's partials from all children thus arrive before the
// segment leaves, and a round's receive and send always concern different segments. Radix
// k = algo_params::radix (default 4; k = 2 binomial), S segments of algo_params::segment
// elements. With S = 1 it is reduce knomial round for round. The children are combined in
// reverse broadcast order, and the ranks wrap around p-1 -> 0 for root != 0, so the operator
// must be commutative (MPICH reduces a non-commutative operator over a tree rooted at rank 0
// and sends the result on to the root; not done here).
// Rounds: S C one-ported (C: the root's children, which is also knomial's rounds T; p >= 2);
// S L with k-1 ports, L + S - 1 with a port per child. One-ported the root alone receives S C
// messages, so no segmentation beats S = 1, reduce knomial itself.
// Cost: S C (alpha + (beta + gamma) m/S). Default: one segment; the segment parameter sets
// others.
// See docs/algorithms.md, "reduce".
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "patterns/knomial_pipeline.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  const std::uint64_t n = a.count;
  schedule s(rank, a.p, n, rank == a.root ? n : 0);
  if (a.p == 1) {
    s.copy(region{in_buffer, 0, n}, region{out_buffer, 0, n});
    return s;
  }
  const detail::knomial_pipeline P = detail::knomial_pipeline_of(a, rank, "reduce");
  const detail::knomial_tree& t = P.tree;
  const std::int64_t v = detail::relative(rank, a.root, a.p);
  const std::int64_t segments = P.seg.segments();
  const std::int64_t last = P.rounds() - 1;
  // The broadcast's arrival rounds along the path from the root to v.
  const std::vector<std::int64_t> arrival = P.arrival(v);
  const std::vector<std::int64_t> kids = t.children(v);
  const int k = static_cast<int>(kids.size());
  const std::vector<std::int64_t> forwards = detail::forward_rounds(arrival, k);
  const region acc = detail::tree_accumulator(s, a, rank, k > 0);
  auto piece = [&](std::int64_t i) { return P.seg.piece(acc.buffer, i); };
  const detail::rooted_at real{a.root, a.p};
  // The events in reversed time: (round, is_send, segment, child).
  std::vector<std::tuple<std::int64_t, bool, std::int64_t, int>> events;
  if (v != 0)
    for (std::int64_t i = 0; i < segments; ++i)
      events.emplace_back(last - arrival[static_cast<std::size_t>(i)], true, i, -1);
  for (std::size_t q = 0; q < forwards.size(); ++q)
    events.emplace_back(last - forwards[q], false, static_cast<std::int64_t>(q / static_cast<std::size_t>(k)),
                        static_cast<int>(q % static_cast<std::size_t>(k)));
  std::sort(events.begin(), events.end());
  for (const auto& [round, sends, i, c] : events) {
    detail::open_rounds(s, round + 1);
    if (sends)
      s.send(real(t.parent(v)), piece(i));
    else
      s.recv(real(kids[static_cast<std::size_t>(c)]), piece(i), combine::reduce_in_right);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const detail::knomial_pipeline P = detail::knomial_pipeline_of(a, no_rank, "reduce");
  return static_cast<double>(P.rounds()) *
         (m.alpha + (m.beta + m.gamma) * static_cast<double>(std::min(P.seg.size, a.count) * elem));
}

const algorithm info{
    .name = "knomial_segmented",
    .coll = collective::reduce,
    .summary =
        "MPICH pipelined k-nomial tree reduce (radix param, default 4; segment param, default 1 segment = "
        "knomial), bcast knomial_segmented backwards: S C rounds, S C (alpha + (beta + gamma) m/S); "
        "commutative operators",
    .needs_commutative = true,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
