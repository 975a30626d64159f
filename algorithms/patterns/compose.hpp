// Schedules made of other schedules: a phase is one registered algorithm's schedule for this
// rank in a group of the comm's ranks (a domain, or the domains' leaders), and a composed
// schedule is its phases one after the other, each phase's ranks translated to the comm's
// and its buffers placed in the composed schedule's (docs/hierarchy.md). What the result
// is, is an ordinary schedule: the verifier, the printers, the cost model and every
// executor take it as they take any other; no executor knows it was composed.
//
// A phase must be one-ported: no fences (they are comm-wide) and no remote steps (they
// name ranks of the group's own numbering, outside any round the composition could
// translate).
#pragma once
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ranklab/collective.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// `n` rounds in which this rank does nothing (a phase it has no part in).
inline void idle_rounds(schedule& s, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) s.next_round();
}

// Where a phase's caller buffers lie in the composed schedule: its in_buffer starts at
// `in`, its out_buffer at `out` (buffer and element offset; the count is the phase's).
struct phase_place {
  region in{in_buffer, 0, 0};
  region out{out_buffer, 0, 0};
};

// The rounds a phase takes: its rounds, or one for a prologue alone.
inline std::size_t phase_length(const schedule& phase) {
  return std::max<std::size_t>(phase.rounds().size(), phase.prologue().empty() ? 0 : 1);
}

// Appends `phase` (this rank's schedule in a group whose rank i is the comm's rank
// members[i]) to `s` as `length` rounds (at least phase_length(phase)): every round a round
// of s, peers translated, in/out placed by `at`, each temporary of the phase a new temporary
// of s; the phase's prologue runs at the start of its first round; then empty rounds up to
// `length`. Rounds stay aligned across ranks (the verifier and the sequential executor pair
// a send with the receive of the same round): every rank of the comm spends `length`
// rounds on the phase, in a group or not.
inline void append_phase(schedule& s, const schedule& phase, std::span<const int> members, const phase_place& at,
                         std::size_t length) {
  if (phase.reads_remote() || phase.touches_remote_buffers() || phase.payload_buffer() != no_buffer)
    throw usage_error(s.rank(), "compose", "a phase with remote steps or a fence payload cannot be composed");
  std::vector<buffer_id> scratch;
  for (std::uint64_t n : phase.scratch_counts()) scratch.push_back(s.scratch(n));
  const auto place = [&](region r) {
    if (r.buffer == in_buffer) return region{at.in.buffer, at.in.offset + r.offset, r.count};
    if (r.buffer == out_buffer) return region{at.out.buffer, at.out.offset + r.offset, r.count};
    return region{scratch.at(r.buffer - first_scratch), r.offset, r.count};
  };
  const auto add = [&](std::span<const local_step> steps) {
    for (const local_step& st : steps) s.reduce(place(st.src), place(st.dst), st.how);
  };
  const std::span<const round> rounds = phase.rounds();
  const std::size_t own = phase_length(phase);
  for (std::size_t k = 0; k < own; ++k) {
    s.next_round();
    if (k == 0) add(phase.prologue());
    if (k >= rounds.size()) continue;
    const round& r = rounds[k];
    if (r.fence) throw usage_error(s.rank(), "compose", "a phase with a fence cannot be composed");
    add(phase.pre_steps(r));
    if (r.send_to != no_rank)
      for (const region& g : phase.send_regions(r)) s.send(members[static_cast<std::size_t>(r.send_to)], place(g));
    if (r.recv_from != no_rank)
      for (const region& g : phase.recv_regions(r))
        s.recv(members[static_cast<std::size_t>(r.recv_from)], place(g), r.recv_how);
    add(phase.post_steps(r));
  }
  idle_rounds(s, length - std::min(length, own));
}

// A group of the comm's ranks in which a phase runs, and this rank's place in it.
struct rank_group {
  std::vector<int> members;  // comm ranks, ascending: group rank i is members[i]
  int index = -1;            // this rank's group rank; -1: not a member
  int leader() const { return members.front(); }
};

// The group of `rank` among `ranks` (ascending) whose `key` equals rank's.
inline rank_group group_of(std::span<const int> ranks, std::span<const int> key, int rank) {
  rank_group g;
  const int k = key[static_cast<std::size_t>(rank)];
  for (int r : ranks)
    if (key[static_cast<std::size_t>(r)] == k) {
      if (r == rank) g.index = static_cast<int>(g.members.size());
      g.members.push_back(r);
    }
  return g;
}

// A phase's call: `a` with the group's size and the collective, count and root given.
inline coll_args phase_args(const coll_args& a, collective c, int p, std::uint64_t count, int root = 0) {
  coll_args b;
  b.coll = c;
  b.p = p;
  b.root = root;
  b.count = count;
  b.commutative = a.commutative;
  b.elem_size = a.elem_size;
  return b;
}

}  // namespace ranklab::detail
