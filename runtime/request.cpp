// Requests: the handle of a nonblocking collective. The operation itself belongs to the
// thread executor; a request advances it (and the rank's other outstanding operations) when
// tested or waited on, and settles it when destroyed, whatever became of its comm.
#include "ranklab/request.hpp"

#include <algorithm>
#include <utility>

#include "detail/comm_state.hpp"
#include "detail/engine.hpp"
#include "detail/team_state.hpp"
#include "executors/schedule_cache.hpp"
#include "executors/thread_executor.hpp"
#include "ranklab/errors.hpp"

namespace ranklab {

namespace {
using detail::abandon_all;
using detail::blocked_on;
using detail::engine;
using detail::locked;
using detail::progress_all;
using detail::wait_for;
}  // namespace

namespace {
bool test_operation(detail::team_state& t, detail::comm_state& cs, int rank, detail::operation& op);
void forget(detail::comm_state& cs, const detail::operation* op);
}  // namespace

request::request() noexcept = default;
request::request(detail::team_state* team, std::shared_ptr<detail::comm_state> state, int rank,
                 std::unique_ptr<detail::operation> op)
    : team_(team), state_(std::move(state)), rank_(rank), op_(std::move(op)) {}
request::request(request&& o) noexcept = default;
request& request::operator=(request&& o) noexcept {
  if (this != &o) {
    release();
    team_ = o.team_;
    state_ = std::move(o.state_);
    rank_ = o.rank_;
    op_ = std::move(o.op_);
  }
  return *this;
}
request::~request() { release(); }

void request::release() noexcept {
  if (!op_) return;
  if (state_->ended.load(std::memory_order_acquire)) {  // the comm abandoned it; the team may be gone
    op_.reset();
    state_.reset();
    return;
  }
  try {
    if (!done()) wait();
  } catch (...) {
  }
  forget(*state_, op_.get());
  op_.reset();
  state_.reset();
}

// A progress thread may be advancing the operation: read its state under the comm's lock.
bool request::done() const {
  return op_ && locked(*state_, [&] { return op_->complete; });
}

namespace {
// A request kept past its comm: the comm abandoned it (complete, with an error) and the
// team may be gone. Rethrows that error; returns whether the request can still progress.
bool usable(const std::shared_ptr<detail::comm_state>& state, const detail::operation& op) {
  if (!state->ended.load(std::memory_order_acquire)) return true;
  if (op.error) std::rethrow_exception(op.error);
  if (!op.complete)
    throw usage_error(no_rank, op.name,
                      "the comm of this request has ended (its rank returned or its team was destroyed)");
  return false;
}

// Advances the rank's outstanding operations once; whether `op` is complete. Rethrows its
// failure.
bool test_operation(detail::team_state& t, detail::comm_state& cs, int rank, detail::operation& op) {
  engine e{t, cs, rank};
  bool complete = false;
  std::exception_ptr error;
  try {
    detail::progress_other_comms(e);
    locked(cs, [&] {
      progress_all(e, &op);
      complete = op.complete;
      error = op.error;
    });
    // A polling loop must not spin forever on a team that has failed, nor on a deadlock.
    if (!complete) {
      t.check_failure(rank, op.name);
      t.note_poll(rank, [&] { return locked(cs, [&] { return blocked_on(e, op); }); });
      // On a fiber, a polling loop would keep the ranks it waits for (on its worker) from
      // running: an unfinished test lets them run first.
      if (t.fibers) t.let_others_run();
    }
  } catch (...) {
    t.fail_with_current_exception(rank);
    locked(cs, [&] { abandon_all(t, rank, cs, &op); });
    throw;
  }
  if (complete && error) std::rethrow_exception(error);
  return complete;
}

// Takes `op` out of the rank's outstanding operations.
void forget(detail::comm_state& cs, const detail::operation* op) {
  locked(cs, [&] {
    auto& active = cs.active;
    active.erase(std::remove(active.begin(), active.end(), op), active.end());
  });
}
}  // namespace

bool request::test() {
  if (!op_) return true;
  if (!usable(state_, *op_)) return true;
  return test_operation(*team_, *state_, rank_, *op_);
}

void request::wait() {
  if (!op_) return;
  if (!usable(state_, *op_)) return;
  engine e{*team_, *state_, rank_};
  wait_for(e, *op_);
}

persistent_request::persistent_request() noexcept = default;
persistent_request::persistent_request(detail::team_state* team, std::shared_ptr<detail::comm_state> state, int rank,
                                       std::unique_ptr<detail::operation> op)
    : team_(team), state_(std::move(state)), rank_(rank), op_(std::move(op)) {}
persistent_request::persistent_request(persistent_request&& o) noexcept
    : team_(o.team_),
      state_(std::move(o.state_)),
      rank_(o.rank_),
      op_(std::move(o.op_)),
      active_(std::exchange(o.active_, false)) {}
persistent_request& persistent_request::operator=(persistent_request&& o) noexcept {
  if (this != &o) {
    release();
    team_ = o.team_;
    state_ = std::move(o.state_);
    rank_ = o.rank_;
    op_ = std::move(o.op_);
    active_ = std::exchange(o.active_, false);
  }
  return *this;
}
persistent_request::~persistent_request() { release(); }

void persistent_request::release() noexcept {
  if (!op_) return;
  if (active_ && !state_->ended.load(std::memory_order_acquire)) {
    try {
      wait();
    } catch (...) {
    }
  }
  settle();
  op_.reset();
  state_.reset();
}

void persistent_request::settle() noexcept {
  if (!active_) return;
  active_ = false;
  if (!state_->ended.load(std::memory_order_acquire)) forget(*state_, op_.get());
}

void persistent_request::start() {
  if (!op_) throw usage_error(rank_, "start", "empty persistent request (default-constructed or moved from)");
  if (active_)
    throw usage_error(rank_, op_->name,
                      "persistent request started again before its last run completed (wait or test it first)");
  if (state_->ended.load(std::memory_order_acquire))
    throw usage_error(rank_, op_->name, "the comm of this persistent request has ended");
  team_->check_failure(rank_, op_->name);
  op_->tag = detail::tag_for(*state_, op_->entry->key_call, *op_->entry);
  op_->rewind();
  active_ = true;
  detail::launch(*team_, state_, rank_, *op_);
}

bool persistent_request::test() {
  if (!active_) return true;
  if (!usable(state_, *op_)) {
    settle();
    return true;
  }
  bool complete = false;
  try {
    complete = test_operation(*team_, *state_, rank_, *op_);
  } catch (...) {
    settle();
    throw;
  }
  if (complete) settle();
  return complete;
}

void persistent_request::wait() {
  if (!active_) return;
  struct settle_guard {
    persistent_request& r;
    ~settle_guard() { r.settle(); }
  } guard{*this};
  if (!usable(state_, *op_)) return;
  engine e{*team_, *state_, rank_};
  wait_for(e, *op_);
}

void wait_all(std::span<request> requests) {
  for (request& r : requests) r.wait();
}

bool test_all(std::span<request> requests) {
  bool all = true;
  for (request& r : requests) all &= r.test();
  return all;
}

// Waits like a blocking call (spin, yield, sleep), so that a rank in wait_any counts as
// blocked for deadlock detection and wakes on a team failure.
std::size_t wait_any(std::span<request> requests) {
  const request* first = nullptr;
  for (const request& r : requests)
    if (r.valid()) {
      first = &r;
      break;
    }
  if (!first) return requests.size();
  std::size_t found = requests.size();
  auto ready = [&] {
    for (std::size_t i = 0; i < requests.size(); ++i)
      if (requests[i].valid() && requests[i].test()) {
        found = i;
        return true;
      }
    return false;
  };
  engine e{*first->team_, *first->state_, first->rank_};
  first->team_->wait(
      first->rank_, ready, [&] { return locked(e.cs, [&] { return blocked_on(e, *first->op_); }); }, "wait_any");
  return found;
}

}  // namespace ranklab
