// MPI return codes as ranklab exceptions. ranklab's communicators return errors instead of
// aborting (MPI_ERRORS_RETURN), so every failed MPI call becomes an exception naming the
// rank, the collective and the MPI error string.
#pragma once
#include <mpi.h>

#include <string>
#include <string_view>

namespace ranklab::mpi::detail {

// The MPI library's text for an error code.
std::string error_string(int code);
// Throws mpi_error for `code`: "rank R, OPERATION: WHAT: <MPI error string>".
[[noreturn]] void throw_mpi_error(int code, int rank, std::string_view operation, std::string_view what);
inline void check(int code, int rank, std::string_view operation, std::string_view what) {
  if (code != MPI_SUCCESS) throw_mpi_error(code, rank, operation, what);
}
// The same for a call involving `peer`: "WHAT rank PEER: ...", formatted only on failure
// (messages are posted on every round).
[[noreturn]] void throw_mpi_error(int code, int rank, std::string_view operation, std::string_view what, int peer);
inline void check(int code, int rank, std::string_view operation, std::string_view what, int peer) {
  if (code != MPI_SUCCESS) throw_mpi_error(code, rank, operation, what, peer);
}

}  // namespace ranklab::mpi::detail
