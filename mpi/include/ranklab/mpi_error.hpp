// The exception for a failed MPI call inside ranklab's MPI backend: the MPI error code and
// class travel with the ranklab error (rank, operation, cause = the MPI error string).
#pragma once
#include <string>

#include "ranklab/errors.hpp"

namespace ranklab::mpi {

class mpi_error : public error {
 public:
  mpi_error(int rank, std::string operation, const std::string& cause, int code, int error_class)
      : error(rank, std::move(operation), cause), code_(code), class_(error_class) {}
  int code() const noexcept { return code_; }
  int error_class() const noexcept { return class_; }

 private:
  int code_;
  int class_;
};

}  // namespace ranklab::mpi
