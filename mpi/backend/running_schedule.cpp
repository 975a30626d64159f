// One rank's schedule in flight over MPI (see executor.hpp): the round state machine.
#include <fmt/format.h>

#include <algorithm>

#include "executor.hpp"
#include "mpi_check.hpp"
#include "progress.hpp"
#include "ranklab/errors.hpp"

namespace ranklab::mpi::detail {

namespace {

using ranklab::detail::piece;

constexpr std::size_t scratch_alignment = 64;
std::size_t aligned(std::size_t n) { return (n + scratch_alignment - 1) / scratch_alignment * scratch_alignment; }

bool reduces(const schedule& s) {
  auto combines = [](const local_step& st) { return st.how != combine::copy; };
  if (std::ranges::any_of(s.prologue(), combines)) return true;
  for (const round& r : s.rounds())
    if (r.recv_how != combine::copy || std::ranges::any_of(s.pre_steps(r), combines) ||
        std::ranges::any_of(s.post_steps(r), combines))
      return true;
  return false;
}

// What the MPI executor cannot run: steps on other ranks' memory, shared-memory fences.
void require_message_passing(const schedule& s, std::string_view name) {
  const bool fences = std::ranges::any_of(s.rounds(), [](const round& r) { return r.fence; });
  if (s.reads_remote() || fences)
    throw usage_error(s.rank(), std::string(name),
                      "the schedule reads or writes other ranks' memory (a shared-memory algorithm): "
                      "separate MPI processes cannot; use a one-ported algorithm");
}

// The largest message a reducing receive stages, in elements.
std::uint64_t staging_count(const schedule& s) {
  std::uint64_t most = 0;
  for (const round& r : s.rounds())
    if (r.recv_from != no_rank && r.recv_how != combine::copy) most = std::max(most, s.recv_count(r));
  return most;
}

}  // namespace

std::byte* scratch_arena::reserve(std::size_t n) {
  if (n > bytes) {
    data = ranklab::detail::make_aligned_bytes(n);
    bytes = n;
  }
  return data.get();
}

running_schedule::running_schedule(const schedule& s, const void* in, void* out, const datatype& type,
                                   const op& reduction, MPI_Comm comm, call_identity id, scratch_arena* arena)
    : plan_(s), comm_(comm), id_(id), reduction_(reduction) {
  int rank = 0, size = 0;
  check(PMPI_Comm_rank(comm, &rank), s.rank(), id.name, "PMPI_Comm_rank");
  check(PMPI_Comm_size(comm, &size), s.rank(), id.name, "PMPI_Comm_size");
  if (s.rank() != rank || s.size() != size)
    throw usage_error(rank, std::string(id.name),
                      fmt::format("schedule of rank {} of {} run by rank {} of {}", s.rank(), s.size(), rank, size));
  require_message_passing(s, id.name);
  const std::size_t elem = type.size;
  red_ = {nullptr, reduction_.context, elem, reduction_.commutative};
  if (reduces(s)) red_.kernel = kernel_for(reduction_, type);  // a bad (operator, type) fails before any message

  // One allocation: the staging area for reducing receives, then each scratch buffer.
  std::size_t total = aligned(staging_count(s) * elem);
  for (std::uint64_t count : s.scratch_counts()) total += aligned(count * elem);
  std::byte* memory = nullptr;
  if (total > 0) {
    if (arena) {
      memory = arena->reserve(total);
    } else {
      owned_ = ranklab::detail::make_aligned_bytes(total);
      memory = owned_.get();
    }
  }
  buffers_.elem_size = elem;
  buffers_.base = {static_cast<std::byte*>(const_cast<void*>(in)), static_cast<std::byte*>(out)};
  staging_ = memory;
  std::size_t used = aligned(staging_count(s) * elem);
  for (std::uint64_t count : s.scratch_counts()) {
    buffers_.base.push_back(memory + used);
    used += aligned(count * elem);
  }
  enlist(this);
}

running_schedule::~running_schedule() {
  delist(this);
  abandon();
}

void running_schedule::run_steps(std::span<const local_step> steps) {
  for (const local_step& st : steps) ranklab::detail::run_step(st, buffers_, red_);
}

void running_schedule::post(const round& r) {
  const int me = plan_.rank();
  if (r.recv_from != no_rank) {
    recv_msg_ = r.recv_how == combine::copy
                    ? mpi_message::of_regions(plan_.recv_regions(r), buffers_)
                    : mpi_message::contiguous(staging_, plan_.recv_count(r) * buffers_.elem_size);
    check(PMPI_Irecv(recv_msg_.address(), recv_msg_.count(), recv_msg_.type(), r.recv_from, id_.tag, comm_, &recv_),
          me, id_.name, "PMPI_Irecv from", r.recv_from);
  }
  if (r.send_to != no_rank) {
    send_msg_ = mpi_message::of_regions(plan_.send_regions(r), buffers_);
    check(PMPI_Isend(send_msg_.address(), send_msg_.count(), send_msg_.type(), r.send_to, id_.tag, comm_, &send_),
          me, id_.name, "PMPI_Isend to", r.send_to);
  }
}

// True once the round's messages are through.
bool running_schedule::test_requests() {
  const int me = plan_.rank();
  const round& r = plan_.rounds()[round_];
  if (recv_ != MPI_REQUEST_NULL) {
    int done = 0;
    const int code = PMPI_Test(&recv_, &done, &recv_status_);
    if (code != MPI_SUCCESS) {
      recv_ = MPI_REQUEST_NULL;  // a request that completed in error is freed
      int error_class = code;
      PMPI_Error_class(code, &error_class);
      if (error_class == MPI_ERR_TRUNCATE)
        throw mismatch_error(me, std::string(id_.name),
                             fmt::format("rank {} sent a message larger than the {} bytes rank {} expects in this call "
                                         "(the ranks disagree on the call's counts or algorithm; {})",
                                         r.recv_from, recv_msg_.bytes(), me, error_string(code)));
      throw_mpi_error(code, me, id_.name, "receive from", r.recv_from);
    }
    if (!done) return false;
  }
  if (send_ != MPI_REQUEST_NULL) {
    int done = 0;
    const int code = PMPI_Test(&send_, &done, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS) {
      send_ = MPI_REQUEST_NULL;
      throw_mpi_error(code, me, id_.name, "send to", r.send_to);
    }
    if (!done) return false;
  }
  return true;
}

void running_schedule::finish(const round& r) {
  if (r.recv_from != no_rank) {
    const std::uint64_t got = recv_msg_.received_bytes(recv_status_);
    if (got != recv_msg_.bytes())
      throw mismatch_error(plan_.rank(), std::string(id_.name),
                           fmt::format("rank {} sent {} bytes, rank {} expects {} in this call (the ranks disagree on "
                                       "the call's counts or algorithm)",
                                       r.recv_from, got, plan_.rank(), recv_msg_.bytes()));
    if (r.recv_how != combine::copy) {
      thread_local std::vector<piece> dst;
      dst.clear();
      for (const region& reg : plan_.recv_regions(r)) dst.push_back(buffers_.resolve(reg));
      const piece src{staging_, static_cast<std::size_t>(recv_msg_.bytes())};
      ranklab::detail::transfer(std::span(&src, 1), dst, r.recv_how, red_);
    }
  }
  recv_msg_.reset();
  send_msg_.reset();
  run_steps(plan_.post_steps(r));
}

bool running_schedule::advance() noexcept {
  if (finished()) return false;
  try {
    bool moved = false;
    if (!started_) {
      run_steps(plan_.prologue());
      started_ = moved = true;
    }
    for (;;) {
      if (!posted_) {
        if (round_ == plan_.rounds().size()) {
          state_ = state::complete;
          return true;
        }
        run_steps(plan_.pre_steps(plan_.rounds()[round_]));
        post(plan_.rounds()[round_]);
        posted_ = moved = true;
      }
      if (!test_requests()) return moved;
      finish(plan_.rounds()[round_]);
      ++round_;
      posted_ = false;
      moved = true;
    }
  } catch (...) {
    fail(std::current_exception());
    return true;
  }
}

void running_schedule::mismatch(int peer, int other_tag) const {
  throw mismatch_error(plan_.rank(), std::string(id_.name),
                       fmt::format("rank {} is in another collective call: its message carries tag {}, this call's "
                                   "is {} (ranks must make the same collective calls in the same order, with the "
                                   "same root, counts, type, operator and algorithm)",
                                   peer, other_tag, id_.tag));
}

void running_schedule::check_peers() noexcept {
  if (finished()) return;
  try {
    if (const int failed = notice_from(comm_); failed != no_rank)
      throw remote_failure(plan_.rank(), std::string(id_.name), failed,
                           "it left a collective call on this communicator with an error");
    const int peer = posted_ && recv_ != MPI_REQUEST_NULL ? plan_.rounds()[round_].recv_from : no_rank;
    if (peer == no_rank) return;
    int found = 0;
    MPI_Status status;
    check(PMPI_Iprobe(peer, MPI_ANY_TAG, comm_, &found, &status), plan_.rank(), id_.name, "PMPI_Iprobe");
    if (!found || status.MPI_TAG == id_.tag || status.MPI_TAG == notice_tag) return;
    if ((status.MPI_TAG - 1) % id_.span == (id_.tag - 1) % id_.span) mismatch(peer, status.MPI_TAG);
  } catch (const remote_failure&) {
    fail(std::current_exception(), false);  // its origin has told every rank already
  } catch (...) {
    fail(std::current_exception());
  }
}

void running_schedule::result() const {
  if (state_ == state::failed) std::rethrow_exception(error_);
}

void running_schedule::fail(std::exception_ptr e, bool notify) noexcept {
  error_ = std::move(e);
  state_ = state::failed;
  abandon();
  if (notify) notify_failure(comm_, plan_.rank());
}

// Nothing of the run may touch the caller's buffers afterwards: a posted receive is
// cancelled (it may still complete if already matched; the wait covers that). A send
// cannot be cancelled reliably, so MPI finishes it in the background.
void running_schedule::abandon() noexcept {
  if (recv_ != MPI_REQUEST_NULL) {
    PMPI_Cancel(&recv_);
    PMPI_Wait(&recv_, MPI_STATUS_IGNORE);
  }
  if (send_ != MPI_REQUEST_NULL) PMPI_Request_free(&send_);
  recv_msg_.reset();
  send_msg_.reset();
}

}  // namespace ranklab::mpi::detail
