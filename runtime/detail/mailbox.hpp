// The mailbox between two ranks: a lock-free single-producer/single-consumer ring of
// 64-byte chunks (Boost.Lockfree). A message is one header chunk, followed by its payload
// when it travels inline (eager). Large messages travel as a descriptor of the sender's
// memory: the receiver copies (or reduces) straight from it and then releases the sender.
#pragma once
#include <boost/lockfree/spsc_queue.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ranklab/detail/transfer.hpp"

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
  std::uint32_t call = 0;              // sender's collective sequence number (0: p2p)
  std::uint64_t signature = 0;         // hash of the sender's call (mismatch detection)
  std::uint64_t bytes = 0;             // payload size
  send_descriptor* descriptor = nullptr;
  int root = 0;                        // for describing a mismatch
  std::uint32_t chunks = 1;            // chunks of the whole message, header included
};
inline constexpr std::size_t header_bytes = 40;
static_assert(sizeof(message_header) <= header_bytes);

struct alignas(64) mailbox {
  boost::lockfree::spsc_queue<chunk, boost::lockfree::capacity<mailbox_chunks>> queue;
};

}  // namespace ranklab::detail
