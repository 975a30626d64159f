// A schedule is one rank's part of a collective, as data: a list of one-ported rounds.
// Each round sends at most one message and receives at most one, each message being a list
// of buffer regions (so packed messages need no staging copy), with local copy/reduce
// steps before and after. Builders in algorithms/ produce schedules; executors (thread,
// sequential, MPI) run them; the verifier checks them. Counts are in elements so one
// schedule serves every datatype.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ranklab/errors.hpp"

namespace ranklab {

using buffer_id = std::uint16_t;
inline constexpr buffer_id in_buffer = 0;      // the caller's send buffer (read only)
inline constexpr buffer_id out_buffer = 1;     // the caller's receive buffer
inline constexpr buffer_id first_scratch = 2;  // executor-allocated temporaries
inline constexpr buffer_id no_buffer = 0xFFFF;

// Whom a fence round waits for once it has arrived (round::waits_for): every rank (the
// barrier of schedule::fence), one rank, or nobody (no_rank: arrive only).
inline constexpr int every_rank = -2;

// Bytes a rank's fence can carry (schedule::fence_payload): what fits in the cache line
// the fence is announced in, next to its count and the call's signature; and in teams of
// at most wide_fence_payload_ranks, a wide payload in lines of its own beside it (a reader
// then fetches those lines too, but no second fence).
inline constexpr std::uint64_t fence_payload_bytes = 40;
inline constexpr std::uint64_t wide_fence_payload_bytes = 2048;
inline constexpr int wide_fence_payload_ranks = 8;
// The largest fence payload a team of p ranks carries.
constexpr std::uint64_t fence_payload_capacity(int p) {
  return p <= wide_fence_payload_ranks ? wide_fence_payload_bytes : fence_payload_bytes;
}

struct region {
  buffer_id buffer = out_buffer;
  std::uint64_t offset = 0;  // elements
  std::uint64_t count = 0;   // elements
  friend bool operator==(const region&, const region&) = default;
};

// How arriving data (a message or a local source) lands in its destination.
enum class combine : std::uint8_t {
  copy,             // dst = data
  reduce_in_left,   // dst = data (+) dst   (MPI_User_function order: "in" on the left)
  reduce_in_right,  // dst = dst (+) data
};

struct local_step {
  region src;
  region dst;
  combine how = combine::copy;
  // Shared-memory direct algorithms only (outside the one-ported model): read `src` from
  // this rank's buffers instead of our own. Safe between two fences (fence() or
  // fence_rounds()) during which the owner does not write that region.
  int src_rank = no_rank;
  // Likewise, write `dst` into this rank's buffers (a push): safe between two fences during
  // which the owner neither reads nor writes that region.
  int dst_rank = no_rank;
};

struct round {
  int send_to = no_rank;
  int recv_from = no_rank;
  combine recv_how = combine::copy;
  std::uint32_t send_begin = 0, send_end = 0;                 // into schedule::send_regions()
  std::uint32_t recv_begin = 0, recv_end = 0;                 // into schedule::recv_regions()
  std::uint32_t pre_begin = 0, post_begin = 0, post_end = 0;  // into schedule::steps()
  // A team-wide fence instead of messages: no rank runs the round's post steps before
  // every rank has run its pre steps (shared-memory direct algorithms only).
  bool fence = false;
  // A fence that waits for less than every rank (schedule::fence_for): one rank, or nobody.
  int waits_for = every_rank;
  bool communicates() const { return send_to != no_rank || recv_from != no_rank || fence; }
};

class schedule {
 public:
  schedule() = default;
  schedule(int rank, int p, std::uint64_t in_count, std::uint64_t out_count);

  // ---- building -----------------------------------------------------------------------
  // Opens the next round. Local steps added before any round form the prologue; inside a
  // round they run before the messages until a send or receive is added, after them from
  // then on.
  void next_round();
  void send(int to, region r);
  void recv(int from, region r, combine how = combine::copy);
  void copy(region src, region dst) { local(src, dst, combine::copy); }
  void reduce(region src, region dst, combine how) { local(src, dst, how); }
  // A step reading another rank's buffer directly (shared-memory direct algorithms).
  void remote(int rank, region src, region dst, combine how = combine::copy);
  // A step writing our `src` into another rank's buffer directly (shared-memory direct
  // algorithms): lets a rank with nothing else to do share the copying.
  void push(int rank, region src, region dst, combine how = combine::copy);
  // Appends a dissemination barrier (ceil(log2 p) rounds of empty messages): afterwards
  // every rank has finished everything before it, so buffers can be read directly.
  void fence_rounds();
  // The same guarantee in one round, by shared memory: the thread executor's ranks meet at
  // a counter (the last to arrive wakes the others) instead of exchanging log p messages.
  // Steps added after it run after the fence. Outside the one-ported model.
  void fence();
  // A fence after which this rank waits only for rank `waits_for` (no_rank: for nobody),
  // for schedules with a fence payload that read after it nothing but that rank's payload
  // (a root's data, or nothing at all): the others need not have arrived yet. Its arrival
  // still counts: the executor holds this rank's next payload in the call slot until every
  // rank has arrived here, so no payload is overwritten before it was read.
  void fence_for(int waits_for);
  buffer_id scratch(std::uint64_t count);  // a new temporary buffer of `count` elements
  // A temporary that travels with the schedule's one fence (at most
  // fence_payload_capacity(p) bytes): written before the fence, read by any rank (remote)
  // after it until the call ends. The thread executor keeps it in the rank's fence line, so
  // reading it costs the cache-line crossing that passing the fence costs anyway, or with
  // `wide` (the call's largest payload exceeds fence_payload_bytes; the same on every rank
  // of the call) in lines beside it. It outlives the call, so no withdrawing fence is
  // needed. Elsewhere it is an ordinary temporary.
  buffer_id fence_payload(std::uint64_t count, bool wide = false);
  // Removes trailing rounds without communication or local steps.
  void trim();

  // ---- reading ------------------------------------------------------------------------
  int rank() const { return rank_; }
  int size() const { return p_; }
  std::uint64_t in_count() const { return in_count_; }
  std::uint64_t out_count() const { return out_count_; }
  std::uint64_t buffer_count(buffer_id b) const;  // elements in buffer b
  std::span<const std::uint64_t> scratch_counts() const { return scratch_; }
  std::span<const round> rounds() const { return rounds_; }
  std::span<const region> send_regions(const round& r) const;
  std::span<const region> recv_regions(const round& r) const;
  std::span<const local_step> pre_steps(const round& r) const;
  std::span<const local_step> post_steps(const round& r) const;
  std::span<const local_step> prologue() const;
  // Every local step, the prologue's first, then each round's (round::pre_begin...).
  std::span<const local_step> steps() const { return steps_; }
  bool reads_remote() const { return reads_remote_; }
  // Whether a step reads or writes another rank's buffers themselves (remote steps from
  // anything but the fence payload, and pushes): only then must the others keep theirs
  // published and wait for this rank's reads before they unwind. Payloads live in the team.
  bool touches_remote_buffers() const { return touches_remote_buffers_; }
  buffer_id payload_buffer() const { return payload_; }  // no_buffer: none
  bool payload_wide() const { return payload_wide_; }
  std::uint64_t send_count(const round& r) const;  // elements in the round's message
  std::uint64_t recv_count(const round& r) const;
  // Index of the last round that communicates, plus one.
  std::size_t communication_rounds() const;

  // A readable listing, one line per round, for teaching and debugging.
  std::string describe() const;

 private:
  void local(region src, region dst, combine how, int src_rank = no_rank, int dst_rank = no_rank);
  round& current(const char* what);

  int rank_ = 0;
  int p_ = 1;
  std::uint64_t in_count_ = 0;
  std::uint64_t out_count_ = 0;
  std::vector<std::uint64_t> scratch_;
  std::vector<round> rounds_;
  std::vector<region> send_regions_;
  std::vector<region> recv_regions_;
  std::vector<local_step> steps_;
  std::uint32_t prologue_end_ = 0;
  bool reads_remote_ = false;
  bool touches_remote_buffers_ = false;
  buffer_id payload_ = no_buffer;
  bool payload_wide_ = false;
};

// All ranks' schedules of one collective call.
using schedule_set = std::vector<schedule>;

}  // namespace ranklab
