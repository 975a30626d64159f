// The mailbox protocol: how an operation's message goes into the mailbox of a pair of
// ranks (express lane, inline, or by descriptor of the sender's memory) and how the
// receiver takes it out, in the pair's sequence order, checks it against its own call and
// copies or reduces it into place. The thread executor decides when; this decides how.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "detail/engine.hpp"
#include "detail/operation.hpp"
#include "detail/team_state.hpp"
#include "detail/transfer.hpp"
#include "mailbox/mailbox.hpp"

namespace ranklab::detail {

// Chunks of a message of `bytes`, header included when counted in.
inline std::size_t chunks_for(std::uint64_t bytes) {
  return static_cast<std::size_t>((bytes + sizeof(chunk) - 1) / sizeof(chunk));
}

// The first line's first word after the sequence number: the collective, the lines, the
// size and the call, written in one store and checked in one compare.
struct express_head_word {
  std::uint8_t coll, lines;
  std::uint16_t bytes;
  std::uint32_t call;
};
static_assert(offsetof(express_cell, lines) == offsetof(express_cell, coll) + offsetof(express_head_word, lines) &&
              offsetof(express_cell, bytes) == offsetof(express_cell, coll) + offsetof(express_head_word, bytes) &&
              offsetof(express_cell, call) == offsetof(express_cell, coll) + offsetof(express_head_word, call) &&
              sizeof(express_head_word) == 8);
inline std::uint64_t head_word(const call_tag& tag, std::uint16_t bytes, std::uint32_t lines) {
  const express_head_word w{tag.coll, static_cast<std::uint8_t>(lines), bytes, tag.call};
  std::uint64_t v;
  std::memcpy(&v, &w, sizeof v);
  return v;
}

// The first line's fields besides the sequence number (written last, to publish them):
// the head word, then the root and the signature (post_express_line says why stores count).
inline void write_head(express_cell& head, const call_tag& tag, std::uint16_t bytes, std::uint32_t lines) {
  const std::uint64_t w = head_word(tag, bytes, lines);
  std::memcpy(reinterpret_cast<std::byte*>(&head) + offsetof(express_cell, coll), &w, sizeof w);
  head.root = tag.root;
  head.signature = tag.signature;
}

// After a message that ends at box.sent: takes a line a few messages on for writing now, if
// the receiver is known to be done with it. The receiver read it last, so a store to it
// waits for the line to come back, and with a call's worth of stores queued behind that
// one a sender that runs ahead (a root's bcasts, a non-root's gathers) stalled a crossing
// on every message. (8 B at p = 2: bcast 58 -> 43 ns, scan 90 -> 60, reduce 75 -> 60.)
inline void take_line_ahead(mailbox& box) {
  if (const std::uint32_t ahead = box.sent + 1 + express_write_ahead; ahead - box.known_consumed <= express_cells)
    prefetch_for_write(&box.cell(ahead));
}

// The common small message, posted inline: one piece that fits the first line, to a lane
// with room as last known. Returns false, having done nothing, where try_post_express must
// decide. A rank that streams such messages (a non-root's gathers, a root's bcasts) has
// its last message's line still with the receiver, which polls it, and every store after
// it waits in the store queue until the line comes back; once a call's stores fill that
// queue the rank waits a crossing per call. So this path, and the repeated call around it
// (run_quick, comm::repeat, detail::last_call), keep their stores few: no call frame, the
// head in three stores.
inline bool post_express_line(team_state& t, int me, mailbox& box, int to, const call_tag& tag, const piece& pc) {
  if (pc.bytes > express_head_payload || pc.bytes > t.options.eager_limit ||
      box.sent + 1 - box.known_consumed > express_cells)
    return false;
  const std::uint32_t seq = box.sent + 1;
  express_cell& head = box.cell(seq);
  write_head(head, tag, static_cast<std::uint16_t>(pc.bytes), 1);
  copy_line_part(head.payload, pc.data, pc.bytes);
  box.sent = seq;
  head.seq.store(seq, std::memory_order_release);
  take_line_ahead(box);
  count_progress(t, me);
  t.ring(to);
  return true;
}

// Polls `cell`, the line where message `seq` of `box` must arrive, until it has (true) or
// until it cannot come there or the caller must stop: a message in the queue (which comes
// first), the spin limit, a failed team (looked at every 64 polls). `polls` counts on.
inline bool await_express_line(const team_state& t, const mailbox& box, const express_cell& cell, std::uint32_t seq,
                               int& polls) {
  while (cell.seq.load(std::memory_order_acquire) != seq) {
    if (box.queue.read_available() > 0 || polls >= t.spin_limit) return false;
    if ((++polls & 63) == 0 && t.failed.load(std::memory_order_relaxed)) return false;
    cpu_relax();
  }
  return true;
}

// The common small receive of an exchange, inline: a message of `bytes`, at most the first
// line's payload, into the pieces `into` (their sizes add up to `bytes`), in a round that
// has sent its own message (the two ranks go in step), copied or reduced by a builtin
// operator (which cannot throw) straight from the line. Polls as take_expected_express
// does; returns false, having taken nothing, where that must decide (the message has not
// come, has come another way, or is not the one expected). Everything from the message's
// arrival to the caller's next message lies on the exchange's critical path, and at 8 B
// that path was mostly instructions (docs/runtime.md, "An exchange's receive inline"): so the
// expected head is built before the wait and checked in two compares, and the bookkeeping
// is what an exchange needs (no read-ahead: the next line is polled soon anyway). Out of
// line: inlined into run_quick it cost the rooted 8-byte calls 2 ns (bcast 28 -> 30 ns, the
// same instructions counted on the way), in turn with the library before.
[[gnu::noinline]] inline bool take_exchange_line(team_state& t, comm_state& cs, int me, operation& op, int from,
                                                 combine how, std::span<const piece> into, std::uint64_t bytes,
                                                 int& polls) {
  mailbox& box = t.box(from, me);
  const std::uint32_t seq = box.next_to_take();
  const express_cell& cell = box.cell(seq);
  const std::uint64_t want = head_word(op.tag, static_cast<std::uint16_t>(bytes), 1);
  if (!await_express_line(t, box, cell, seq, polls)) return false;
  std::uint64_t got;
  std::memcpy(&got, reinterpret_cast<const std::byte*>(&cell) + offsetof(express_cell, coll), sizeof got);
  if (got != want || cell.signature != op.tag.signature) return false;
  const std::byte* at = cell.payload;
  for (const piece& pc : into) {
    if (how == combine::copy)
      copy_line_part(pc.data, at, pc.bytes);
    else
      transfer(at, pc.data, pc.bytes, how, op.red);
    at += pc.bytes;
  }
  if (box.taken_through(seq)) cs.takes_unpublished = true;
  t.ring(from);
  op.received_bytes = bytes;
  count_progress(t, me);
  return true;
}

// Posts the message of `pieces` (`bytes` in all) to `to` in the express lane, if it fits
// the lane's lines and the lane has room. Returns whether it did.
bool try_post_express(engine& e, mailbox& box, int to, const call_tag& tag, std::span<const piece> pieces,
                      std::uint64_t bytes);

// Posts the operation's message of `pieces` to `to`: in the express lane when it fits one
// line, inline in the queue when small and the queue has room, else by descriptor (the
// receiver copies from our memory and releases us). Returns false when the mailbox is full.
bool try_post(engine& e, operation& op, int to, std::uint64_t bytes);

// Takes the operation's message from `from` if it has arrived: first among the early
// messages, then from the mailbox, stashing messages of other calls met on the way.
// Throws mismatch_error or size_mismatch_error when the message is not the one expected.
bool try_receive(engine& e, operation& op, int from);

// Takes the message `op` expects in round `rd` (into the pieces `into`; `posted`: the round
// has sent its message) if it is the next in the express lane from rd.recv_from, polling
// for it while `polls` (counted up) stays below the spin limit: the receive of
// operation::messages_only calls without try_receive's generality. The round is passed,
// not read from `op`, because run_quick keeps its progress out of `op` until it stops.
// Returns false, having taken nothing, when the message has not come, or has come some
// other way (the queue), or is not the one expected (another call, a mismatch, a
// descriptor), and when the team has failed: try_receive then takes it, or explains it.
bool take_expected_express(engine& e, operation& op, const round& rd, std::span<const piece> into, bool posted,
                           int& polls);

// Lets every sender to this rank know how far the rank has taken its messages (see
// mailbox::taken_through): before the rank blocks, and when its comm ends.
void publish_taken_from_all(engine& e);

}  // namespace ranklab::detail
