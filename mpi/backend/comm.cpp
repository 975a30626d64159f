// ranklab::mpi::comm: the collectives over an MPI communicator (see ranklab/mpi.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "call_checks.hpp"
#include "comm_state.hpp"
#include "mpi_check.hpp"
#include "ranklab/mpi.hpp"

namespace ranklab::mpi {

namespace detail {

namespace {

void require_initialized() {
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw usage_error(no_rank, "mpi::comm",
                      initialized ? "MPI has been finalized" : "MPI is not initialized: call MPI_Init first");
}

// Receives whatever has arrived on a failed comm (messages of the failed call, failure
// notices), so that MPI does not report them unmatched at MPI_Finalize.
void drain(MPI_Comm comm) {
  std::vector<std::byte> sink;
  for (;;) {
    int found = 0, bytes = 0;
    MPI_Status status;
    if (PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &found, &status) != MPI_SUCCESS || !found) return;
    PMPI_Get_count(&status, MPI_BYTE, &bytes);
    sink.resize(static_cast<std::size_t>(std::max(bytes, 1)));
    PMPI_Recv(sink.data(), bytes, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, comm, MPI_STATUS_IGNORE);
  }
}

}  // namespace

comm_state::comm_state(MPI_Comm parent) {
  require_initialized();
  // Checked here: MPI would report these through the parent's error handler, fatal by default.
  if (parent == MPI_COMM_NULL) throw usage_error(no_rank, "mpi::comm", "MPI_COMM_NULL is not a communicator");
  int inter = 0;
  check(PMPI_Comm_test_inter(parent, &inter), no_rank, "mpi::comm", "PMPI_Comm_test_inter");
  if (inter)
    throw usage_error(no_rank, "mpi::comm", "an intercommunicator: ranklab's collectives run on intracommunicators");
  check(PMPI_Comm_dup(parent, &comm), no_rank, "mpi::comm", "PMPI_Comm_dup");
  check(PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), no_rank, "mpi::comm", "PMPI_Comm_set_errhandler");
  check(PMPI_Comm_rank(comm, &rank), no_rank, "mpi::comm", "PMPI_Comm_rank");
  check(PMPI_Comm_size(comm, &size), rank, "mpi::comm", "PMPI_Comm_size");
}

comm_state::~comm_state() {
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (finalized || comm == MPI_COMM_NULL) return;
  if (failure.empty()) {
    PMPI_Comm_free(&comm);
    return;
  }
  // A failed comm keeps its communicator: messages of the failed call and failure notices
  // may still arrive, and MPI would deliver them to the next communicator that reuses the
  // freed one's context id. One communicator per failure is the price.
  drain(comm);
}

comm_state::prepared comm_state::prepare(const call& c, const void* in, const void* out) {
  prepared p{checked_schedule(c, in, out), {}};
  p.id.name = name(c.args.coll);
  p.id.tag = sequenced_tag(call_signature(c, *p.entry->algo), ++calls, comm, p.id.span);
  return p;
}

std::shared_ptr<const cached_call> comm_state::checked_schedule(const call& c, const void* in, const void* out) {
  const std::string_view coll = name(c.args.coll);
  if (!failure.empty())
    throw usage_error(rank, std::string(coll),
                      fmt::format("this comm failed in an earlier call ({}); messages of that call may still be in "
                                  "flight, so make a new comm",
                                  failure));
  if (is_reduction(c.args.coll)) kernel_for(c.reduction, c.type);  // reject a bad (operator, type) on every rank
  auto entry = c.args.in_place == ranklab::detail::called_in_place(c, in, out)
                   ? cache.find_or_build(c, rank, size)
                   : cache.find_or_build(ranklab::detail::as_called(c, in, out), rank, size);
  ranklab::detail::require_buffers(c, rank, size, in, out);
  last_algo = entry->algo;
  last_reason = entry->reason;
  return entry;
}

void mark_failed(comm& c, const std::string& why) noexcept {
  if (c.state_ && c.state_->failure.empty()) {
    try {
      c.state_->failure = why;
    } catch (...) {
    }
  }
}

void comm_state::note_failure(const std::exception_ptr& e) noexcept {
  if (!failure.empty()) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    failure = x.what();
  } catch (...) {
    failure = "unknown error";
  }
}

void comm_state::settle(running_schedule& run) {
  try {
    wait_for(run);
  } catch (...) {
    note_failure(std::current_exception());
    throw;
  }
}

}  // namespace detail

comm::comm(MPI_Comm parent) : state_(std::make_shared<detail::comm_state>(parent)) {
  rank_ = state_->rank;
  size_ = state_->size;
}

comm::comm(comm&& o) noexcept : state_(std::move(o.state_)), rank_(o.rank_), size_(o.size_) {}
comm& comm::operator=(comm&& o) noexcept {
  state_ = std::move(o.state_);
  rank_ = o.rank_;
  size_ = o.size_;
  return *this;
}
comm::~comm() = default;

namespace {
detail::comm_state& usable(const std::shared_ptr<detail::comm_state>& s, int rank, const call& c) {
  if (!s)
    throw usage_error(rank, std::string(name(c.args.coll)), "this comm was moved from; use the comm it was moved to");
  return *s;
}
}  // namespace

void comm::run_collective(const call& c, const void* in, void* out) {
  detail::comm_state& cs = usable(state_, rank_, c);
  auto p = cs.prepare(c, in, out);
  detail::running_schedule run(p.entry->plan, in, out, c.type, c.reduction, cs.comm, p.id, &cs.arena);
  cs.settle(run);
}

request comm::start_collective(const call& c, const void* in, void* out) {
  detail::comm_state& cs = usable(state_, rank_, c);
  auto call = std::make_unique<detail::pending_call>(state_, cs.prepare(c, in, out), c, in, out);
  call->run.advance();  // start now: the first sends go out before the caller computes
  return request(std::move(call));
}

persistent_request comm::init_collective(const call& c, const void* in, void* out) {
  usable(state_, rank_, c).checked_schedule(c, in, out);
  return persistent_request(state_, rank_, c, in, out);
}

const algorithm* comm::last_algorithm() const { return state_ ? state_->last_algo : nullptr; }
std::string_view comm::last_selection_reason() const { return state_ ? std::string_view(state_->last_reason) : ""; }
MPI_Comm comm::native() const { return state_ ? state_->comm : MPI_COMM_NULL; }

}  // namespace ranklab::mpi
