// A registered broadcast schedule run backwards in time: the reduce along the same tree and
// segments. Where the broadcast sends region g to a child in round t of R, the reduce receives
// the child's partial of g in round R-1-t and combines it; where the broadcast receives g from
// the parent, the reduce sends its partial of g up. A rank has then combined all its children's
// partials of a segment before it passes the segment on, and it still makes one send and one
// receive per round, so a pipelined broadcast becomes a pipelined reduce with the same round
// count. Used by reduce binary (bcast pipelined_binary_tree), reduce knomial_segmented (bcast
// knomial_segmented) and allreduce tree (bcast kary).
#pragma once
#include <cmath>
#include <cstddef>
#include <string>

#include "patterns/tree_rounds.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// The rounds R of `alg`'s schedule for `b` (its cost with alpha = 1, beta = gamma = 0),
// remembered for the last algorithm and arguments asked: every rank of a build_all asks for
// the same, and for a pipelined tree it costs O(p S). Every rank's schedule ends by round R.
inline std::size_t schedule_rounds(const algorithm& alg, const coll_args& b) {
  thread_local const algorithm* last_alg = nullptr;
  thread_local coll_args last;
  thread_local std::size_t rounds = 0;
  if (last_alg != &alg || !(last == b)) {
    rounds = static_cast<std::size_t>(std::llround(alg.cost(b, 1, cost_model{1.0, 0.0, 0.0})));
    last_alg = &alg;
    last = b;
  }
  return rounds;
}

// Appends to `s` the broadcast `fwd` (of `total` rounds, schedule_rounds) backwards, each of
// its regions mapped through `place` (the broadcast's buffer to the reduce's). `fwd` must be a
// plain message pipeline: no local steps, no fences. `what` names the caller in errors
// ("reduce", "binary: ...").
template <class Place>
void append_reversed(schedule& s, const schedule& fwd, std::size_t total, const char* op, const char* what,
                     Place place) {
  const auto rounds = fwd.rounds();
  if (total < rounds.size() || !fwd.steps().empty())
    throw usage_error(s.rank(), op, std::string(what) + ": the broadcast is not a plain message pipeline");
  open_rounds(s, static_cast<std::int64_t>(total - rounds.size()));
  for (std::size_t t = rounds.size(); t-- > 0;) {
    const ranklab::round& r = rounds[t];
    if (r.fence) throw usage_error(s.rank(), op, std::string(what) + ": the broadcast has a fence");
    s.next_round();
    if (r.recv_from != no_rank)
      for (const region& g : fwd.recv_regions(r)) s.send(r.recv_from, place(g));
    if (r.send_to != no_rank)
      for (const region& g : fwd.send_regions(r)) s.recv(r.send_to, place(g), combine::reduce_in_right);
  }
}

}  // namespace ranklab::detail
