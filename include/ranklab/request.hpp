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

// A persistent collective (MPI-4's MPI_Allreduce_init and friends, from comm's *_init
// forms): the call is checked, its schedule chosen and built and its buffers resolved once;
// every start() runs it again on the same buffers, as a nonblocking call that wait() or
// test() completes. Every rank starts its persistent calls in the same order as its other
// collectives (each start is a collective call). Starting one that is still running is a
// usage_error; destroying one that is running waits for it.
class persistent_request {
 public:
  persistent_request() noexcept;
  persistent_request(persistent_request&&) noexcept;
  persistent_request& operator=(persistent_request&&) noexcept;
  ~persistent_request();

  void start();
  // As request::test and request::wait, for the run started last (no-ops when none runs).
  bool test();
  void wait();
  bool active() const { return active_; }  // started and not yet completed by test/wait
  bool valid() const { return op_ != nullptr; }

 private:
  friend class comm;
  persistent_request(detail::team_state* team, std::shared_ptr<detail::comm_state> state, int rank,
                     std::unique_ptr<detail::operation> op);
  void settle() noexcept;  // a run that completed leaves the comm's outstanding operations
  void release() noexcept;

  detail::team_state* team_ = nullptr;
  std::shared_ptr<detail::comm_state> state_;
  int rank_ = 0;
  std::unique_ptr<detail::operation> op_;
  bool active_ = false;
};

void wait_all(std::span<request> requests);
bool test_all(std::span<request> requests);
// Waits until one of the requests completes; returns its index (requests.size() if none is
// valid).
std::size_t wait_any(std::span<request> requests);

}  // namespace ranklab
