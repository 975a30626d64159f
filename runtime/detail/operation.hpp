// One collective (or point-to-point round) in progress at one rank: which schedule, which
// buffers, how far it got. Blocking calls and requests advance operations the same way.
#pragma once
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <vector>

#include "detail/aligned_buffer.hpp"
#include "detail/transfer.hpp"
#include "mailbox/mailbox.hpp"
#include "ranklab/datatype.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

struct cached_schedule;

// What every message of a call carries and every received message must match.
struct call_tag {
  std::uint8_t coll = point_to_point;
  std::uint32_t call = 0;  // sequence number of the call at its rank (0: point-to-point)
  std::uint64_t signature = 0;
  int root = 0;
  std::uint64_t count = 0;
  const algorithm* algo = nullptr;
};

struct operation {
  std::shared_ptr<const cached_schedule> entry;  // keeps the schedule alive (collectives)
  const schedule* plan = nullptr;
  call_tag tag;
  const char* name = "schedule";  // for errors and deadlock reports
  datatype type;
  op combine_op;
  std::exception_ptr error;  // set when the operation failed
  reduction red;
  // Looks the reduction kernel up on the first step or message that reduces.
  void need_kernel(combine how) {
    if (how != combine::copy && !red.kernel) red.kernel = kernel_for(combine_op, type);
  }
  buffer_table buffers;
  aligned_bytes scratch;  // nonblocking operations own their scratch
  std::size_t scratch_bytes = 0;

  // Progress: the prologue, then per round: pre steps, post the send, take the receive,
  // wait for the send's release, post steps.
  bool publishes = false;      // its plan shares buffers (fences, direct steps): see prepare()
  bool messages_only = false;  // its rounds are messages and local steps: see run_quick()
  bool started = false;
  bool complete = false;
  std::size_t round = 0;
  bool pre_done = false;
  bool posted = false;
  bool by_descriptor = false;
  bool received = false;
  bool fence_arrived = false;
  bool fence_left = false;           // passed the round's fence (and woke its sleepers)
  std::uint64_t fence_number = 0;    // of the fence met last, counted per call slot
  std::uint64_t fence_target = 0;    // counter fence: the counter value that lets us pass
  int fence_waits_for = every_rank;  // of the fence met last: round::waits_for
  int fence_next_seen = 0;           // flag fence: the first rank not yet seen at the fence
  std::uint64_t round_begin_ns = 0;
  std::uint64_t received_bytes = 0;
  // The large-message descriptor that receivers read. Heap-allocated so that a failed
  // operation can hand a descriptor a receiver may still look at over to the team
  // (team_state::retire) instead of freeing it with the operation.
  std::unique_ptr<send_descriptor> descriptor;
  // A message posted as an express descriptor (by_descriptor, express_seq != 0): its line
  // in the mailbox to `descriptor_to`.
  std::uint32_t express_seq = 0;
  int descriptor_to = no_rank;
  // Every message region of the schedule resolved to memory once, when the operation is
  // prepared (indexed like the schedule's regions: round::send_begin...), so that a round,
  // and a repeated call, resolves nothing; and the current round's part of them.
  std::vector<piece> all_send_pieces, all_recv_pieces;
  std::span<const piece> send_pieces, recv_pieces;
  // A messages_only plan's local steps resolved to memory the same way (indexed like
  // schedule::steps(); the first prologue_steps are the prologue): run_quick() runs them
  // without looking at the schedule's regions.
  std::vector<resolved_step> resolved_steps;
  std::size_t prologue_steps = 0;

  // Point-to-point rounds are not schedules: a single round described here.
  bool p2p = false;
  int p2p_to = no_rank, p2p_from = no_rank;
  std::uint64_t p2p_capacity = 0;

  void reset_round() {
    pre_done = posted = by_descriptor = received = fence_arrived = fence_left = false;
    express_seq = 0;
  }
  // Rewinds the operation to its first round (a new call of the same preparation).
  void rewind() {
    started = complete = false;
    if (error) error = nullptr;  // a call into the runtime library even when null
    round = 0;
    reset_round();
  }
};

// A message taken from a mailbox before the call it belongs to asked for it (another
// outstanding call, or one not started yet).
struct stashed_message {
  int from = no_rank;
  message_header header;
  std::vector<chunk> payload;  // eager payload
};

}  // namespace ranklab::detail
