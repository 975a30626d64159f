// MPI datatypes and operators as ranklab sees them.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "ranklab/datatype.hpp"

namespace ranklab::mpi::interpose {

// Bytes per element (MPI_Type_size) and the extent between elements.
struct type_shape {
  std::uint64_t size = 0;
  MPI_Aint extent = 0;
  // True when n elements are exactly n * size consecutive bytes in type-signature order (a
  // predefined type without padding, or contiguous/vector/resized compositions of one that
  // leave no gaps): such a buffer is moved as is, any other is packed.
  bool dense = false;
};
// Throws fallback(invalid_argument) for MPI_DATATYPE_NULL.
type_shape shape_of(MPI_Datatype t);

// Whether MPI_Pack of this MPI writes the raw bytes (homogeneous build), so that a packed
// buffer and a dense one can meet in one message. Checked once.
bool pack_is_raw();
// `n` elements of `t` (of shape `s`) at `buf` to `n * s.size` bytes at `packed`, and back
// (a plain copy for a dense type).
void pack(const void* buf, std::uint64_t n, MPI_Datatype t, const type_shape& s, std::byte* packed, MPI_Comm comm);
void unpack(const std::byte* packed, void* buf, std::uint64_t n, MPI_Datatype t, const type_shape& s, MPI_Comm comm);

// The element type and operator of a reduction, as ranklab runs it. A predefined operator
// needs a predefined type it is defined on (MPI's table: sums on integers and floating
// point, bitwise operators on integers and MPI_BYTE, logical ones on integers and
// MPI_C_BOOL); an operator from MPI_Op_create needs a dense type, and ranklab calls the
// user's function with the user's datatype. Throws fallback otherwise. Not copyable: the
// operator points into it.
class reduction_spec {
 public:
  reduction_spec(MPI_Datatype t, MPI_Op o);
  reduction_spec(const reduction_spec&) = delete;
  reduction_spec& operator=(const reduction_spec&) = delete;
  const datatype& type() const { return type_; }
  const ranklab::op& reduction() const { return op_; }

  // What ranklab's user operator calls.
  struct user_context {
    MPI_User_function* function = nullptr;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Aint extent = 0;
  };

 private:
  datatype type_;
  user_context user_;
  ranklab::op op_;
};

}  // namespace ranklab::mpi::interpose
