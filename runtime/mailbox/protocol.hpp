// The mailbox protocol: how an operation's message goes into the mailbox of a pair of
// ranks (express lane, inline, or by descriptor of the sender's memory) and how the
// receiver takes it out, in the pair's sequence order, checks it against its own call and
// copies or reduces it into place. The thread executor decides when; this decides how.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "detail/engine.hpp"
#include "detail/operation.hpp"
#include "mailbox/mailbox.hpp"

namespace ranklab::detail {

// Chunks of a message of `bytes`, header included when counted in.
inline std::size_t chunks_for(std::uint64_t bytes) {
  return static_cast<std::size_t>((bytes + sizeof(chunk) - 1) / sizeof(chunk));
}

// Posts the message of `pieces` (`bytes` in all) to `to` in the express lane, if it fits
// one line and the lane has room. Returns whether it did.
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

// Takes the message `op` expects in its current round from `from` if it is the next in the
// express lane, polling for it while `polls` (counted up) stays below the spin limit: the
// receive of operation::messages_only calls without try_receive's generality. Returns
// false, having taken nothing, when the message has not come, or has come some other way
// (the queue), or is not the one expected (another call, a mismatch, a descriptor), and
// when the team has failed: try_receive then takes it, or explains it.
bool take_expected_express(engine& e, operation& op, int from, int& polls);

// Lets every sender to this rank know how far the rank has taken its messages (see
// mailbox::taken_through): before the rank blocks, and when its comm ends.
void publish_taken_from_all(engine& e);

}  // namespace ranklab::detail
