// The datatypes and operators of pending nonblocking calls. MPI lets a program free a
// datatype (MPI_Type_free) or an operator (MPI_Op_free) as soon as the call that uses it has
// started: "any communication that is currently using this datatype will complete
// normally". A served call uses them later: it packs and unpacks with the datatype, calls a
// user operator's function with the call's datatype, builds a v-collective's job after the
// counts exchange, and issues a queued native fallback (PMPI_Ireduce ...) once the calls
// before it on the communicator are issued. So each pending call holds the derived datatypes
// and the user operators it was given, from its start to its completion, and MPI_Type_free /
// MPI_Op_free of a held handle are deferred: the program's handle becomes
// MPI_DATATYPE_NULL / MPI_OP_NULL at once (as MPI does), the native free happens when the
// last pending call holding it completes. The handle the program passed stays the one used
// (what a user operator's function is given), and MPI cannot give it to a new datatype or
// operator meanwhile. Predefined datatypes and operators are never held (they are not freed).
#pragma once
#include <mpi.h>

namespace ranklab::mpi::interpose {

// A call's handles that are significant at this rank (MPI_DATATYPE_NULL / MPI_OP_NULL:
// none; a root-only or MPI_IN_PLACE-ignored argument may be anything, so it is left out).
struct handles {
  MPI_Datatype types[2];
  MPI_Op op;
  // (MPICH's datatypes and operators are both ints: no overloads on them.)
  handles(MPI_Datatype a = MPI_DATATYPE_NULL, MPI_Datatype b = MPI_DATATYPE_NULL, MPI_Op o = MPI_OP_NULL)
      : types{a, b}, op(o) {}
};

// Holds a call's derived datatypes and user operator while it lives (move-only).
class held {
 public:
  held() = default;
  explicit held(const handles& h);
  held(held&& other) noexcept : h_(other.h_) { other.h_ = {}; }
  held& operator=(held&& other) noexcept;
  held(const held&) = delete;
  held& operator=(const held&) = delete;
  ~held() { release(); }

 private:
  void release() noexcept;
  handles h_;  // only what is held
};

// MPI_Type_free / MPI_Op_free of `h`: true if a pending call holds it, which then frees it
// natively at its completion (the program's handle is to be set to null by the caller).
bool defer_type_free(MPI_Datatype t);
bool defer_op_free(MPI_Op o);

}  // namespace ranklab::mpi::interpose
