// The exception hierarchy. Every error carries the rank that raised it, the operation it
// was in and the cause, so a failure in a 64-rank run says where it came from.
#pragma once
#include <stdexcept>
#include <string>

namespace ranklab {

inline constexpr int no_rank = -1;  // "nobody": no peer in a half-round, unknown rank

class error : public std::runtime_error {
 public:
  error(int rank, std::string operation, const std::string& cause);
  int rank() const noexcept { return rank_; }
  const std::string& operation() const noexcept { return operation_; }
  const std::string& cause() const noexcept { return cause_; }

 private:
  int rank_;
  std::string operation_;
  std::string cause_;
};

// Bad arguments: a peer out of range, a buffer of the wrong size, an algorithm asked for
// outside its preconditions. Raised before anything is sent.
class usage_error : public error {
 public:
  using error::error;
};

// A message did not fit where it was received; names the sender and the receiver.
class size_mismatch_error : public error {
 public:
  size_mismatch_error(int rank, std::string operation, int sender, std::size_t sent_bytes, std::size_t capacity_bytes);
  int sender() const noexcept { return sender_; }

 private:
  int sender_;
};

// Another rank failed; this rank was released from a wait. origin_rank() failed first.
class remote_failure : public error {
 public:
  remote_failure(int rank, std::string operation, int origin_rank, const std::string& origin_what);
  int origin_rank() const noexcept { return origin_rank_; }

 private:
  int origin_rank_;
};

// Every live rank was blocked with nothing in flight. The message names who waits for whom.
class deadlock_error : public error {
 public:
  using error::error;
};

// Ranks called different collectives (or roots, counts, types, operators, algorithms) at
// the same position of their sequence of collectives.
class mismatch_error : public error {
 public:
  using error::error;
};

}  // namespace ranklab
