// ranklab::mpi::request: a nonblocking collective's handle (see ranklab/mpi.hpp).
#include "comm_state.hpp"
#include "ranklab/mpi.hpp"

#include <string>
#include <utility>

namespace ranklab::mpi {

request::request() noexcept = default;
request::request(std::unique_ptr<detail::pending_call> c) : call_(std::move(c)) {}
request::request(request&&) noexcept = default;
request& request::operator=(request&& o) noexcept {
  if (this != &o) {
    release();
    call_ = std::move(o.call_);
  }
  return *this;
}
request::~request() { release(); }

void request::release() noexcept {
  if (!call_) return;
  try {
    if (!call_->run.finished()) call_->state->settle(call_->run);
  } catch (...) {
  }
  call_.reset();
}

void detail::abandon(request& r) noexcept { r.call_.reset(); }

bool request::done() const { return !call_ || call_->run.finished(); }

bool request::test() {
  if (!call_) return true;
  detail::pending_call& c = *call_;
  // A loop of test() calls is a waiting loop: it must still find peers in other calls and
  // failed peers, and leave the core to the ranks it waits for.
  if (!c.run.finished()) c.poller.pass(detail::progress_all());
  if (!c.run.finished()) return false;
  try {
    c.run.result();
  } catch (...) {
    c.state->note_failure(std::current_exception());
    throw;
  }
  return true;
}

void request::wait() {
  if (call_) call_->state->settle(call_->run);
}

persistent_request::persistent_request() noexcept = default;
persistent_request::persistent_request(std::shared_ptr<detail::comm_state> state, int rank, const call& c,
                                       const void* in, void* out)
    : state_(std::move(state)), rank_(rank), call_(c), algorithm_(c.choice.name), in_(in), out_(out) {
  call_.choice.name = algorithm_;
}
persistent_request::persistent_request(persistent_request&& o) noexcept
    : state_(std::move(o.state_)),
      rank_(o.rank_),
      call_(std::move(o.call_)),
      algorithm_(std::move(o.algorithm_)),
      in_(o.in_),
      out_(o.out_),
      run_(std::move(o.run_)),
      active_(std::exchange(o.active_, false)) {
  call_.choice.name = algorithm_;
}
persistent_request& persistent_request::operator=(persistent_request&& o) noexcept {
  if (this != &o) {
    run_ = request();  // waits for a run in progress
    state_ = std::move(o.state_);
    rank_ = o.rank_;
    call_ = std::move(o.call_);
    algorithm_ = std::move(o.algorithm_);
    call_.choice.name = algorithm_;
    in_ = o.in_;
    out_ = o.out_;
    run_ = std::move(o.run_);
    active_ = std::exchange(o.active_, false);
  }
  return *this;
}
persistent_request::~persistent_request() = default;  // run_ waits for a run in progress

void persistent_request::start() {
  const std::string what(name(call_.args.coll));
  if (!state_) throw usage_error(rank_, "start", "empty persistent request (default-constructed or moved from)");
  if (active())
    throw usage_error(rank_, what,
                      "persistent request started again before its last run completed (wait or test it first)");
  auto c = std::make_unique<detail::pending_call>(state_, state_->prepare(call_, in_, out_), call_, in_, out_);
  c->run.advance();  // start now: the first sends go out before the caller computes
  run_ = request(std::move(c));
  active_ = true;
}

bool persistent_request::test() {
  if (!active_) return true;
  try {
    active_ = !run_.test();
  } catch (...) {
    active_ = false;
    throw;
  }
  return !active_;
}

void persistent_request::wait() {
  if (!active_) return;
  active_ = false;
  run_.wait();
}

void wait_all(std::span<request> requests) {
  for (request& r : requests) r.wait();
}

bool test_all(std::span<request> requests) {
  bool all = true;
  for (request& r : requests) all &= r.test();
  return all;
}

std::size_t wait_any(std::span<request> requests) {
  bool any = false;
  for (const request& r : requests) any |= r.valid();
  if (!any) return requests.size();
  for (;;)
    for (std::size_t i = 0; i < requests.size(); ++i)
      if (requests[i].valid() && requests[i].test()) return i;
}

}  // namespace ranklab::mpi
