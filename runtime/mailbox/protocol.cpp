// The mailbox protocol (see mailbox/protocol.hpp). Senders write the pair's sequence number
// last, receivers take messages strictly in that order, and a descriptor moves through
// posted -> claimed -> released (or cancelled by a sender that unwinds) by compare-exchange
// only: no message needs a lock on either side.
#include "mailbox/protocol.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "executors/schedule_cache.hpp"
#include "ranklab/errors.hpp"

namespace ranklab::detail {

namespace {

std::string describe_tag(std::uint8_t coll, std::uint32_t call, int root) {
  if (coll == point_to_point) return "a point-to-point message";
  const auto c = static_cast<collective>(coll);
  std::string s = fmt::format("collective #{} {}", call, name(c));
  if (is_rooted(c)) s += fmt::format(" root={}", root);
  return s;
}

// Whether the express lane's next `lines` cells for `box` are free (the receiver has taken
// what they held).
bool express_room(mailbox& box, std::uint32_t lines) {
  const std::uint32_t last = box.sent + lines;
  if (last - box.known_consumed > express_cells) {
    box.known_consumed = box.consumed.load(std::memory_order_acquire);
    if (last - box.known_consumed > express_cells) return false;
  }
  return true;
}

// Whether the express lane, full for a message of `lines`, has room after a short wait. A
// message that finds the lane full while its receiver is taking messages from it (it has
// taken some since the sender last found the lane full) waits a few polls for lines there
// rather than going to the queue, which costs the receiver three line crossings per
// message instead of one: a run of small one-way calls (a root's bcasts, the non-roots'
// gathers) would otherwise alternate between the two paths. A receiver that has stopped
// taking gets no wait, so the queue's capacity stays there for calls that need it, and
// neither do fibers (the receiver may need this worker to take anything), nor messages of
// more than a quarter of the lane: with fewer than four in flight, the queue's room keeps a
// run of them streaming (a run of 1 KiB scans waiting for the lane: 1.2x slower).
bool express_room_soon(engine& e, mailbox& box, std::uint32_t lines) {
  constexpr int patience = 16;                        // polls of `consumed` (and one last), each about a crossing
  constexpr std::uint32_t express_refill_lines = 16;  // room awaited: an eighth of the lane
  const bool draining = box.known_consumed != box.consumed_when_full;
  box.consumed_when_full = box.known_consumed;
  if (!draining || e.t.fibers || lines > express_cells / 4) return false;
  // Wait for room for several messages, not one: a sender let go at the first free line
  // finds the lane full again after one message and polls `consumed` after every message,
  // and each poll takes that line from the receiver, whose next store to it then waits a
  // crossing. (8 B gather at p = 2, the non-root streaming: 60-81 -> 57-59 ns per call.)
  const std::uint32_t batch = std::max(lines, express_refill_lines);
  for (int i = 0; i < patience; ++i) {
    cpu_relax();
    if (express_room(box, batch)) return true;
  }
  return express_room(box, lines);
}

}  // namespace

bool try_post_express(engine& e, mailbox& box, int to, const call_tag& tag, std::span<const piece> pieces,
                      std::uint64_t bytes) {
  if (pieces.size() == 1 && post_express_line(e.t, e.me, box, to, tag, pieces[0])) return true;
  if (bytes > express_max_bytes || bytes > e.t.options.eager_limit) return false;
  const std::uint32_t lines = express_lines(bytes);
  if (!express_room(box, lines) && !express_room_soon(e, box, lines)) return false;
  const std::uint32_t seq = box.sent + 1;
  // The pieces, packed across the lines' payload areas: the further lines first, then the
  // first line, which the receiver polls, in one burst of stores (stores to it spread
  // between those to the other lines let a polling receiver take the line back in between,
  // and each store would have to fetch it again: 64-byte sendrecv 306 -> 261 ns).
  auto pack = [&](bool first_line) {
    std::size_t at = 0;  // in the message
    for (const piece& pc : pieces)
      for (std::size_t done = 0; done < pc.bytes;) {
        const express_position pos = express_locate(at);
        if (first_line && pos.line > 0) return;
        const std::size_t n = std::min(pc.bytes - done, pos.room);
        if ((pos.line == 0) == first_line) copy_line_part(box.express_byte(seq, at), pc.data + done, n);
        done += n;
        at += n;
      }
  };
  if (lines > 1) pack(false);
  express_cell& head = box.cell(seq);
  write_head(head, tag, static_cast<std::uint16_t>(bytes), lines);
  if (lines == 1 && pieces.size() == 1)  // the common small message, without the packing loop
    copy_line_part(head.payload, pieces[0].data, bytes);
  else
    pack(true);
  box.sent += lines;
  head.seq.store(seq, std::memory_order_release);
  take_line_ahead(box);
  // After a message of many lines, take the lines the next one of its size would fill
  // beyond its first, too, while this rank goes on to wait (its receive, a release): each
  // of them, read last by the receiver, would otherwise hold a crossing when that message
  // is written. (1 KiB at p = 2: allreduce by recursive doubling 580 -> 530 ns, gather 245
  // -> 235.) Not the first, which a receiver that keeps up polls, and not after a message
  // of a few lines, where taking them cost more than it saved (64 B sendrecv, two lines a
  // message: 0.19 -> 0.21 us).
  if (lines >= express_take_ahead_lines)
    for (std::uint32_t line = box.sent + 2; line < box.sent + 1 + lines && line - box.known_consumed <= express_cells;
         ++line)
      prefetch_for_write(&box.cell(line));
  count_progress(e);
  e.t.ring(to);
  return true;
}

namespace {

// Posts the operation's message (above the eager limit) as an express descriptor, if it is
// small enough for one and the lane has a line free. Returns whether it did.
bool try_post_express_descriptor(engine& e, mailbox& box, int to, operation& op, std::uint64_t bytes) {
  if (bytes <= e.t.options.eager_limit || bytes > express_descriptor_max_bytes || !express_room(box, 1)) return false;
  const std::uint32_t seq = box.sent + 1;
  express_cell& head = box.cell(seq);
  write_head(head, op.tag, express_descriptor_mark, 1);
  box.descriptor(seq) =
      express_descriptor{op.send_pieces.data(), bytes, static_cast<std::uint32_t>(op.send_pieces.size()), 0};
  box.sent = seq;
  head.seq.store(seq, std::memory_order_release);
  op.by_descriptor = true;
  op.express_seq = seq;
  op.descriptor_to = to;
  count_progress(e);
  e.t.ring(to);
  return true;
}

}  // namespace

bool try_post(engine& e, operation& op, int to, std::uint64_t bytes) {
  mailbox& box = e.t.box(e.me, to);
  if (try_post_express(e, box, to, op.tag, op.send_pieces, bytes)) {
    op.by_descriptor = false;
    return true;
  }
  if (try_post_express_descriptor(e, box, to, op, bytes)) return true;
  auto& queue = box.queue;
  const std::size_t room = queue.write_available();
  if (room == 0) return false;
  message_header h;
  h.coll = op.tag.coll;
  h.call = op.tag.call;
  h.signature = op.tag.signature;
  h.root = op.tag.root;
  h.bytes = bytes;
  h.seq = box.sent + 1;
  const std::size_t chunks = chunks_for(header_bytes + bytes);
  if (bytes <= e.t.options.eager_limit && room >= chunks) {
    h.kind = message_kind::eager;
    h.chunks = static_cast<std::uint16_t>(chunks);
    std::memcpy(e.cs.stage[0].bytes, &h, sizeof h);
    std::byte* dst = e.cs.stage[0].bytes + header_bytes;
    for (const piece& pc : op.send_pieces) {
      if (pc.bytes) std::memcpy(dst, pc.data, pc.bytes);
      dst += pc.bytes;
    }
    queue.push(e.cs.stage.data(), chunks);
    op.by_descriptor = false;
  } else {  // large, or the mailbox is too full to take it inline
    if (!op.descriptor) op.descriptor = std::make_unique<send_descriptor>();
    send_descriptor& d = *op.descriptor;
    d.pieces = op.send_pieces.data();
    d.piece_count = static_cast<std::uint32_t>(op.send_pieces.size());
    d.state.store(send_descriptor::posted, std::memory_order_release);
    h.kind = message_kind::descriptor;
    h.descriptor = &d;
    h.chunks = 1;
    std::memcpy(e.cs.stage[0].bytes, &h, sizeof h);
    queue.push(e.cs.stage.data(), 1);
    op.by_descriptor = true;
  }
  ++box.sent;
  count_progress(e);
  e.t.ring(to);
  return true;
}

namespace {

// The receiver's side of an express descriptor (see express_descriptor::cancelled):
// whether it may copy from the sender's memory, and letting the sender go (taking the
// message off the lane), after the copy or without one.
bool claim_express(mailbox& box, std::uint32_t seq) {
  box.copying.store(seq, std::memory_order_seq_cst);
  return std::atomic_ref(box.descriptor(seq).cancelled).load(std::memory_order_seq_cst) == 0;
}
void release_express(engine& e, mailbox& box, int from, std::uint32_t seq) {
  box.taken_through(seq);
  box.publish_taken();  // the sender waits for exactly this
  e.t.ring(from);
}

// Copies (or reduces) the express descriptor's message `seq` from `from` into `dst` and
// lets its sender go, even if the copy throws (a user operator may). Throws remote_failure
// when the sender has withdrawn the message.
void copy_express_descriptor(engine& e, int from, std::uint32_t seq, std::span<const piece> dst, combine how,
                             const reduction& red, const char* operation) {
  mailbox& box = e.t.box(from, e.me);
  struct release_guard {
    engine& e;
    mailbox& box;
    int from;
    std::uint32_t seq;
    ~release_guard() { release_express(e, box, from, seq); }
  } release{e, box, from, seq};
  if (!claim_express(box, seq)) {
    e.t.check_failure(e.me, operation);  // the sender withdrew: the team has failed
    throw remote_failure(e.me, operation, from, "sender withdrew its message");
  }
  const express_descriptor& d = box.descriptor(seq);
  transfer(std::span(d.pieces, d.piece_count), dst, how, red);
}

// Lets a descriptor go without copying (the receiver rejects the message).
void release_unread(engine& e, int from, const message_header& h) {
  if (h.kind == message_kind::express_descriptor) release_express(e, e.t.box(from, e.me), from, h.seq);
  if (h.kind != message_kind::descriptor) return;
  std::uint32_t expected = send_descriptor::posted;
  if (h.descriptor->state.compare_exchange_strong(expected, send_descriptor::released)) e.t.ring(from);
}

// Delivers message h from `from` into the operation's receive pieces. `payload` holds an
// eager message's data.
void deliver(engine& e, operation& op, int from, const message_header& h, const std::byte* payload) {
  const call_tag& tag = op.tag;
  if (h.coll != tag.coll || h.signature != tag.signature) {
    release_unread(e, from, h);
    // The same call of a rooted collective with another root: a root mismatch, named as the
    // deadlock detector and the fence checks name it (team_state::root_mismatch).
    if (h.coll == tag.coll && h.call == tag.call && h.root != tag.root && tag.coll != point_to_point &&
        is_rooted(static_cast<collective>(tag.coll)))
      throw mismatch_error(e.me, op.name,
                           e.t.root_mismatch(static_cast<collective>(tag.coll), tag.call,
                                             {{e.me, tag.root}, {from, h.root}}) +
                               fmt::format(" ({} received {}'s message of the call)", e.t.rank_text(e.me),
                                           e.t.rank_text(from)));
    const bool same_kind = h.coll == tag.coll && h.root == tag.root;
    throw mismatch_error(
        e.me, op.name,
        fmt::format("collective mismatch: rank {} is in {}{}, but rank {} sent it {}{}", e.me,
                    describe_tag(tag.coll, tag.call, tag.root), op.entry ? " [" + op.entry->text + "]" : "", from,
                    describe_tag(h.coll, h.call, h.root),
                    same_kind ? " with different counts, type, operator or algorithm" : ""));
  }
  const std::uint64_t capacity =
      op.p2p ? op.p2p_capacity : op.plan->recv_count(op.plan->rounds()[op.round]) * op.type.size;
  if (h.bytes > capacity || (!op.p2p && h.bytes != capacity)) {
    release_unread(e, from, h);
    throw size_mismatch_error(e.me, op.name, from, h.bytes, capacity);
  }
  const combine how = op.p2p ? combine::copy : op.plan->rounds()[op.round].recv_how;
  op.need_kernel(how);
  if (h.kind == message_kind::eager) {
    const piece src{const_cast<std::byte*>(payload), h.bytes};
    transfer(std::span(&src, 1), op.recv_pieces, how, op.red);
  } else if (h.kind == message_kind::express_descriptor) {
    copy_express_descriptor(e, from, h.seq, op.recv_pieces, how, op.red, op.name);
  } else {
    send_descriptor& d = *h.descriptor;
    std::uint32_t expected = send_descriptor::posted;
    if (!d.state.compare_exchange_strong(expected, send_descriptor::claimed, std::memory_order_acq_rel)) {
      e.t.check_failure(e.me, op.name);  // the sender withdrew: the team has failed
      throw remote_failure(e.me, op.name, from, "sender withdrew its message");
    }
    // Release the sender even if the reduction throws (a user operator may): a claimed
    // descriptor that is never released would keep the failing sender from unwinding.
    struct release_guard {
      engine& e;
      send_descriptor& d;
      int from;
      ~release_guard() {
        d.state.store(send_descriptor::released, std::memory_order_release);
        e.t.ring(from);
      }
    } release{e, d, from};
    transfer(std::span(d.pieces, d.piece_count), op.recv_pieces, how, op.red);
  }
  op.received_bytes = h.bytes;
  count_progress(e);
}

// Records that every message of `from` through sequence number `last` has been taken
// (mailbox::taken_through) and rings the sender, which may wait for the room. A sender that
// runs ahead (the non-roots of a run of gathers, the root of a run of bcasts) has written
// the next lines already: start fetching the next one and one a few messages on, so that a
// later receive finds its line arriving rather than stalls a whole crossing on it. (Hints
// only: a line not written yet is fetched again when it is.)
void taken_through(engine& e, mailbox& box, int from, std::uint32_t last) {
  if (box.taken_through(last)) e.cs.takes_unpublished = true;
  __builtin_prefetch(&box.cell(last + 1));
  __builtin_prefetch(&box.cell(last + 6));
  e.t.ring(from);
}

// The next message of the pair (from, me), in sequence order, from the express lane or the
// queue: its header, and for an eager message its payload copied to `payload`. The message
// is consumed, and its sender rung: it may sleep waiting for the room the message took;
// except an express descriptor, which the caller must deliver, set aside (stash_express)
// or reject (release_unread) before it takes the next. Returns false if it has not
// arrived.
bool take_next(engine& e, int from, mailbox& box, message_header& h, std::vector<chunk>& payload) {
  const std::uint32_t seq = box.next_to_take();
  const express_cell& cell = box.cell(seq);
  std::uint32_t last = seq;
  if (cell.seq.load(std::memory_order_acquire) == seq) {
    h = message_header{};
    h.coll = cell.coll;
    h.call = cell.call;
    h.root = cell.root;
    h.signature = cell.signature;
    h.seq = seq;
    if (cell.bytes == express_descriptor_mark) {  // taken (released) once copied: deliver
      h.kind = message_kind::express_descriptor;
      h.bytes = box.descriptor(seq).bytes;
      return true;
    }
    h.bytes = cell.bytes;
    box.copy_express(seq, payload[0].bytes + header_bytes);
    last = seq + cell.lines - 1;
  } else {
    auto& queue = box.queue;
    // Nothing to take: the receiver has caught up, so the sender may as well learn how far.
    const auto none = [&] {
      if (box.publish_taken()) e.t.ring(from);
      return false;
    };
    if (queue.read_available() == 0) return none();
    std::memcpy(&h, queue.front().bytes, sizeof h);
    if (h.seq != seq) return none();  // an express message before it is not visible yet
    if (h.kind == message_kind::eager)
      queue.pop(payload.data(), h.chunks);
    else
      queue.pop();
  }
  taken_through(e, box, from, last);
  return true;
}

// Sets an express descriptor's message aside as an eager one: its line is needed for the
// messages after it, and its sender is waiting for its release.
void stash_express(engine& e, int from, stashed_message& m) {
  m.payload.resize(chunks_for(header_bytes + m.header.bytes));
  const piece dst{m.payload.front().bytes + header_bytes, m.header.bytes};
  copy_express_descriptor(e, from, m.header.seq, std::span(&dst, 1), combine::copy, reduction{}, "receive");
  m.header.kind = message_kind::eager;
}

}  // namespace

bool try_receive(engine& e, operation& op, int from) {
  auto& stash = e.cs.stash;
  for (auto it = stash.begin(); it != stash.end(); ++it) {
    if (it->from != from || it->header.call != op.tag.call) continue;
    const stashed_message m = std::move(*it);
    stash.erase(it);
    deliver(e, op, from, m.header, m.payload.empty() ? nullptr : m.payload.front().bytes + header_bytes);
    return true;
  }
  mailbox& box = e.t.box(from, e.me);
  message_header h;
  while (take_next(e, from, box, h, e.cs.stage)) {
    if (h.call == op.tag.call) {
      deliver(e, op, from, h, h.kind == message_kind::eager ? e.cs.stage[0].bytes + header_bytes : nullptr);
      return true;
    }
    // A message of another call (an outstanding request, or one this rank has not reached).
    stashed_message m{from, h, {}};
    if (h.kind == message_kind::express_descriptor)
      stash_express(e, from, m);
    else if (h.kind == message_kind::eager)
      m.payload.assign(e.cs.stage.begin(),
                       e.cs.stage.begin() + static_cast<std::ptrdiff_t>(chunks_for(header_bytes + h.bytes)));
    stash.push_back(std::move(m));
  }
  return false;
}

bool take_expected_express(engine& e, operation& op, const round& rd, std::span<const piece> into, bool posted,
                           int& polls) {
  const int from = rd.recv_from;
  mailbox& box = e.t.box(from, e.me);
  const std::uint32_t seq = box.next_to_take();
  const express_cell& cell = box.cell(seq);
  if (!await_express_line(e.t, box, cell, seq, polls)) return false;
  std::uint64_t bytes = 0;
  for (const piece& pc : into) bytes += pc.bytes;
  if (cell.call != op.tag.call || cell.coll != op.tag.coll || cell.signature != op.tag.signature ||
      cell.bytes != bytes || cell.bytes == express_descriptor_mark)
    return false;
  const combine how = rd.recv_how;
  op.need_kernel(how);
  // Out of the lane before anything else, as take_next does: a reduction (a user's
  // operator) may throw. Straight to its place when the message is copied there whole and
  // either has several lines or arrives in an exchange (this round sent too); a builtin
  // reduction of a one-line exchange reads the line itself (it cannot throw). Otherwise
  // through the stage, like every message of take_next: straight to its place, a one-line
  // message left a receiver of a run of one-way calls so quick that it polled each next
  // line before the sender had written it, and every sender's store to the line then waited
  // for it to come back (8 B at p = 2: bcast 36 -> 49 ns, scatter 40 -> 58). Several lines
  // gain from it (scatter 256 B 141 -> 117 ns), and so does an exchange, where the two
  // ranks go in step anyway (8 B allgather, reduce_scatter_block: about 5 ns).
  const std::uint32_t last = seq + cell.lines - 1;
  // A one-way receive (a rooted call's) asks for the message's further lines at once, up to
  // express_read_ahead of them: a copy that meets them one by one waits for each until the
  // hardware's prefetcher catches on (p = 2, medians of four rounds in turn: scatter 256 B
  // 98 -> 89 ns, exscan 256 B 102 -> 89, reduce 1 KiB 267 -> 248). The hardware fetches the
  // rest: asking for all seventeen lines of 1 KiB was 3-10% slower than asking for eight.
  // (An exchange's lines come while it posts its own message: no gain measured there.)
  if (!posted)
    for (std::uint32_t line = 1; line < cell.lines && line <= express_read_ahead; ++line)
      __builtin_prefetch(&box.cell(seq + line));
  const bool one_piece = into.size() == 1;
  if (how != combine::copy && posted && cell.lines == 1 && one_piece && op.combine_op.kind != op_kind::user) {
    transfer(cell.payload, into[0].data, bytes, how, op.red);
    taken_through(e, box, from, last);
  } else {
    const bool in_place = how == combine::copy && one_piece && (cell.lines > 1 || posted);
    std::byte* const staged = e.cs.stage[0].bytes + header_bytes;
    box.copy_express(seq, in_place ? into[0].data : staged);
    taken_through(e, box, from, last);
    if (!in_place && how == combine::copy && one_piece && bytes <= sizeof(chunk)) {
      copy_line_part(into[0].data, staged, bytes);  // inline: a call into memmove costs more
    } else if (!in_place) {
      const piece src{staged, bytes};
      transfer(std::span(&src, 1), into, how, op.red);
    }
  }
  op.received_bytes = bytes;
  count_progress(e);
  return true;
}

void publish_taken_from_all(engine& e) {
  if (!e.cs.takes_unpublished) return;
  e.cs.takes_unpublished = false;
  for (int from = 0; from < e.t.p; ++from) {
    mailbox* box = e.t.box_pointer(static_cast<std::size_t>(from) * e.t.p + e.me).load(std::memory_order_acquire);
    if (box && box->publish_taken()) e.t.ring(from);
  }
}

}  // namespace ranklab::detail
