// Holding pending calls' datatypes and operators; MPI_Type_free and MPI_Op_free deferred
// while a pending call holds the handle (see handles.hpp).
#include "handles.hpp"

#include <map>
#include <mutex>
#include <utility>

namespace ranklab::mpi::interpose {

namespace {

struct use {
  int holders = 0;
  bool freed = false;  // the program freed it: the last holder frees it natively
};

// Datatypes and operators apart: MPICH's handles of both are ints, and may be equal.
template <class Handle>
struct table {
  std::mutex lock;
  std::map<Handle, use> uses;
  int (*native_free)(Handle*);

  void hold(Handle h) {
    std::lock_guard guard(lock);
    ++uses[h].holders;
  }
  void unhold(Handle h) noexcept {
    bool free_now = false;
    {
      std::lock_guard guard(lock);
      const auto it = uses.find(h);
      if (it == uses.end() || --it->second.holders > 0) return;
      free_now = it->second.freed;
      uses.erase(it);
    }
    if (free_now) native_free(&h);
  }
  // The program frees `h`: true if a pending call holds it (the free is deferred).
  bool defer_free(Handle h) {
    std::lock_guard guard(lock);
    const auto it = uses.find(h);
    if (it == uses.end()) return false;
    it->second.freed = true;
    return true;
  }
};

table<MPI_Datatype>& types() {
  static table<MPI_Datatype> t{{}, {}, &PMPI_Type_free};
  return t;
}
table<MPI_Op>& ops() {
  static table<MPI_Op> t{{}, {}, &PMPI_Op_free};
  return t;
}

bool derived(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return false;
  int ints = 0, aints = 0, types = 0, combiner = MPI_COMBINER_NAMED;
  return PMPI_Type_get_envelope(t, &ints, &aints, &types, &combiner) == MPI_SUCCESS && combiner != MPI_COMBINER_NAMED;
}

bool user_made(MPI_Op o) {
  if (o == MPI_OP_NULL) return false;
  for (MPI_Op p : {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR,
                   MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP})
    if (o == p) return false;
  return true;
}

}  // namespace

held::held(const handles& h) {
  for (int k = 0; k < 2; ++k) {
    const MPI_Datatype t = h.types[k];
    if (!derived(t) || (k == 1 && t == h_.types[0])) continue;
    types().hold(t);
    h_.types[k] = t;
  }
  if (user_made(h.op)) {
    ops().hold(h.op);
    h_.op = h.op;
  }
}

held& held::operator=(held&& other) noexcept {
  if (this != &other) {
    release();
    h_ = other.h_;
    other.h_ = {};
  }
  return *this;
}

void held::release() noexcept {
  for (MPI_Datatype& t : h_.types)
    if (t != MPI_DATATYPE_NULL) types().unhold(std::exchange(t, MPI_DATATYPE_NULL));
  if (h_.op != MPI_OP_NULL) ops().unhold(std::exchange(h_.op, MPI_OP_NULL));
}

bool defer_type_free(MPI_Datatype t) { return t != MPI_DATATYPE_NULL && types().defer_free(t); }
bool defer_op_free(MPI_Op o) { return o != MPI_OP_NULL && ops().defer_free(o); }

}  // namespace ranklab::mpi::interpose

// A datatype a pending served call holds: freed when the last such call completes.
extern "C" int MPI_Type_free(MPI_Datatype* datatype) {
  using namespace ranklab::mpi::interpose;
  if (datatype && defer_type_free(*datatype)) {
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
  }
  return PMPI_Type_free(datatype);
}
