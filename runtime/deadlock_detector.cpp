// The deadlock detector. A rank that sleeps (or only polls a request) runs it now and then;
// when every live rank has been stuck without any message moving for the team's
// deadlock_timeout, the team fails with a report of who waits for whom — a root mismatch
// when the ranks of a comm are in the same call of a rooted collective with different roots,
// a mismatch when they are in different collective calls, else a deadlock.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <charconv>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "detail/team_state.hpp"

namespace ranklab::detail {

namespace {
// What rank r of the team waits for, read from its slot in the team (where it sleeps, in
// whichever comm). `in` is the comm it waits in (null: the team's own, or one that has
// gone meanwhile); its peers are named in its numbering and the team's.
std::string describe_wait(rank_slot& s, int rank, bool polling, const team_state* in) {
  const int peer = s.waiting_peer.load(std::memory_order_relaxed);
  std::string where =
      s.call.load() ? fmt::format(" in collective #{} {}", s.call.load(), s.call_description()) : " in point-to-point";
  if (in) where += in->comm_text();
  if (s.finished.load()) return fmt::format("rank {} has returned", rank);
  if (!s.attached.load()) return fmt::format("rank {} never attached to the team", rank);
  if (polling) where += " (polling request::test)";
  const std::string peer_text =
      in ? fmt::format("rank {} (its comm rank {})", in->world_rank(peer), peer) : fmt::format("rank {}", peer);
  switch (static_cast<wait_reason>(s.waiting_for.load(std::memory_order_relaxed))) {
    case wait_reason::message_from:
      return fmt::format("rank {} waits for a message from {}{}", rank, peer_text, where);
    case wait_reason::release_by:
      return fmt::format("rank {} waits for {} to take its message{}", rank, peer_text, where);
    case wait_reason::space_to:
      return fmt::format("rank {} waits for space in its mailbox to {}{}", rank, peer_text, where);
    case wait_reason::fence:
      return fmt::format("rank {} waits at a fence for the other ranks{}", rank, where);
    case wait_reason::none:
      break;
  }
  return fmt::format("rank {} is running", rank);
}

// The collective and root of a rooted call, read back from its description (describe() in
// collective.cpp: "bcast(p=8, root=0, count=10) algorithm=binomial"); nothing for others.
struct rooted_call {
  collective coll;
  int root;
};
std::optional<rooted_call> rooted_call_in(std::string_view text) {
  const std::size_t open = text.find('(');
  if (open == std::string_view::npos) return std::nullopt;
  const std::optional<collective> c = collective_from_name(text.substr(0, open));
  if (!c || !is_rooted(*c)) return std::nullopt;
  constexpr std::string_view key = ", root=";
  const std::size_t at = text.find(key, open);
  if (at == std::string_view::npos) return std::nullopt;
  int root = 0;
  const char* first = text.data() + at + key.size();
  if (std::from_chars(first, text.data() + text.size(), root).ec != std::errc{}) return std::nullopt;
  return rooted_call{*c, root};
}

// The roots the ranks of one comm passed to the calls its stuck ranks are in: per call
// number and collective, comm rank -> root.
struct comm_roots {
  team_state* comm = nullptr;
  std::map<std::pair<std::uint32_t, collective>, std::map<int, int>> calls;
};
}  // namespace

void team_state::detect_deadlock(bool certain) {
  // One detector per team, whichever comm its ranks wait in: a rank blocked in one comm may
  // wait for a rank that is busy in another, which is no deadlock until every rank is stuck.
  if (world != this) return world->detect_deadlock(certain);
  std::unique_lock lock(detector_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || failed.load()) return;
  const auto now = std::chrono::steady_clock::now();
  std::uint64_t progress = 0;
  for (int r = 0; r < p; ++r) progress += slots[r].progress.load(std::memory_order_relaxed);
  {
    std::lock_guard comms_lock(registry->mutex);
    for (const team_state* c : registry->comms)
      for (int r = 0; r < c->p; ++r) progress += c->slots[r].progress.load(std::memory_order_relaxed);
  }
  // A rank that has not attached cannot send anything either: ranks waiting for it are as
  // stuck as in a deadlock (a team whose application threads never all attach).
  // A rank that only polls an unfinished request is stuck as well.
  int unattached = 0, polling_ranks = 0, blocked = 0;
  const bool starting = ranks_started_by_run.load();
  for (int r = 0; r < p; ++r) {
    unattached += !starting && !slots[r].attached.load();
    polling_ranks += polling(slots[r]);
    blocked += slots[r].blocked.load();
  }
  const bool all_stuck = blocked + finished.load() + unattached + polling_ranks >= p;
  // `certain` (every rank fiber parked, and nothing outside the team can wake one): no
  // timeout to wait for.
  if (!certain) {
    if (!all_stuck || progress != detector_progress_ || detector_since_ == std::chrono::steady_clock::time_point{}) {
      detector_progress_ = progress;
      detector_since_ = all_stuck ? now : std::chrono::steady_clock::time_point{};
      return;
    }
    if (now - detector_since_ < options.deadlock_timeout) return;
  }

  // Every live rank has slept without progress for the whole timeout: report who waits for
  // whom. Ranks inside different collectives at that point is a mismatch, not a deadlock.
  // Ranks of one comm in different calls of it is a mismatch; ranks stuck in different
  // comms wait for each other across them, a deadlock (as in MPI).
  std::string lines;
  bool mismatch = false;
  struct first_of_comm {
    std::uint32_t call;
    std::string text;
  };
  std::map<std::uint32_t, first_of_comm> firsts;
  // Ranks of one comm in the same call of a rooted collective with different roots are a
  // root mismatch, whatever else differs. The roots come from the stuck ranks' calls and
  // from the messages that wait, untaken, in the comm's express lanes: their headers carry
  // their senders' roots, so a rank that has returned from the call (a "root" of a linear
  // bcast whose messages nobody takes) or gone on is counted too.
  std::map<std::uint32_t, comm_roots> roots_by_comm;
  std::string roots;
  {
    std::lock_guard comms_lock(registry->mutex);
    for (int r = 0; r < p; ++r) {
      rank_slot& s = slots[r];
      const std::uint32_t id = s.waiting_comm.load(std::memory_order_relaxed);
      team_state* in = nullptr;
      for (team_state* c : registry->comms)
        if (id != 0 && c->comm_id == id) in = c;
      lines += "\n  " + describe_wait(s, r, polling(s), in);
      if (s.finished.load() || !s.attached.load()) continue;
      const std::uint32_t c = s.call.load();
      const std::string text = s.call_description();
      auto [it, fresh] = firsts.try_emplace(id, first_of_comm{c, text});
      if (!fresh && (c != it->second.call || it->second.text != text)) mismatch = true;
      team_state* comm = id == 0 ? this : in;  // null: the comm has gone meanwhile
      const std::optional<rooted_call> rc = rooted_call_in(text);
      if (!comm || c == 0 || !rc) continue;
      int comm_rank = r;
      if (comm != this) {
        const auto at = std::find(comm->world_ranks.begin(), comm->world_ranks.end(), r);
        if (at == comm->world_ranks.end()) continue;
        comm_rank = static_cast<int>(at - comm->world_ranks.begin());
      }
      comm_roots& cr = roots_by_comm[id];
      cr.comm = comm;
      cr.calls[{c, rc->coll}][comm_rank] = rc->root;
    }
    for (auto& [id, cr] : roots_by_comm) {
      // The queue's front is its receiver's to read: the express lanes only (every message
      // of a rooted call of up to 2 KiB, and any descriptor up to 64 KiB, travels there).
      for (const pending_message& m : cr.comm->pending_messages(/*queue=*/false)) {
        if (m.coll >= collective_count) continue;
        const auto call = cr.calls.find({m.call, static_cast<collective>(m.coll)});
        if (call != cr.calls.end()) call->second.emplace(m.from, m.root);  // a stuck rank's own stays
      }
      for (const auto& [key, root_of] : cr.calls) {
        const int first_root = root_of.begin()->second;
        if (std::all_of(root_of.begin(), root_of.end(), [&](const auto& e) { return e.second == first_root; }))
          continue;
        roots += (roots.empty() ? "" : "; ") + cr.comm->root_mismatch(key.second, key.first, root_of);
      }
    }
  }
  if (!roots.empty()) {
    const std::string what = roots + "; ranks are blocked in different collective calls:" + lines;
    fail(no_rank, std::make_exception_ptr(mismatch_error(no_rank, "mismatch detection", what)), what,
         failure_kind::mismatch);
  } else if (mismatch)
    fail(no_rank,
         std::make_exception_ptr(
             mismatch_error(no_rank, "mismatch detection", "ranks are blocked in different collective calls:" + lines)),
         "ranks are blocked in different collective calls:" + lines, failure_kind::mismatch);
  else
    fail(no_rank,
         std::make_exception_ptr(deadlock_error(no_rank, "deadlock detection", "every live rank is blocked:" + lines)),
         "every live rank is blocked:" + lines, failure_kind::deadlock);
}

}  // namespace ranklab::detail
