// Reductions: MPI's predefined types and operators as ranklab's, and user operators. MPI has
// no call that returns an operator's function, so MPI_Op_create and MPI_Op_free are
// intercepted too, to remember which function each user operator calls.
#include <climits>
#include <map>
#include <mutex>

#include "handles.hpp"
#include "interpose.hpp"
#include "types.hpp"

namespace ranklab::mpi::interpose {

namespace {

// MPI's groups of types (MPI 4.0, section 6.9.2), as bits: an operator lists those it is
// defined on.
enum group : unsigned { c_integer = 1, floating = 2, byte = 4, logical = 8, multi_language = 16 };

struct predefined_type {
  MPI_Datatype handle;
  datatype type;
  group g;
};

struct predefined_op {
  MPI_Op handle;
  op_kind kind;
  unsigned groups;
};

const predefined_type* find_type(MPI_Datatype t) {
  static const predefined_type table[] = {
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
      {MPI_FLOAT, datatype_of<float>(), floating},
      {MPI_DOUBLE, datatype_of<double>(), floating},
      {MPI_BYTE, datatype_of<std::uint8_t>(), byte},
      // C's _Bool is one byte holding 0 or 1; ranklab's logical operators yield 0 or 1.
      {MPI_C_BOOL, datatype_of<std::uint8_t>(), logical},
      {MPI_AINT, datatype_of<MPI_Aint>(), multi_language},
      {MPI_OFFSET, datatype_of<MPI_Offset>(), multi_language},
      {MPI_COUNT, datatype_of<MPI_Count>(), multi_language},
  };
  for (const predefined_type& p : table)
    if (p.handle == t) return &p;
  return nullptr;
}

const predefined_op* find_op(MPI_Op o) {
  constexpr unsigned arithmetic = c_integer | floating | multi_language;
  static const predefined_op table[] = {
      {MPI_SUM, op_kind::sum, arithmetic},
      {MPI_PROD, op_kind::prod, arithmetic},
      {MPI_MIN, op_kind::min, arithmetic},
      {MPI_MAX, op_kind::max, arithmetic},
      {MPI_LAND, op_kind::land, c_integer | logical},
      {MPI_LOR, op_kind::lor, c_integer | logical},
      {MPI_BAND, op_kind::band, c_integer | byte | multi_language},
      {MPI_BOR, op_kind::bor, c_integer | byte | multi_language},
      {MPI_BXOR, op_kind::bxor, c_integer | byte | multi_language},
  };
  for (const predefined_op& p : table)
    if (p.handle == o) return &p;
  return nullptr;
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

}  // namespace

reduction_spec::reduction_spec(MPI_Datatype t, MPI_Op o) {
  if (t == MPI_DATATYPE_NULL || o == MPI_OP_NULL) throw fallback{reason::invalid_argument};
  const predefined_type* pt = find_type(t);
  if (const predefined_op* po = find_op(o)) {
    if (!pt) throw fallback{reason::datatype};
    if ((po->groups & pt->g) == 0) throw fallback{reason::operator_type};
    type_ = pt->type;
    op_ = ranklab::op::builtin(po->kind);
    return;
  }
  MPI_User_function* f = find_user(o);
  if (!f) throw fallback{reason::operator_kind};
  // ranklab steps through elements size bytes apart: the type must have no gaps.
  const type_shape s = shape_of(t);
  if (!s.dense || s.size == 0 || s.size > UINT32_MAX) throw fallback{reason::datatype};
  type_ = pt ? pt->type : datatype{type_kind::bytes, static_cast<std::uint32_t>(s.size)};
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
