// Nonblocking collectives: a call starts the operation and returns a request; the request
// advances the same schedule the blocking call runs, round by round, whenever the rank
// tests or waits on any request (or calls anything blocking), or continuously on a
// progress thread (team_options::progress_thread).
#pragma once
#include <cstddef>
#include <memory>
#include <span>

namespace ranklab {

namespace detail {
struct operation;
struct comm_state;
struct team_state;
}  // namespace detail

class request {
 public:
  request() noexcept;
  request(request&&) noexcept;
  request& operator=(request&&) noexcept;
  // Destroying an unfinished request WAITS for it: the operation reads and writes the
  // caller's buffers (and peers read them directly), so returning early would leave them
  // in use after the caller may have freed them. Errors met while waiting are swallowed
  // here (the team is failed then, and the next call reports it).
  ~request();

  // Advances every outstanding operation of the rank; true once this one is complete.
  // Rethrows the operation's failure.
  bool test();
  void wait();
  bool done() const;  // complete, without advancing anything
  bool valid() const { return op_ != nullptr; }

 private:
  friend class comm;
  friend std::size_t wait_any(std::span<request> requests);
  request(detail::team_state* team, std::shared_ptr<detail::comm_state> state, int rank,
          std::unique_ptr<detail::operation> op);
  void release() noexcept;

  detail::team_state* team_ = nullptr;
  std::shared_ptr<detail::comm_state> state_;
  int rank_ = 0;
  std::unique_ptr<detail::operation> op_;
};

void wait_all(std::span<request> requests);
bool test_all(std::span<request> requests);
// Waits until one of the requests completes; returns its index (requests.size() if none is
// valid).
std::size_t wait_any(std::span<request> requests);

}  // namespace ranklab
