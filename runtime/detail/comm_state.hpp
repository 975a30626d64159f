// Per-rank state of a comm: the tag of the call in progress (for mismatch detection), the
// reusable vectors of the message path, scratch memory and the schedule cache.
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "detail/mailbox.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::detail {

// What every message of the current call carries and every received message must match.
struct call_tag {
  std::uint8_t coll = point_to_point;
  std::uint32_t call = 0;
  std::uint64_t signature = 0;
  int root = 0;
  std::uint64_t count = 0;
  const algorithm* algo = nullptr;
};

struct cached_schedule {
  call key_call;                 // the call as made (args, type, operator kind, choice)
  std::string requested;         // choice.name, owned
  const algorithm* algo = nullptr;
  std::string reason;
  schedule plan;
  std::uint64_t signature = 0;
  std::string text;  // "bcast(p=8, root=0, count=10) algorithm=binomial"
};

struct comm_state {
  call_tag tag;
  std::uint32_t calls = 0;
  std::vector<piece> send_pieces;
  std::vector<piece> recv_pieces;
  std::vector<chunk> stage;  // eager payload
  buffer_table buffers;      // reused by every execute()
  std::unique_ptr<std::byte[]> scratch;
  std::size_t scratch_bytes = 0;
  std::list<cached_schedule> cache;  // most recent first
  const algorithm* last_algo = nullptr;
  std::string last_reason;
};

}  // namespace ranklab::detail
