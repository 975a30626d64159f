// Reductions: MPI's predefined types and operators as ranklab's, and user operators. MPI has
// no call that returns an operator's function, so MPI_Op_create and MPI_Op_free are
// intercepted too, to remember which function each user operator calls.
#include <climits>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "handles.hpp"
#include "interpose.hpp"
#include "types.hpp"

namespace ranklab::mpi::interpose {

namespace {

// MPI's groups of types (MPI 4.0, section 6.9.2; the pairs: 6.9.4), as bits: an operator
// lists those it is defined on. MPI_CHAR and MPI_WCHAR are in none (they are characters,
// not C integers): every predefined operator on them goes to the native library, which
// reports the error (or applies its own extension).
enum group : unsigned {
  c_integer = 1,
  fortran_integer = 2,
  floating = 4,
  complex = 8,
  logical = 16,
  byte = 32,
  multi_language = 64,
  pair = 128,
  character = 0,
};

struct predefined_type {
  MPI_Datatype handle;
  datatype type;
  group g;
  element_layout layout = element_layout::ranklab;
};

struct predefined_op {
  MPI_Op handle;
  mpi_operator id;
  unsigned groups;
};

// A value ranklab moves as `bytes` for the interposer's kernels (its packed size).
template <class... Parts>
constexpr datatype packed_bytes() {
  return {type_kind::bytes, static_cast<std::uint32_t>((sizeof(Parts) + ...))};
}

// C's _Bool and C++'s bool are one byte holding 0 or 1; ranklab's logical operators yield 0
// or 1. Fortran's types are in the C header whether or not their compiler made the sizes
// assumed here (INTEGER 4 bytes, REAL binary32 ...): find_type checks MPI_Type_size.
// Not served: MPI_LOGICAL (what .TRUE. is depends on the Fortran compiler),
// MPI_INTEGER16 / MPI_REAL2 / MPI_REAL16 (no such element type here), F90 parameterized types.
const std::vector<predefined_type>& types_table() {
  static const std::vector<predefined_type> table = {
      {MPI_SIGNED_CHAR, datatype_of<signed char>(), c_integer},
      {MPI_UNSIGNED_CHAR, datatype_of<unsigned char>(), c_integer},
      {MPI_SHORT, datatype_of<short>(), c_integer},
      {MPI_UNSIGNED_SHORT, datatype_of<unsigned short>(), c_integer},
      {MPI_INT, datatype_of<int>(), c_integer},
      {MPI_UNSIGNED, datatype_of<unsigned>(), c_integer},
      {MPI_LONG, datatype_of<long>(), c_integer},
      {MPI_UNSIGNED_LONG, datatype_of<unsigned long>(), c_integer},
      {MPI_LONG_LONG_INT, datatype_of<long long>(), c_integer},
      {MPI_LONG_LONG, datatype_of<long long>(), c_integer},
      {MPI_UNSIGNED_LONG_LONG, datatype_of<unsigned long long>(), c_integer},
      {MPI_INT8_T, datatype_of<std::int8_t>(), c_integer},
      {MPI_INT16_T, datatype_of<std::int16_t>(), c_integer},
      {MPI_INT32_T, datatype_of<std::int32_t>(), c_integer},
      {MPI_INT64_T, datatype_of<std::int64_t>(), c_integer},
      {MPI_UINT8_T, datatype_of<std::uint8_t>(), c_integer},
      {MPI_UINT16_T, datatype_of<std::uint16_t>(), c_integer},
      {MPI_UINT32_T, datatype_of<std::uint32_t>(), c_integer},
      {MPI_UINT64_T, datatype_of<std::uint64_t>(), c_integer},
      {MPI_CHAR, datatype_of<char>(), character},
      {MPI_WCHAR, datatype_of<wchar_t>(), character},
      {MPI_INTEGER, datatype_of<std::int32_t>(), fortran_integer},
      {MPI_INTEGER1, datatype_of<std::int8_t>(), fortran_integer},
      {MPI_INTEGER2, datatype_of<std::int16_t>(), fortran_integer},
      {MPI_INTEGER4, datatype_of<std::int32_t>(), fortran_integer},
      {MPI_INTEGER8, datatype_of<std::int64_t>(), fortran_integer},
      {MPI_FLOAT, datatype_of<float>(), floating},
      {MPI_DOUBLE, datatype_of<double>(), floating},
      {MPI_LONG_DOUBLE, packed_bytes<long double>(), floating, element_layout::long_double},
      {MPI_REAL, datatype_of<float>(), floating},
      {MPI_DOUBLE_PRECISION, datatype_of<double>(), floating},
      {MPI_REAL4, datatype_of<float>(), floating},
      {MPI_REAL8, datatype_of<double>(), floating},
      {MPI_C_FLOAT_COMPLEX, packed_bytes<float, float>(), complex, element_layout::float_complex},
      {MPI_C_DOUBLE_COMPLEX, packed_bytes<double, double>(), complex, element_layout::double_complex},
      {MPI_C_LONG_DOUBLE_COMPLEX, packed_bytes<long double, long double>(), complex,
       element_layout::long_double_complex},
      {MPI_CXX_FLOAT_COMPLEX, packed_bytes<float, float>(), complex, element_layout::float_complex},
      {MPI_CXX_DOUBLE_COMPLEX, packed_bytes<double, double>(), complex, element_layout::double_complex},
      {MPI_CXX_LONG_DOUBLE_COMPLEX, packed_bytes<long double, long double>(), complex,
       element_layout::long_double_complex},
      {MPI_COMPLEX, packed_bytes<float, float>(), complex, element_layout::float_complex},
      {MPI_DOUBLE_COMPLEX, packed_bytes<double, double>(), complex, element_layout::double_complex},
      {MPI_BYTE, datatype_of<std::uint8_t>(), byte},
      {MPI_C_BOOL, datatype_of<std::uint8_t>(), logical},
      {MPI_CXX_BOOL, datatype_of<std::uint8_t>(), logical},
      {MPI_AINT, datatype_of<MPI_Aint>(), multi_language},
      {MPI_OFFSET, datatype_of<MPI_Offset>(), multi_language},
      {MPI_COUNT, datatype_of<MPI_Count>(), multi_language},
      {MPI_FLOAT_INT, packed_bytes<float, int>(), pair, element_layout::float_int},
      {MPI_DOUBLE_INT, packed_bytes<double, int>(), pair, element_layout::double_int},
      {MPI_LONG_INT, packed_bytes<long, int>(), pair, element_layout::long_int},
      {MPI_2INT, packed_bytes<int, int>(), pair, element_layout::int_int},
      {MPI_SHORT_INT, packed_bytes<short, int>(), pair, element_layout::short_int},
      {MPI_LONG_DOUBLE_INT, packed_bytes<long double, int>(), pair, element_layout::long_double_int},
      {MPI_2INTEGER, packed_bytes<std::int32_t, std::int32_t>(), pair, element_layout::int_int},
      {MPI_2REAL, packed_bytes<float, float>(), pair, element_layout::float_float},
      {MPI_2DOUBLE_PRECISION, packed_bytes<double, double>(), pair, element_layout::double_double},
  };
  return table;
}

// The entry of a named type, if its size is the one assumed (else nullptr: native). The
// size is asked only of a type the program passed, so never of one this MPI lacks.
const predefined_type* find_type(MPI_Datatype t) {
  for (const predefined_type& p : types_table()) {
    if (p.handle != t) continue;
    MPI_Count size = 0;
    check_mpi(PMPI_Type_size_x(t, &size), "MPI_Type_size_x");
    return static_cast<std::uint64_t>(size) == p.type.size ? &p : nullptr;
  }
  return nullptr;
}

const predefined_op* find_op(MPI_Op o) {
  constexpr unsigned ordered = c_integer | fortran_integer | floating | multi_language;
  static const predefined_op table[] = {
      {MPI_SUM, mpi_operator::sum, ordered | complex},
      {MPI_PROD, mpi_operator::prod, ordered | complex},
      {MPI_MIN, mpi_operator::min, ordered},
      {MPI_MAX, mpi_operator::max, ordered},
      {MPI_LAND, mpi_operator::land, c_integer | logical},
      {MPI_LOR, mpi_operator::lor, c_integer | logical},
      {MPI_LXOR, mpi_operator::lxor, c_integer | logical},
      {MPI_BAND, mpi_operator::band, c_integer | fortran_integer | byte | multi_language},
      {MPI_BOR, mpi_operator::bor, c_integer | fortran_integer | byte | multi_language},
      {MPI_BXOR, mpi_operator::bxor, c_integer | fortran_integer | byte | multi_language},
      {MPI_MINLOC, mpi_operator::minloc, pair},
      {MPI_MAXLOC, mpi_operator::maxloc, pair},
  };
  for (const predefined_op& p : table)
    if (p.handle == o) return &p;
  return nullptr;
}

// ranklab's builtin for `o`, if it has one.
std::optional<op_kind> builtin_kind(mpi_operator o) {
  switch (o) {
    case mpi_operator::sum:
      return op_kind::sum;
    case mpi_operator::prod:
      return op_kind::prod;
    case mpi_operator::min:
      return op_kind::min;
    case mpi_operator::max:
      return op_kind::max;
    case mpi_operator::land:
      return op_kind::land;
    case mpi_operator::lor:
      return op_kind::lor;
    case mpi_operator::band:
      return op_kind::band;
    case mpi_operator::bor:
      return op_kind::bor;
    case mpi_operator::bxor:
      return op_kind::bxor;
    default:
      return std::nullopt;
  }
}

// User operators made by MPI_Op_create and not yet freed.
std::mutex user_ops_lock;
std::map<MPI_Op, MPI_User_function*>& user_ops() {
  static std::map<MPI_Op, MPI_User_function*> ops;
  return ops;
}

MPI_User_function* find_user(MPI_Op o) {
  std::lock_guard lock(user_ops_lock);
  const auto it = user_ops().find(o);
  return it == user_ops().end() ? nullptr : it->second;
}

// ranklab's user_function calling MPI's: same order (inout = in (+) inout), int lengths.
void call_user(const void* in, void* inout, std::size_t n, const void* context) {
  const auto& u = *static_cast<const reduction_spec::user_context*>(context);
  MPI_Datatype type = u.type;
  for (std::size_t done = 0; done < n;) {
    int len = static_cast<int>(std::min<std::size_t>(n - done, INT_MAX));
    u.function(const_cast<char*>(static_cast<const char*>(in)) + done * u.extent,
               static_cast<char*>(inout) + done * u.extent, &len, &type);
    done += static_cast<std::size_t>(len);
  }
}

bool is_unsigned(type_kind k) {
  return k == type_kind::uint8 || k == type_kind::uint16 || k == type_kind::uint32 || k == type_kind::uint64;
}

}  // namespace

reduction_spec::reduction_spec(MPI_Datatype t, MPI_Op o) {
  if (t == MPI_DATATYPE_NULL || o == MPI_OP_NULL) throw fallback{reason::invalid_argument};
  if (!predefined_operator(t, o)) user_operator(t, o);
}

// Decided from the datatype and the operator, which MPI requires to be the same at every
// rank for a predefined operator (MPI 4.0, section 6.9.1).
bool reduction_spec::predefined_operator(MPI_Datatype t, MPI_Op o) {
  const predefined_op* po = find_op(o);
  if (!po) return false;
  if (is_derived(t)) throw fallback{reason::derived_datatype};
  const predefined_type* pt = find_type(t);
  if (!pt) throw fallback{reason::datatype};
  if ((po->groups & pt->g) == 0) throw fallback{reason::operator_type};
  // A pair with padding is packed: its packed bytes must be the values.
  if (!shape_of(t).dense && !pack_is_raw()) throw fallback{reason::packing};
  type_ = pt->type;
  const bool min_max = po->id == mpi_operator::min || po->id == mpi_operator::max;
  native_trusted_ = !(min_max && (is_unsigned(pt->type.kind) || t == MPI_OFFSET));
  const std::optional<op_kind> builtin = builtin_kind(po->id);
  if (pt->layout == element_layout::ranklab && builtin) {
    op_ = ranklab::op::builtin(*builtin);
    return true;
  }
  user_function kernel = interposer_kernel(po->id, pt->layout, pt->type);
  if (!kernel) throw fallback{reason::operator_type};  // the tables above disagree with kernels.cpp
  op_ = ranklab::op::user(kernel, true);
  return true;
}

void reduction_spec::user_operator(MPI_Datatype t, MPI_Op o) {
  MPI_User_function* f = find_user(o);
  if (!f) throw fallback{reason::operator_kind};
  // ranklab steps through elements size bytes apart, and the user's function expects the
  // user's layout: the type must have no gaps.
  const type_shape s = shape_of(t);
  if (!s.dense || s.size == 0 || s.size > UINT32_MAX) throw fallback{reason::user_layout};
  const predefined_type* pt = is_derived(t) ? nullptr : find_type(t);
  type_ = pt && pt->layout == element_layout::ranklab ? pt->type
                                                      : datatype{type_kind::bytes, static_cast<std::uint32_t>(s.size)};
  int commutative = 1;
  check_mpi(PMPI_Op_commutative(o, &commutative), "MPI_Op_commutative");
  user_ = {f, t, s.extent};
  op_ = ranklab::op::user(&call_user, commutative != 0, &user_);
}

}  // namespace ranklab::mpi::interpose

extern "C" int MPI_Op_create(MPI_User_function* function, int commute, MPI_Op* op) {
  using namespace ranklab::mpi::interpose;
  const int rc = PMPI_Op_create(function, commute, op);
  if (rc == MPI_SUCCESS) {
    std::lock_guard lock(user_ops_lock);
    user_ops()[*op] = function;
  }
  return rc;
}

// An operator a pending call holds (handles.hpp) is freed natively when the last such call
// completes; it is no longer the program's from now on.
extern "C" int MPI_Op_free(MPI_Op* op) {
  using namespace ranklab::mpi::interpose;
  const MPI_Op freed = op ? *op : MPI_OP_NULL;
  int rc = MPI_SUCCESS;
  if (defer_op_free(freed))
    *op = MPI_OP_NULL;
  else
    rc = PMPI_Op_free(op);
  if (rc == MPI_SUCCESS) {
    std::lock_guard lock(user_ops_lock);
    user_ops().erase(freed);
  }
  return rc;
}
