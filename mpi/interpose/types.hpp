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

// Whether `t` is a derived datatype: made by a constructor from other types (not a named
// one, nor an MPI_Type_create_f90_* one, which MPI counts as predefined).
bool is_derived(MPI_Datatype t);

// The reductions ranklab has no builtin for, computed by the interposer's own kernels
// (kernels.cpp) as ranklab user operators (commutative, like every predefined MPI
// operator) on elements in their packed form (MPI_Pack's bytes: the value then the index of
// a pair type, no padding).
enum class mpi_operator : std::uint8_t { sum, prod, min, max, land, lor, lxor, band, bor, bxor, minloc, maxloc };
// How an element is stored: as one of ranklab's element types, or a value the interposer
// reduces itself.
enum class element_layout : std::uint8_t {
  ranklab,  // one of ranklab's element types
  long_double,
  float_complex,
  double_complex,
  long_double_complex,
  // MINLOC/MAXLOC pairs (value, index): MPI_FLOAT_INT ... and Fortran's MPI_2REAL ...
  float_int,
  double_int,
  long_int,
  int_int,
  short_int,
  long_double_int,
  float_float,
  double_double,
};
// The kernel computing `o` on elements of layout `l` (of ranklab type `t`: LXOR on integers
// goes by their size); nullptr when the interposer has none.
user_function interposer_kernel(mpi_operator o, element_layout l, const datatype& t);

// The element type and operator of a reduction, as ranklab runs it, on the buffers packed to
// their type signature (staging.hpp: dense ones are used as they are). A predefined
// operator needs a predefined type MPI defines it on (MPI 4.0, sections 6.9.2 and 6.9.4:
// "predefined operators work only with the MPI types listed" there, so not with derived
// types, which Open MPI and MPICH both reject with MPI_ERR_OP); what ranklab has no builtin
// for (MINLOC, MAXLOC, LXOR, long double, complex) runs as an interposer kernel. An
// operator from MPI_Op_create needs a dense type, and ranklab calls the user's function
// with the user's datatype. Throws fallback otherwise. Not copyable: the operator points
// into it.
class reduction_spec {
 public:
  reduction_spec(MPI_Datatype t, MPI_Op o);
  reduction_spec(const reduction_spec&) = delete;
  reduction_spec& operator=(const reduction_spec&) = delete;
  const datatype& type() const { return type_; }
  const ranklab::op& reduction() const { return op_; }
  // False where the native libraries are known to compute this reduction wrongly, so the MPI
  // table's "native" must not apply: MPI_MIN/MPI_MAX on unsigned integers (compared as
  // signed by Open MPI 4.1 for MPI_UNSIGNED_LONG and by MPICH 4.0 for several types) and on
  // MPI_OFFSET (compared as unsigned by Open MPI 4.1); found by the interposer's conformance
  // suite (tests/mpi/interpose_conformance_reductions.c).
  bool native_trusted() const { return native_trusted_; }

  // What ranklab's user operator calls.
  struct user_context {
    MPI_User_function* function = nullptr;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Aint extent = 0;
  };

 private:
  bool predefined_operator(MPI_Datatype t, MPI_Op o);  // false: `o` is not predefined
  void user_operator(MPI_Datatype t, MPI_Op o);

  datatype type_;
  user_context user_;
  ranklab::op op_;
  bool native_trusted_ = true;
};

}  // namespace ranklab::mpi::interpose
