// The mailbox between two ranks: a lock-free single-producer/single-consumer ring of
// 64-byte chunks (Boost.Lockfree). A message is one header chunk, followed by its payload
// when it travels inline (eager). Large messages travel as a descriptor of the sender's
// memory: the receiver copies (or reduces) straight from it and then releases the sender.
//
// Messages of up to express_max_bytes (2 KiB and a little more) take the express lane
// instead when it has room: a ring of cache lines, a message in one to express_max_lines
// consecutive lines, its first line holding the sequence number next to the data. Boost's queue keeps its indices on
// lines of their own, so a receiver there pays two cache misses per message (the write
// index, then the data); in the express lane it pays one per line, and the lines of one
// message are fetched together. Every message of the pair, on either path, carries the
// pair's sequence numbers and the receiver takes them strictly in that order, so the two
// paths never reorder messages. An express message of k lines takes k sequence numbers (one
// per line), every other message one.
#pragma once
#include <boost/lockfree/spsc_queue.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

#include "detail/transfer.hpp"

namespace ranklab {
struct algorithm;
}

namespace ranklab::detail {

struct alignas(64) chunk {
  std::byte bytes[64];
};

inline constexpr std::size_t mailbox_chunks = 128;  // 8 KiB per ordered pair, created lazily

// The sender's side of a large message; lives in the sender's state until released.
struct send_descriptor {
  enum state_value : std::uint32_t { posted, claimed, released, cancelled };
  const piece* pieces = nullptr;
  std::uint32_t piece_count = 0;
  std::atomic<std::uint32_t> state{released};
};

enum class message_kind : std::uint8_t { eager, descriptor, express_descriptor };
inline constexpr std::uint8_t point_to_point = 0xff;  // header.coll for sendrecv/send/recv

// A message starts with this header; an eager payload follows right after it, in the
// same chunk and the next ones, so a message of up to 24 bytes is a single cache line.
struct message_header {
  message_kind kind = message_kind::eager;
  std::uint8_t coll = point_to_point;  // collective id of the call that sent it
  std::uint16_t chunks = 1;            // chunks of the whole message, header included
  std::uint32_t call = 0;              // sender's collective sequence number (0: p2p)
  std::uint64_t signature = 0;         // hash of the sender's call (mismatch detection)
  std::uint64_t bytes = 0;             // payload size
  send_descriptor* descriptor = nullptr;
  int root = 0;           // for describing a mismatch
  std::uint32_t seq = 0;  // the pair's message sequence number (from 1)
};
inline constexpr std::size_t header_bytes = 40;
static_assert(sizeof(message_header) <= header_bytes);

// One line of an express message. The first line carries the header fields and
// express_head_payload bytes and is published by `seq`; each further line carries
// express_line_payload bytes in everything after its `seq` (continuation()), written before
// the first line's `seq` and never touching the further lines' own `seq`.
struct alignas(64) express_cell {
  std::atomic<std::uint32_t> seq{0};  // the message's pair sequence number; written last
  std::uint8_t coll = point_to_point;
  std::uint8_t lines = 1;  // lines of the message, this one included
  std::uint16_t bytes = 0;
  std::uint32_t call = 0;
  std::int32_t root = 0;
  std::uint64_t signature = 0;
  alignas(8) std::byte payload[40];

  std::byte* continuation() { return reinterpret_cast<std::byte*>(this) + sizeof(seq); }
  const std::byte* continuation() const { return reinterpret_cast<const std::byte*>(this) + sizeof(seq); }
};
static_assert(sizeof(express_cell) == 64);
inline constexpr std::size_t express_head_payload = sizeof(express_cell::payload);
inline constexpr std::size_t express_line_payload = sizeof(express_cell) - sizeof(std::uint32_t);
inline constexpr std::uint32_t express_cells = 128;
inline constexpr std::uint32_t express_max_lines = 35;
inline constexpr std::uint32_t express_write_ahead = 4;       // lines: see try_post_express
inline constexpr std::uint32_t express_read_ahead = 8;        // lines: see take_expected_express
inline constexpr std::uint32_t express_publish_lines = 8;     // see mailbox::taken_through
inline constexpr std::uint32_t express_take_ahead_lines = 4;  // see try_post_express
inline constexpr std::size_t express_max_bytes = express_head_payload + (express_max_lines - 1) * express_line_payload;
static_assert(express_max_bytes >= 1024 && express_max_lines <= 255 && express_max_lines <= express_cells);

// A message above the eager limit travels as a descriptor of the sender's memory: the
// receiver copies straight from it. Up to express_descriptor_max_bytes the descriptor is an
// express line of its own (its `bytes` field is express_descriptor_mark, the descriptor in
// its payload), and the receiver's `consumed` passing it releases the sender: a crossing
// each way, where the queue's descriptor costs about five (its index, its chunk, the claim
// and release of a descriptor line in the sender's memory, and that line taken back for the
// next message). Larger messages keep the queue's descriptor, whose crossings their copy
// dwarfs, and which a receiver can set aside without copying (an express descriptor met
// before its call is copied out at once: see the stash).
struct express_descriptor {
  const piece* pieces = nullptr;
  std::uint64_t bytes = 0;
  std::uint32_t piece_count = 0;
  // Set by a sender that withdraws the message (its call failed). A receiver copies only
  // after announcing the copy in `mailbox::copying` and then finding this clear; the sender
  // sets it and then waits while the receiver announces this message and has not taken it
  // (both sides store, then load, sequentially consistent): so no copy reads the memory
  // of a sender that has returned. Accessed through std::atomic_ref only.
  std::uint32_t cancelled = 0;
};
static_assert(sizeof(express_descriptor) <= express_head_payload);
inline constexpr std::uint16_t express_descriptor_mark = 0xffff;
static_assert(express_max_bytes < express_descriptor_mark);
inline constexpr std::uint64_t express_descriptor_max_bytes = 64 * 1024;

// Copies `n` <= 64 bytes (a part of an express line) with plain loads and stores: two
// overlapping fixed-size copies cover any length. GCC expands a memcpy of a small but
// variable length as `rep movsb`, whose start-up cost is most of a small message's copy.
inline void copy_line_part(std::byte* dst, const std::byte* src, std::size_t n) {
  auto fixed = [&](auto width) {
    constexpr std::size_t w = decltype(width)::value;
    if (n > w) {  // n <= 2w here: the first and the last w bytes
      std::memcpy(dst, src, w);
      std::memcpy(dst + n - w, src + n - w, w);
      return true;
    }
    return false;
  };
  using std::integral_constant;
  if (n > 64) {
    std::memcpy(dst, src, n);
    return;
  }
  if (fixed(integral_constant<std::size_t, 32>{}) || fixed(integral_constant<std::size_t, 16>{}) ||
      fixed(integral_constant<std::size_t, 8>{}) || fixed(integral_constant<std::size_t, 4>{}))
    return;
  for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
}

// Lines of an express message of `bytes` (0 bytes: one line).
inline std::uint32_t express_lines(std::uint64_t bytes) {
  if (bytes <= express_head_payload) return 1;
  return 1 +
         static_cast<std::uint32_t>((bytes - express_head_payload + express_line_payload - 1) / express_line_payload);
}

// Where byte `at` of an express message lies: its line (from the first, 0) and the offset
// within that line's payload area, and how many bytes of the area follow.
struct express_position {
  std::uint32_t line;
  std::size_t offset, room;
};
inline express_position express_locate(std::size_t at) {
  if (at < express_head_payload) return {0, at, express_head_payload - at};
  const std::size_t rest = at - express_head_payload;
  const std::size_t within = rest % express_line_payload;
  return {1 + static_cast<std::uint32_t>(rest / express_line_payload), within, express_line_payload - within};
}

struct alignas(64) mailbox {
  // Sender's side (only the sender touches it).
  std::uint32_t sent = 0;                // sequence number of the last message sent
  std::uint32_t known_consumed = 0;      // the receiver's `consumed`, as last read
  std::uint32_t consumed_when_full = 0;  // known_consumed when the lane was last found full
  // Receiver's side: `consumed` is read by the sender only when the express lane looks full.
  // The sequence number of the last message taken and told to the sender (taken_through).
  alignas(64) std::atomic<std::uint32_t> consumed{0};
  // The receiver's own copy of `consumed`, on a line the sender never reads: a sender
  // waiting for room polls `consumed`, which takes its line away from the receiver.
  alignas(64) std::uint32_t taken = 0;
  std::uint32_t published = 0;  // the last `taken` stored to `consumed`
  // The express descriptor the receiver copies from, or last copied from (its sequence
  // number): see express_descriptor::cancelled.
  std::atomic<std::uint32_t> copying{0};
  express_cell cells[express_cells];
  boost::lockfree::spsc_queue<chunk, boost::lockfree::capacity<mailbox_chunks>> queue;

  express_cell& cell(std::uint32_t seq) { return cells[seq % express_cells]; }
  const express_cell& cell(std::uint32_t seq) const { return cells[seq % express_cells]; }
  // Where byte `at` of the express message whose first line is `seq` lies.
  std::byte* express_byte(std::uint32_t seq, std::size_t at) {
    const express_position pos = express_locate(at);
    express_cell& c = cell(seq + pos.line);
    return (pos.line == 0 ? c.payload : c.continuation()) + pos.offset;
  }
  // The payload of the express message whose first line is `seq` (published) into `dst`;
  // returns its size.
  std::size_t copy_express(std::uint32_t seq, std::byte* dst) const {
    const express_cell& head = cell(seq);
    const std::size_t bytes = head.bytes;
    if (bytes == 0) return 0;  // dst may be null then (an empty receive)
    std::size_t n = bytes < express_head_payload ? bytes : express_head_payload;
    copy_line_part(dst, head.payload, n);
    for (std::uint32_t line = 1; n < bytes; ++line) {
      const std::size_t part = bytes - n < express_line_payload ? bytes - n : express_line_payload;
      copy_line_part(dst + n, cell(seq + line).continuation(), part);
      n += part;
    }
    return bytes;
  }
  // The express descriptor whose line is `seq`.
  express_descriptor& descriptor(std::uint32_t seq) {
    return *std::launder(reinterpret_cast<express_descriptor*>(cell(seq).payload));
  }
  // Whether the receiver has taken every message through `seq` (sequence numbers wrap).
  bool consumed_through(std::uint32_t seq) const {
    return static_cast<std::int32_t>(consumed.load(std::memory_order_acquire) - seq) >= 0;
  }
  // Receiver only: the sequence number of the next message to take, and recording that
  // every message through `last` has been taken.
  std::uint32_t next_to_take() const { return taken + 1; }
  // The sender learns of it every express_publish_lines sequence numbers (lines, or queue
  // messages), and whenever the receiver finds no further message, releases an express
  // descriptor or is about to block (publish_taken): a sender that has filled the lane
  // polls `consumed`, and a store to it after every message had the receiver wait a
  // crossing for that line each time. (8 B scatter at p = 2, a loop of calls: 75-78 ->
  // 55-64 ns.) Returns whether some of it is still untold (comm_state::takes_unpublished).
  bool taken_through(std::uint32_t last) {
    taken = last;
    if (last - published >= express_publish_lines) publish_taken();
    return published != taken;
  }
  // Stores `taken` to `consumed` if it has moved since; returns whether it did (then the
  // caller rings the sender, which may be asleep waiting for room).
  bool publish_taken() {
    if (published == taken) return false;
    published = taken;
    consumed.store(taken, std::memory_order_release);
    return true;
  }
  // Whether a message has been sent and not yet taken (both ranks quiet, the receiver's
  // comm ended, so that everything taken is published).
  bool holds_messages() const { return sent != consumed.load(std::memory_order_acquire); }
};

}  // namespace ranklab::detail
