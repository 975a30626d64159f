// The process's runs in flight and the failure notices between ranks (see executor.hpp).
#pragma once
#include <mpi.h>

namespace ranklab::mpi::detail {

class running_schedule;

// Runs register while they live, so that waiting for one advances all.
void enlist(running_schedule* run);
void delist(running_schedule* run) noexcept;

// The tag of failure notices; call tags are >= 1.
inline constexpr int notice_tag = 0;
// Tells every other rank of `comm` that rank `me` left a call with an error.
void notify_failure(MPI_Comm comm, int me) noexcept;
// A rank that sent a failure notice on `comm`, or no_rank.
int notice_from(MPI_Comm comm);

}  // namespace ranklab::mpi::detail
