// ranklab::mpi::request: a nonblocking collective's handle (see ranklab/mpi.hpp).
#include "comm_state.hpp"
#include "ranklab/mpi.hpp"

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
