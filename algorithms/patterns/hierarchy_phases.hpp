// The groups a hierarchical algorithm runs its phases in (docs/hierarchy.md). Going up, the
// ranks of each innermost domain form a group whose leader carries on; the leaders of one
// domain of the next level out form the next groups; and so on to the top group, the
// leaders of the outermost domains. A rooted call's root leads every group it is in, so the
// data reaches it (reduce, gather) or leaves from it (bcast, scatter) without a detour; in
// every other group the lowest rank leads. Going down, the same groups in reverse.
//
// Every rank computes every group from the hierarchy alone, so all ranks agree without a
// message. Without a hierarchy there is only the top group: the whole comm.
#pragma once
#include <fmt/format.h>
#include <algorithm>

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "patterns/compose.hpp"
#include "ranklab/hierarchy.hpp"

namespace ranklab::detail {

struct hierarchy_phase {
  int level = 0;         // the hierarchy level; levels.size() for the top group
  bool top = false;      // the top group's phase (the leaders of the outermost domains)
  rank_group group;      // this rank's group at this level (index -1: not in one)
  int leader_index = 0;  // the leader's group rank
  const cost_model* cost = nullptr;
  int largest = 1;  // the largest group at this level (for costing)
  // Every group at this level (members ascending) and its leader's group rank: every rank
  // pads the phase to the longest of their schedules, and the v-collectives' phases size
  // their blocks by who is in which group.
  std::vector<std::vector<int>> groups;
  std::vector<int> leads;
};

// Innermost first, the top group last. Phases whose groups have one rank everywhere
// (a level that does not split anything further) are left out.
inline std::vector<hierarchy_phase> phases_up(const coll_args& a, int rank, int root = 0) {
  static const cost_model flat{};
  std::vector<int> participants(static_cast<std::size_t>(a.p));
  for (int r = 0; r < a.p; ++r) participants[static_cast<std::size_t>(r)] = r;
  std::vector<hierarchy_phase> out;
  const rank_hierarchy* h = a.hierarchy;
  const int levels = h ? static_cast<int>(h->levels.size()) : 0;
  for (int l = levels - 1; l >= 0; --l) {
    const std::vector<int>& key = h->levels[static_cast<std::size_t>(l)].domain;
    // The groups of this level among the participants (each ascending, as they are), and
    // each group's leader.
    std::map<int, std::vector<int>> groups;
    for (int r : participants) groups[key[static_cast<std::size_t>(r)]].push_back(r);
    std::vector<int> leaders;
    int largest = 1;
    hierarchy_phase mine;
    mine.level = l;
    mine.cost = &h->levels[static_cast<std::size_t>(l)].cost;
    for (auto& [k, members] : groups) {
      const auto at_root = std::find(members.begin(), members.end(), root);
      const int lead = at_root == members.end() ? 0 : static_cast<int>(at_root - members.begin());
      leaders.push_back(members[static_cast<std::size_t>(lead)]);
      largest = std::max(largest, static_cast<int>(members.size()));
      const auto me = std::find(members.begin(), members.end(), rank);
      if (me != members.end()) {
        mine.group.index = static_cast<int>(me - members.begin());
        mine.group.members = members;
        mine.leader_index = lead;
      }
      mine.groups.push_back(std::move(members));
      mine.leads.push_back(lead);
    }
    std::sort(leaders.begin(), leaders.end());
    participants = std::move(leaders);
    mine.largest = largest;
    if (largest > 1) out.push_back(std::move(mine));
  }
  hierarchy_phase top;
  top.level = levels;
  top.top = true;
  top.cost = h ? &h->top_cost : &flat;
  top.group.members = participants;
  const auto me = std::find(participants.begin(), participants.end(), rank);
  top.group.index = me == participants.end() ? -1 : static_cast<int>(me - participants.begin());
  const auto at_root = std::find(participants.begin(), participants.end(), root);
  top.leader_index = at_root == participants.end() ? 0 : static_cast<int>(at_root - participants.begin());
  top.largest = static_cast<int>(participants.size());
  top.groups.push_back(participants);
  top.leads.push_back(top.leader_index);
  out.push_back(std::move(top));
  return out;
}

// The algorithm a phase runs: the one rank_hierarchy::choices names for the phase's level
// (or "top") and collective, if any (a usage_error when it does not accept the phase's
// call); otherwise, of the one-ported, non-hierarchical algorithms of `c` that accept the
// call, the cheapest by the level's cost model (registration order breaks ties; those
// without a cost model come last). Throws usage_error when none does.
inline const algorithm& phase_algorithm(collective c, const coll_args& b, const hierarchy_phase& ph,
                                        const rank_hierarchy* h) {
  if (h) {
    const std::string_view level = ph.level < static_cast<int>(h->levels.size())
                                       ? std::string_view(h->levels[static_cast<std::size_t>(ph.level)].name)
                                       : std::string_view("top");
    for (const phase_choice& choice : h->choices) {
      if (choice.coll != c || !(choice.level.empty() || choice.level == level)) continue;
      const algorithm* named = registry::find(c, choice.algorithm);
      if (!named) break;  // parse_choices checked it; a plugin since unloaded: choose
      if (const std::string why = unmet_precondition(*named, b); !why.empty())
        throw usage_error(no_rank, std::string(name(c)),
                          fmt::format("phase algorithm {} at level {} (RANKLAB_HIERARCHY_ALGORITHMS or "
                                      "rank_hierarchy::choices) cannot run {}: {}",
                                      choice.algorithm, level, describe(b), why));
      return *named;
    }
  }
  const cost_model& m = *ph.cost;
  const algorithm* best = nullptr;
  double best_cost = 0;
  for (const algorithm* x : registry::for_collective(c)) {
    if (!x->one_ported || x->hierarchical || !meets_preconditions(*x, b)) continue;
    if (!x->cost) {
      if (!best) best = x, best_cost = 1e300;
      continue;
    }
    const double t = x->cost(b, b.elem_size, m);
    if (!best || t < best_cost) best = x, best_cost = t;
  }
  if (!best)
    throw usage_error(no_rank, std::string(name(c)),
                      "no one-ported algorithm accepts a hierarchical phase " + describe(b));
  return *best;
}

// The most rounds any rank spends in `x`'s schedules of call `b` (phase_length). Every
// rank of every group needs it, so it is remembered per call (a bounded memo: schedules are
// built on a cache miss only, but p ranks build at once).
inline std::size_t longest_phase(const algorithm& x, const coll_args& b) {
  using key = std::tuple<const algorithm*, collective, int, int, std::uint64_t, bool, bool, std::size_t,
                         std::vector<std::uint64_t>, std::vector<std::uint64_t>>;
  static std::mutex guard;
  static std::map<key, std::size_t> memo;
  const key k{&x, b.coll, b.p, b.root, b.count, b.commutative, b.in_place, b.elem_size, b.counts, b.displs};
  {
    std::lock_guard lock(guard);
    if (const auto it = memo.find(k); it != memo.end()) return it->second;
  }
  std::size_t n = 0;
  for (int j = 0; j < b.p; ++j) n = std::max(n, phase_length(x.build(b, j)));
  std::lock_guard lock(guard);
  if (memo.size() >= 4096) memo.clear();
  memo.emplace(k, n);
  return n;
}

// Phase `ph`: collective `c` on `count` elements in each group of the level (the group's
// leader the root where `c` is rooted), this rank's part placed by `at` if it is in a group
// of more than one rank. With `pad`, every rank then spends the longest group's rounds on
// it, so that the next phase starts at the same round everywhere; the last phase of a
// schedule needs none. `prepare(b, members)` adjusts a group's phase call (in place, a
// v-collective's counts by its members ...).
template <class Prepare>
void add_phase(schedule& s, const coll_args& a, const hierarchy_phase& ph, collective c, std::uint64_t count,
               const phase_place& at, bool pad, Prepare prepare) {
  const auto call_of = [&](const std::vector<int>& members, int leader) {
    coll_args b = phase_args(a, c, static_cast<int>(members.size()), count, is_rooted(c) ? leader : 0);
    prepare(b, members);
    return b;
  };
  std::size_t length = 0;
  if (pad)
    for (std::size_t g = 0; g < ph.groups.size(); ++g)
      if (ph.groups[g].size() > 1) {
        const coll_args b = call_of(ph.groups[g], ph.leads[g]);
        length = std::max(length, longest_phase(phase_algorithm(c, b, ph, a.hierarchy), b));
      }
  if (ph.group.index < 0 || ph.group.members.size() < 2) return idle_rounds(s, length);
  const coll_args b = call_of(ph.group.members, ph.leader_index);
  const algorithm& x = phase_algorithm(c, b, ph, a.hierarchy);
  append_phase(s, x.build(b, ph.group.index), ph.group.members, at, length);
}
inline void add_phase(schedule& s, const coll_args& a, const hierarchy_phase& ph, collective c, std::uint64_t count,
                      const phase_place& at, bool pad) {
  add_phase(s, a, ph, c, count, at, pad, [](coll_args&, const std::vector<int>&) {});
}

// Blocks gathered up the hierarchy, packed (allgather, gather; scatter in reverse): held[i][r]
// lists, in packed order, the ranks whose blocks rank r holds before phase i; at first each
// rank its own; after a phase, each group's leader its members' in group order.
// held[phases.size()] is after the last phase: the top group's leader holds every block.
inline std::vector<std::vector<std::vector<int>>> held_blocks(int p, const std::vector<hierarchy_phase>& phases) {
  std::vector<std::vector<std::vector<int>>> held(phases.size() + 1);
  held[0].resize(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) held[0][static_cast<std::size_t>(r)] = {r};
  for (std::size_t i = 0; i < phases.size(); ++i) {
    held[i + 1] = held[i];
    const hierarchy_phase& ph = phases[i];
    for (std::size_t g = 0; g < ph.groups.size(); ++g) {
      std::vector<int> all;
      for (int m : ph.groups[g]) {
        const std::vector<int>& h = held[i][static_cast<std::size_t>(m)];
        all.insert(all.end(), h.begin(), h.end());
      }
      held[i + 1][static_cast<std::size_t>(ph.groups[g][static_cast<std::size_t>(ph.leads[g])])] = std::move(all);
    }
  }
  return held;
}

// The ranks whose blocks the top group's leader holds after the last phase (held_blocks),
// in packed order: every block, the domains' next to each other.
inline const std::vector<int>& packed_order(const std::vector<hierarchy_phase>& phases,
                                            const std::vector<std::vector<std::vector<int>>>& held) {
  const hierarchy_phase& top = phases.back();
  return held.back()[static_cast<std::size_t>(top.group.members[static_cast<std::size_t>(top.leader_index)])];
}

// The blocks of `order` (block_offset: either layout, any displacements) copied from the
// caller's send buffer into `packed`, one after the other; or (unpack) from `packed` to
// their places in the receive buffer, the gaps between them untouched.
inline void pack_blocks(schedule& s, const coll_args& a, const std::vector<int>& order, buffer_id packed) {
  std::uint64_t at = 0;
  for (int j : order) {
    const std::uint64_t n = block_count(a, j);
    s.copy(region{in_buffer, block_offset(a, j), n}, region{packed, at, n});
    at += n;
  }
}
inline void unpack_blocks(schedule& s, const coll_args& a, const std::vector<int>& order, buffer_id packed) {
  std::uint64_t at = 0;
  for (int j : order) {
    const std::uint64_t n = block_count(a, j);
    s.copy(region{packed, at, n}, region{out_buffer, block_offset(a, j), n});
    at += n;
  }
}

// The elements of the blocks of `ranks`.
inline std::uint64_t block_elements(const coll_args& a, const std::vector<int>& ranks) {
  std::uint64_t n = 0;
  for (int j : ranks) n += block_count(a, j);
  return n;
}

// A v-collective phase's counts: each member's blocks in `held` (prepare for add_phase).
inline auto counts_held(const coll_args& a, const std::vector<std::vector<int>>& held) {
  return [&a, &held](coll_args& b, const std::vector<int>& members) {
    b.counts.clear();
    for (int m : members) b.counts.push_back(block_elements(a, held[static_cast<std::size_t>(m)]));
  };
}

// Blocks scattered down the hierarchy from phase `from` (exclusive) to the innermost:
// at each phase the group's leader, holding its members' blocks packed in `packed`
// (held_blocks order), scatters them; each member keeps its part in `packed`, then puts
// its own block into its receive buffer. `received` is a temporary of the blocks' size.
inline void scatter_down(schedule& s, const coll_args& a, const std::vector<hierarchy_phase>& phases,
                         const std::vector<std::vector<std::vector<int>>>& held, std::size_t from, buffer_id packed,
                         buffer_id received, int rank) {
  for (std::size_t i = from; i-- > 0;) {
    const hierarchy_phase& ph = phases[i];
    add_phase(s, a, ph, collective::scatterv, 0, {region{packed, 0, 0}, region{received, 0, 0}}, i > 0,
              counts_held(a, held[i]));
    if (ph.group.members.size() > 1 && ph.group.index >= 0) {
      const std::uint64_t n = block_elements(a, held[i][static_cast<std::size_t>(rank)]);
      s.copy(region{received, 0, n}, region{packed, 0, n});
    }
  }
  s.copy(region{packed, 0, block_count(a, rank)}, region{out_buffer, 0, block_count(a, rank)});
}

// The elements each participant of the phase's level holds when the blocks (`total`
// elements) are shared equally among them: what the packed phases are costed with.
inline std::uint64_t equal_share(const hierarchy_phase& ph, std::uint64_t total) {
  std::uint64_t members = 0;
  for (const auto& g : ph.groups) members += g.size();
  return members ? (total + members - 1) / members : 0;
}

// A hierarchical algorithm's predicted time for `a` with elements of `elem` bytes: its
// slowest group's at every phase, phase after phase. per_level(phase, model, cost_of) returns
// a phase's time, where cost_of(c, count) is collective c's on `count` elements per rank in
// the level's largest group, run by the phase's algorithm under the level's model. Without a
// hierarchy the one phase runs under `flat` (the model the caller costs with).
template <class F>
double hierarchy_cost(const coll_args& a, std::size_t elem, const cost_model& flat, F per_level) {
  coll_args sized = a;
  sized.elem_size = elem;
  double t = 0;
  for (const hierarchy_phase& ph : phases_up(sized, 0)) {
    if (ph.largest < 2) continue;
    const cost_model& m = a.hierarchy ? *ph.cost : flat;
    const auto cost_of = [&](collective c, std::uint64_t count) {
      const coll_args b = phase_args(sized, c, ph.largest, count);
      const algorithm& x = phase_algorithm(c, b, ph, a.hierarchy);
      return x.cost ? x.cost(b, elem, m) : 0.0;
    };
    t += per_level(ph, cost_of);
  }
  return t;
}

}  // namespace ranklab::detail
