// A rank's handle on the thread runtime: its number, the team size, one-ported
// send-receive rounds and the collectives (the typed surface of collectives.hpp, shared
// with every backend). Collectives build (and cache) the rank's schedule of the chosen
// algorithm and run it on the thread executor.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <ranges>
#include <span>
#include <string_view>
#include <vector>

#include "ranklab/call.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/collectives.hpp"
#include "ranklab/datatype.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/request.hpp"
#include "ranklab/schedule.hpp"
#include "ranklab/team.hpp"

namespace ranklab {

namespace detail {
struct team_state;
struct comm_state;
}  // namespace detail
struct algorithm;

class comm : public collectives<comm, request> {
 public:
  comm(comm&&) noexcept;
  comm& operator=(comm&&) noexcept;
  ~comm();

  int rank() const { return rank_; }
  int size() const { return size_; }
  // This rank's number in the team (the team's own comm: rank()).
  int world_rank() const;

  // ---- communicators ------------------------------------------------------------------------
  // Collective over this comm's ranks, with MPI's semantics (docs/communicators.md). The new
  // comms are groups of the same team's ranks with their own numbering, mailboxes and call
  // sequence: calls on one never match calls on another. A comm lives while a handle of it
  // does; all ranks must end theirs (a handle must not outlive its team).
  //
  // Ranks passing the same colour form a comm, numbered by (key, rank here); a negative
  // colour (ranklab::undefined) takes part but gets std::nullopt. One allgather of
  // (colour, key) here, then each new comm's first rank creates it and hands it to the rest.
  std::optional<comm> split(int color, int key = 0);
  // The same ranks in the same order, with a call sequence of their own (a library dups the
  // comm it is given so that its calls never meet the caller's).
  comm dup() const;
  // Collective over `members` only (ranks of this comm, distinct; the caller among them):
  // the new comm's rank i is members[i]. Ranks outside are not involved. Every member must
  // pass the same list (a member that does not gets a usage_error).
  std::optional<comm> create(std::span<const int> members);
  // One comm per hardware domain holding the calling ranks' cores (team_options::topology:
  // the machine's, from hwloc, or a synthetic one), numbered by rank here.
  comm split_type(domain d);
  // The index of the domain of kind `d` holding this rank's core (what split_type splits
  // by), and how many the machine (or the synthetic topology) has.
  int domain_index(domain d) const;
  int domain_count(domain d) const;

  // ---- one-ported rounds ------------------------------------------------------------------
  // Sends `send` to `dest` and receives from `source` into `recv` in one round; either peer
  // may be no_rank. Returns the number of bytes received. A message larger than `recv`
  // raises size_mismatch_error naming both ranks.
  std::size_t sendrecv_bytes(int dest, std::span<const std::byte> send, int source, std::span<std::byte> recv);

  template <buffer_range S, buffer_range R>
  std::size_t sendrecv(int dest, const S& send, int source, R&& recv) {
    return sendrecv_bytes(dest, std::as_bytes(std::span(send)), source, std::as_writable_bytes(std::span(recv))) /
           sizeof(std::ranges::range_value_t<R>);
  }
  template <buffer_range S>
  void send(int dest, const S& data) {
    sendrecv_bytes(dest, std::as_bytes(std::span(data)), no_rank, {});
  }
  // Returns the number of elements received.
  template <buffer_range R>
  std::size_t recv(int source, R&& data) {
    return sendrecv_bytes(no_rank, {}, source, std::as_writable_bytes(std::span(data))) /
           sizeof(std::ranges::range_value_t<R>);
  }

  // ---- collectives --------------------------------------------------------------------------
  // barrier, bcast, reduce, allreduce, scan, exscan, allgather, reduce_scatter_block,
  // scatter, gather, alltoall and the v-collectives, each with its i-form returning a
  // request: inherited from collectives<comm, request> (ranklab/collectives.hpp).

  // ---- the general entry points -----------------------------------------------------------
  // Runs one collective call: selects the algorithm, builds (or reuses) this rank's schedule,
  // checks the call against the other ranks' and executes it. `in`/`out` hold the extents
  // buffer_extents() gives for this rank.
  void run_collective(const call& c, const void* in, void* out);
  [[nodiscard]] request start_collective(const call& c, const void* in, void* out);
  // The persistent form: checks the call and prepares it once (persistent_request::start
  // runs it). The buffers must stay valid, and unchanged in size, while it lives.
  [[nodiscard]] persistent_request init_collective(const call& c, const void* in, void* out);
  // The typed surface's shortcut for a v-collective's repeated call (ranklab/collectives.hpp):
  // runs the call and returns true if it repeats the last one, false otherwise.
  bool repeat_collective(const detail::vcall_request& r);
  // Runs a schedule on the thread executor (for custom or hand-built schedules).
  void execute(const schedule& s, const void* in, void* out, const datatype& type, const op& reduction = ops::sum);
  // The algorithm the last collective call used and why (for --explain and logs).
  const algorithm* last_algorithm() const;
  std::string_view last_selection_reason() const;

  detail::comm_state& state() { return *state_; }

 private:
  friend class team;
  // The typed surface's shortcut for other repeated calls: the last blocking call, as
  // prepared, which it compares a call with, and running that again (only when
  // last_call().typed, which the comparison requires: so private).
  friend class collectives<comm, request>;
  const detail::last_call& last_call() const { return *last_; }
  void repeat();
  comm(detail::team_state* team, int rank);
  // A rank of a comm made from a team (split, dup, create), which the handle keeps alive.
  comm(std::shared_ptr<detail::team_state> group, int rank);
  std::optional<comm> form(std::vector<int> members, int new_rank, int leader, const char* operation);

  std::shared_ptr<detail::team_state> group_;  // for comms other than the team's own
  detail::team_state* team_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  std::shared_ptr<detail::comm_state> state_;
  const detail::last_call* last_;  // in *state_; a moved-from comm's: one that nothing repeats
};

}  // namespace ranklab
