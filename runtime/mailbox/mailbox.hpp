// The mailbox between two ranks: a lock-free single-producer/single-consumer ring of
// 64-byte chunks (Boost.Lockfree). A message is one header chunk, followed by its payload
// when it travels inline (eager). Large messages travel as a descriptor of the sender's
// memory: the receiver copies (or reduces) straight from it and then releases the sender.
//
// Messages of up to express_max_bytes take the express lane instead when it has room: a
// ring of cache lines, a message in one to express_max_lines consecutive lines, its first
// line holding the sequence number next to the data. Boost's queue keeps its indices on
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

enum class message_kind : std::uint8_t { eager, descriptor };
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

// One line of an express message. The first line carries the header fields and is
// published by `seq`; the message's further lines carry only payload (their header fields
// are unused), written before the first line's `seq`.
struct alignas(64) express_cell {
  std::atomic<std::uint32_t> seq{0};  // the message's pair sequence number; written last
  std::uint8_t coll = point_to_point;
  std::uint8_t bytes = 0;
  std::uint16_t lines = 1;  // lines of the message, this one included
  std::uint32_t call = 0;
  std::int32_t root = 0;
  std::uint64_t signature = 0;
  std::byte payload[40];
};
static_assert(sizeof(express_cell) == 64);
inline constexpr std::size_t express_payload = sizeof(express_cell::payload);  // per line
inline constexpr std::uint32_t express_cells = 16;
inline constexpr std::uint32_t express_max_lines = 4;
inline constexpr std::size_t express_max_bytes = express_max_lines * express_payload;
static_assert(express_max_bytes <= 255 && express_max_lines <= express_cells);

// Lines of an express message of `bytes` (0 bytes: one line).
inline std::uint32_t express_lines(std::uint64_t bytes) {
  return bytes <= express_payload ? 1 : static_cast<std::uint32_t>((bytes + express_payload - 1) / express_payload);
}

struct alignas(64) mailbox {
  // Sender's side (only the sender touches it).
  std::uint32_t sent = 0;            // sequence number of the last message sent
  std::uint32_t known_consumed = 0;  // the receiver's `consumed`, as last read
  // Receiver's side: `consumed` is read by the sender only when the express lane looks full.
  alignas(64) std::atomic<std::uint32_t> consumed{0};  // sequence number of the last message taken
  express_cell cells[express_cells];
  boost::lockfree::spsc_queue<chunk, boost::lockfree::capacity<mailbox_chunks>> queue;

  express_cell& cell(std::uint32_t seq) { return cells[seq % express_cells]; }
  const express_cell& cell(std::uint32_t seq) const { return cells[seq % express_cells]; }
  // The payload of the express message whose first line is `seq` (published) into `dst`;
  // returns its size.
  std::size_t copy_express(std::uint32_t seq, std::byte* dst) const {
    const express_cell& head = cell(seq);
    std::size_t left = head.bytes;
    for (std::uint32_t i = 0; left > 0; ++i) {
      const std::size_t n = left < express_payload ? left : express_payload;
      std::memcpy(dst, cell(seq + i).payload, n);
      dst += n;
      left -= n;
    }
    return head.bytes;
  }
  // Whether a message has been sent and not yet taken (both ranks quiet).
  bool holds_messages() const { return sent != consumed.load(std::memory_order_acquire); }
};

}  // namespace ranklab::detail
