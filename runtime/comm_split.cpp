// Communicators made from a comm: split, dup, create and split_type (docs/communicators.md).
// A new comm is a team_state of its own for its ranks, linked to the team's (see
// detail/team_state.hpp); forming one costs the parent one allgather of (colour, key) for
// split and dup, nothing for create, then the new comm's first rank creates its state and
// hands it to each other member through that member's slot.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "detail/comm_state.hpp"
#include "detail/team_state.hpp"
#include "detail/topology.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/hierarchy.hpp"

namespace ranklab {

using detail::rank_slot;
using detail::team_state;

int comm::world_rank() const { return team_ ? team_->world_rank(rank_) : rank_; }

namespace {
// What every comm-forming call checks first: a usable comm of a team that has not failed.
void require_comm(team_state* t, const detail::comm_state* cs, int rank, const char* operation) {
  detail::require_usable(t, cs, rank, operation);
  t->check_failure(rank, operation);
}

// "1, 5, 6": ranks as errors list them.
std::string listed(std::span<const int> ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", ranks[i]);
  return out;
}
}  // namespace

// `members`: ranks here, in the new comm's order; this rank is members[new_rank]. The
// leader (members[0]) creates the comm; the others wait for it in their slots.
std::optional<comm> comm::form(std::vector<int> members, int new_rank, int leader, const char* operation) {
  team_state& parent = *team_;
  std::shared_ptr<team_state> group;
  if (rank_ == leader) {
    std::vector<int> world(members.size());
    for (std::size_t i = 0; i < members.size(); ++i) world[i] = parent.world_rank(members[i]);
    team_state& w = *parent.world;
    group = std::make_shared<team_state>(w, std::move(world), w.next_comm_id.fetch_add(1, std::memory_order_relaxed));
    for (const int m : members) {
      if (m == rank_) continue;
      rank_slot& to = parent.slots[m];
      {
        std::lock_guard lock(to.handoff_mutex);
        to.handoffs.emplace_back(rank_, group);
      }
      parent.ring(m);
    }
  } else {
    rank_slot& mine = parent.slots[rank_];
    auto handed = [&] {
      std::lock_guard lock(mine.handoff_mutex);
      auto it =
          std::find_if(mine.handoffs.begin(), mine.handoffs.end(), [&](const auto& h) { return h.first == leader; });
      if (it == mine.handoffs.end()) return false;
      group = std::move(it->second);
      mine.handoffs.erase(it);
      return true;
    };
    parent.wait(
        rank_, handed,
        [&] {
          return std::pair{detail::wait_reason::message_from, leader};
        },
        operation);
  }
  return comm(std::move(group), new_rank);
}

std::optional<comm> comm::split(int color, int key) {
  require_comm(team_, state_.get(), rank_, "split");
  const std::array<int, 2> mine{color < 0 ? undefined : color, key};
  std::vector<int> all(2 * static_cast<std::size_t>(size_));
  allgather(std::span<const int>(mine), all);
  if (color < 0) return std::nullopt;
  std::vector<int> members;
  for (int r = 0; r < size_; ++r)
    if (all[2 * static_cast<std::size_t>(r)] == color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return all[2 * static_cast<std::size_t>(a) + 1] < all[2 * static_cast<std::size_t>(b) + 1];
  });
  const int new_rank = static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());
  const int leader = members.front();
  return form(std::move(members), new_rank, leader, "split");
}

comm comm::dup() const {
  // A dup changes nothing this handle shows (rank, size, team): its call on the comm is
  // the split's allgather, which the comm's state records, not the handle.
  return std::move(*const_cast<comm*>(this)->split(0, rank_));
}

std::optional<comm> comm::create(std::span<const int> members) {
  require_comm(team_, state_.get(), rank_, "create");
  if (members.empty()) throw usage_error(rank_, "create", "no members (a comm needs at least one rank)");
  std::vector<int> seen(static_cast<std::size_t>(size_), -1);
  int position = -1;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int m = members[i];
    if (m < 0 || m >= size_) throw usage_error(rank_, "create", fmt::format("member {} outside 0..{}", m, size_ - 1));
    if (seen[static_cast<std::size_t>(m)] >= 0)
      throw usage_error(
          rank_, "create",
          fmt::format("rank {} is listed twice (positions {} and {})", m, seen[static_cast<std::size_t>(m)], i));
    seen[static_cast<std::size_t>(m)] = static_cast<int>(i);
    if (m == rank_) position = static_cast<int>(i);
  }
  if (position < 0)
    throw usage_error(rank_, "create",
                      fmt::format("rank {} is not among the members: only the members call create", rank_));
  std::vector<int> list(members.begin(), members.end());
  std::optional<comm> made = form(list, position, list.front(), "create");
  // The leader made the comm from its own list: a member that passed another list learns
  // it here (the leader cannot wait for every member's agreement without their calls).
  const team_state& g = *made->team_;
  for (std::size_t i = 0; i < list.size(); ++i)
    if (g.world_ranks[i] != team_->world_rank(list[i])) {
      std::vector<int> ours(list.size());
      for (std::size_t j = 0; j < list.size(); ++j) ours[j] = team_->world_rank(list[j]);
      throw usage_error(rank_, "create",
                        fmt::format("the members differ between ranks: rank {} created the comm of team ranks [{}], "
                                    "this rank passed team ranks [{}]",
                                    list.front(), listed(g.world_ranks), listed(ours)));
    }
  return made;
}

namespace {
int core_of(const team_state& t, int world_rank, const detail::domain_table& d) {
  const team_state& w = *t.world;
  // A synthetic machine places rank r on its core r; on this machine, a rank counts as on
  // the core it is bound to, or where compact binding would put it when it is not bound.
  const int bound = t.options.topology.empty() ? w.slots[world_rank].binding.core : -1;
  return bound >= 0 && bound < d.cores ? bound : world_rank % d.cores;
}
// Whether `finer` splits the ranks into more groups than `coarser`, each inside one group
// of `coarser`.
bool refines(const std::vector<int>& finer, const std::vector<int>& coarser) {
  std::map<int, int> outer_of;
  for (std::size_t r = 0; r < finer.size(); ++r)
    if (const auto [it, fresh] = outer_of.emplace(finer[r], coarser[r]); !fresh && it->second != coarser[r]) return false;
  std::set<int> groups(coarser.begin(), coarser.end());
  return outer_of.size() > groups.size();
}
// The measured cost of level `d` (package, numa, l3, or machine for the whole): its own
// entry, else the nearest level out that has one, down to machine (which every file has).
// A level a file lacks coincided with one out on the machine it was measured on
// (`ranklab tune --levels` records a level only where it splits the one out), so the
// pair of cores measured there is the pair this level's phases use.
const cost_model& measured_cost(const level_costs& costs, domain d) {
  static constexpr std::array<domain, 4> nesting{domain::machine, domain::package, domain::numa, domain::l3};
  for (auto at = std::find(nesting.begin(), nesting.end(), d) + 1; at-- != nesting.begin();)
    if (const level_cost* c = costs.find(name(*at))) return c->cost;
  return costs.find("machine")->cost;
}
}  // namespace

const rank_hierarchy* detail::hierarchy_of(team_state& t) {
  std::call_once(t.hierarchy_once, [&] {
    const detail::domain_table& table = detail::domains_for(t.options.topology);
    // Read before anything is made: a bad RANKLAB_LEVEL_COSTS is this call's usage_error.
    const std::shared_ptr<const level_costs> costs = current_level_costs();
    const bool measured = costs->find("machine") != nullptr;
    auto h = std::make_unique<rank_hierarchy>();
    std::vector<int> outer(static_cast<std::size_t>(t.p), 0);
    cost_model m;
    // The finest domain holding every rank of the comm: messages between the outermost
    // domains of the hierarchy travel inside it, so top_cost is its level's.
    domain common = domain::machine;
    bool shared = true;  // every rank in one domain of each level so far
    for (domain d : {domain::package, domain::numa, domain::l3}) {
      hierarchy_level v;
      v.name = std::string(name(d));
      v.domain.resize(static_cast<std::size_t>(t.p));
      // Each rank where compact binding puts it (team rank r on core r mod cores), not where
      // it is bound: other ranks may still be attaching (binding themselves) when the first
      // call makes the hierarchy, and the hierarchy must not depend on who came first.
      for (int r = 0; r < t.p; ++r)
        v.domain[static_cast<std::size_t>(r)] =
            table.of_core[static_cast<std::size_t>(t.world_rank(r) % table.cores)][static_cast<int>(d)];
      shared = shared && std::all_of(v.domain.begin(), v.domain.end(), [&](int x) { return x == v.domain.front(); });
      if (shared) common = d;
      if (!refines(v.domain, outer)) continue;
      // Without measured level costs: each level in half the alpha and beta of the one out
      // (docs/hierarchy.md).
      m.alpha /= 2;
      m.beta /= 2;
      v.cost = measured ? measured_cost(*costs, d) : m;
      outer = v.domain;
      h->levels.push_back(std::move(v));
    }
    if (measured) {
      h->top_cost = measured_cost(*costs, common);
      h->costs_from = costs->source.empty() ? "level costs in use" : costs->source;
    }
    if (const char* named = std::getenv("RANKLAB_HIERARCHY_ALGORITHMS"))
      h->choices = rank_hierarchy::parse_choices(named);
    t.hierarchy = std::move(h);
  });
  const rank_hierarchy& h = *t.hierarchy;
  return h.levels.empty() && h.choices.empty() ? nullptr : &h;
}

int comm::domain_index(domain d) const {
  require_comm(team_, state_.get(), rank_, "domain_index");
  const detail::domain_table& table = detail::domains_for(team_->options.topology);
  return table.of_core[static_cast<std::size_t>(core_of(*team_, world_rank(), table))][static_cast<int>(d)];
}

int comm::domain_count(domain d) const {
  require_comm(team_, state_.get(), rank_, "domain_count");
  return detail::domains_for(team_->options.topology).counts[static_cast<std::size_t>(d)];
}

comm comm::split_type(domain d) { return std::move(*split(domain_index(d), rank_)); }

}  // namespace ranklab
