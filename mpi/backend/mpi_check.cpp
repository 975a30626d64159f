// MPI errors as ranklab exceptions (see mpi_check.hpp).
#include "mpi_check.hpp"

#include <fmt/format.h>

#include "ranklab/mpi_error.hpp"

namespace ranklab::mpi::detail {

std::string error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (PMPI_Error_string(code, text, &length) != MPI_SUCCESS) return fmt::format("MPI error {}", code);
  return std::string(text, static_cast<std::size_t>(length));
}

void throw_mpi_error(int code, int rank, std::string_view operation, std::string_view what) {
  int error_class = code;
  PMPI_Error_class(code, &error_class);
  throw mpi_error(rank, std::string(operation), fmt::format("{}: {}", what, error_string(code)), code, error_class);
}

void throw_mpi_error(int code, int rank, std::string_view operation, std::string_view what, int peer) {
  throw_mpi_error(code, rank, operation, fmt::format("{} rank {}", what, peer));
}

}  // namespace ranklab::mpi::detail
