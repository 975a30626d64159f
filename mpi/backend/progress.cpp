// Progress over every run in flight, waiting, and failure notices (see executor.hpp).
#include "progress.hpp"

#include <sched.h>

#include <algorithm>
#include <vector>

#include "executor.hpp"
#include "mpi_check.hpp"
#include "ranklab/errors.hpp"

namespace ranklab::mpi::detail {

namespace {

// One list per process: MPI's progress rule is per process (ranklab's MPI calls come from
// one thread at a time, so it needs no lock).
std::vector<running_schedule*>& in_flight() {
  static std::vector<running_schedule*> runs;
  return runs;
}

// A pass costs well under a microsecond: a message in flight on a core of its own arrives
// within the first few dozen, so only then is the core handed over. Probes are rarer still:
// finding a mismatch or a failed peer a fraction of a millisecond late costs nothing.
constexpr unsigned passes_before_yield = 32;
constexpr unsigned passes_between_checks = 128;

void check_all_peers() {
  // A run that fails here may not be the one waited for: it keeps its failure for its owner.
  for (running_schedule* run : std::vector<running_schedule*>(in_flight())) run->check_peers();
}

}  // namespace

void enlist(running_schedule* run) { in_flight().push_back(run); }

void delist(running_schedule* run) noexcept {
  auto& runs = in_flight();
  runs.erase(std::remove(runs.begin(), runs.end(), run), runs.end());
}

bool progress_all() noexcept {
  bool moved = false;
  // advance() neither adds nor removes runs.
  for (running_schedule* run : in_flight()) moved |= run->advance();
  return moved;
}

void idle_poller::pass(bool moved) {
  if (moved) {
    idle_ = 0;
    return;
  }
  ++idle_;
  if (idle_ % passes_between_checks == 0) check_all_peers();
  if (idle_ > passes_before_yield) sched_yield();
}

void wait_for(running_schedule& run) {
  idle_poller poller;
  while (!run.finished()) poller.pass(progress_all());
  run.result();
}

void notify_failure(MPI_Comm comm, int me) noexcept {
  int size = 0;
  if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS) return;
  for (int r = 0; r < size; ++r) {
    if (r == me) continue;
    MPI_Request req = MPI_REQUEST_NULL;
    // Empty, so it goes eagerly: the request can be freed at once.
    if (PMPI_Isend(nullptr, 0, MPI_BYTE, r, notice_tag, comm, &req) == MPI_SUCCESS) PMPI_Request_free(&req);
  }
}

int notice_from(MPI_Comm comm) {
  int found = 0;
  MPI_Status status;
  check(PMPI_Iprobe(MPI_ANY_SOURCE, notice_tag, comm, &found, &status), no_rank, "MPI executor", "PMPI_Iprobe");
  return found ? status.MPI_SOURCE : no_rank;
}

}  // namespace ranklab::mpi::detail
