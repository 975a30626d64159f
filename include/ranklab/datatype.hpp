// Element types and reduction operators. Schedules count in elements; the executors turn
// elements into bytes and pick the reduction kernel from (operator, type).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <type_traits>

namespace ranklab {

enum class type_kind : std::uint8_t {
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  float32,
  float64,
  bytes  // any trivially copyable type; only user-defined operators reduce it
};

struct datatype {
  type_kind kind = type_kind::bytes;
  std::uint32_t size = 1;  // bytes per element
  friend bool operator==(const datatype&, const datatype&) = default;
};

std::string_view name(type_kind kind);
// "int32", "float64", ... ; throws usage_error for unknown names
datatype datatype_from_name(std::string_view name);

template <class T>
constexpr datatype datatype_of() {
  static_assert(std::is_trivially_copyable_v<T>, "ranklab moves trivially copyable data only");
  using U = std::remove_cv_t<T>;
  constexpr auto size = static_cast<std::uint32_t>(sizeof(U));
  if constexpr (std::is_same_v<U, float>)
    return {type_kind::float32, size};
  else if constexpr (std::is_same_v<U, double>)
    return {type_kind::float64, size};
  else if constexpr (std::is_integral_v<U> && !std::is_same_v<U, bool>) {
    if constexpr (sizeof(U) == 1)
      return {std::is_signed_v<U> ? type_kind::int8 : type_kind::uint8, size};
    else if constexpr (sizeof(U) == 2)
      return {std::is_signed_v<U> ? type_kind::int16 : type_kind::uint16, size};
    else if constexpr (sizeof(U) == 4)
      return {std::is_signed_v<U> ? type_kind::int32 : type_kind::uint32, size};
    else if constexpr (sizeof(U) == 8)
      return {std::is_signed_v<U> ? type_kind::int64 : type_kind::uint64, size};
    else
      return {type_kind::bytes, size};
  } else
    return {type_kind::bytes, size};
}

enum class op_kind : std::uint8_t { sum, prod, min, max, band, bor, bxor, land, lor, user };

// MPI_User_function semantics: inout[i] = in[i] (+) inout[i] for i < n.
using user_function = void (*)(const void* in, void* inout, std::size_t n, const void* context);

// Cheap to copy: a user operator made by make_op shares its callable with every copy
// (one reference count), so no copy can dangle. Not a literal type (it may own that
// callable), hence the builtin operators below are constinit objects, not constexpr.
struct op {
  op_kind kind = op_kind::sum;
  bool commutative = true;
  user_function function = nullptr;  // only for op_kind::user
  const void* context = nullptr;     // passed to function; points into `owner` when set
  // Keeps what `context` points to alive (make_op's copy of the callable); empty for
  // op::user, whose caller keeps its context alive.
  std::shared_ptr<const void> owner;
  // The element type the operator was written for (make_op<T>); size 0 means any type
  // (op::user, builtins). Reducing another type is a usage_error, not wild reads.
  datatype element{type_kind::bytes, 0};

  // constexpr constructors (allowed on a non-literal type) keep ops::sum and friends
  // constant-initialized: no static initialization order issues.
  constexpr op() = default;
  constexpr explicit op(op_kind k, bool commutative_ = true, user_function f = nullptr, const void* context_ = nullptr)
      : kind(k), commutative(commutative_), function(f), context(context_) {}

  static op builtin(op_kind k) { return op(k); }
  static op user(user_function f, bool commutative, const void* context = nullptr) {
    return op(op_kind::user, commutative, f, context);
  }
};

namespace ops {
inline constinit const op sum{op_kind::sum};
inline constinit const op prod{op_kind::prod};
inline constinit const op min{op_kind::min};
inline constinit const op max{op_kind::max};
inline constinit const op band{op_kind::band};
inline constinit const op bor{op_kind::bor};
inline constinit const op bxor{op_kind::bxor};
inline constinit const op land{op_kind::land};
inline constinit const op lor{op_kind::lor};
}  // namespace ops

std::string_view name(op_kind kind);
op op_from_name(std::string_view name);  // builtin operators only; throws usage_error

// A typed user operator from a callable combine(const T& a, const T& b) -> T computing a (+) b.
// The op keeps its own copy of the callable (shared by all copies of the op), so a
// temporary lambda with captures is fine: make_op<double>([k](double a, double b) {...}, true).
template <class T, class F>
op make_op(F&& combine, bool commutative) {
  using callable = std::decay_t<F>;
  static_assert(std::is_trivially_copyable_v<T>, "ranklab moves trivially copyable data only");
  static_assert(std::is_invocable_r_v<T, const callable&, const T&, const T&>,
                "make_op<T>(f, ...): f must be callable as f(const T&, const T&) -> T on a const f");
  auto thunk = [](const void* in, void* inout, std::size_t n, const void* context) {
    const callable& f = *static_cast<const callable*>(context);
    const T* a = static_cast<const T*>(in);
    T* b = static_cast<T*>(inout);
    for (std::size_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
  };
  std::shared_ptr<const callable> owned = std::make_shared<callable>(std::forward<F>(combine));
  op o = op::user(thunk, commutative, owned.get());
  o.owner = std::move(owned);
  o.element = datatype_of<T>();
  return o;
}

// The kernel that computes inout[i] = in[i] (+) inout[i]. Throws usage_error when the
// operator does not apply to the type (bitwise ops on floats, builtins on raw bytes, a
// make_op<T> operator on another type, a user operator without a function).
using reduce_kernel = void (*)(const void* in, void* inout, std::size_t n, const void* context);
reduce_kernel kernel_for(const op& o, const datatype& t);

}  // namespace ranklab
