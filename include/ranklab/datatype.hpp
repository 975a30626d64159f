// Element types and reduction operators. Schedules count in elements; the executors turn
// elements into bytes and pick the reduction kernel from (operator, type).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace ranklab {

enum class type_kind : std::uint8_t {
  int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32, float64,
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
  if constexpr (std::is_same_v<U, float>) return {type_kind::float32, size};
  else if constexpr (std::is_same_v<U, double>) return {type_kind::float64, size};
  else if constexpr (std::is_integral_v<U> && !std::is_same_v<U, bool>) {
    if constexpr (sizeof(U) == 1) return {std::is_signed_v<U> ? type_kind::int8 : type_kind::uint8, size};
    else if constexpr (sizeof(U) == 2) return {std::is_signed_v<U> ? type_kind::int16 : type_kind::uint16, size};
    else if constexpr (sizeof(U) == 4) return {std::is_signed_v<U> ? type_kind::int32 : type_kind::uint32, size};
    else if constexpr (sizeof(U) == 8) return {std::is_signed_v<U> ? type_kind::int64 : type_kind::uint64, size};
    else return {type_kind::bytes, size};
  } else return {type_kind::bytes, size};
}

enum class op_kind : std::uint8_t { sum, prod, min, max, band, bor, bxor, land, lor, user };

// MPI_User_function semantics: inout[i] = in[i] (+) inout[i] for i < n.
using user_function = void (*)(const void* in, void* inout, std::size_t n, const void* context);

struct op {
  op_kind kind = op_kind::sum;
  bool commutative = true;
  user_function function = nullptr;  // only for op_kind::user
  const void* context = nullptr;     // passed to function; the caller keeps it alive

  static constexpr op builtin(op_kind k) { return op{k, true, nullptr, nullptr}; }
  static constexpr op user(user_function f, bool commutative, const void* context = nullptr) {
    return op{op_kind::user, commutative, f, context};
  }
};

namespace ops {
inline constexpr op sum = op::builtin(op_kind::sum);
inline constexpr op prod = op::builtin(op_kind::prod);
inline constexpr op min = op::builtin(op_kind::min);
inline constexpr op max = op::builtin(op_kind::max);
inline constexpr op band = op::builtin(op_kind::band);
inline constexpr op bor = op::builtin(op_kind::bor);
inline constexpr op bxor = op::builtin(op_kind::bxor);
inline constexpr op land = op::builtin(op_kind::land);
inline constexpr op lor = op::builtin(op_kind::lor);
}  // namespace ops

std::string_view name(op_kind kind);
op op_from_name(std::string_view name);  // builtin operators only; throws usage_error

// A typed user operator from a callable combine(const T& a, const T& b) -> T computing a (+) b.
// The callable must outlive every use of the returned op (it is referenced, not copied).
template <class T, class F>
op make_op(const F& combine, bool commutative) {
  auto thunk = [](const void* in, void* inout, std::size_t n, const void* context) {
    const auto& f = *static_cast<const F*>(context);
    const T* a = static_cast<const T*>(in);
    T* b = static_cast<T*>(inout);
    for (std::size_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
  };
  return op::user(thunk, commutative, &combine);
}

// The kernel that computes inout[i] = in[i] (+) inout[i]. Throws usage_error when the
// operator does not apply to the type (bitwise ops on floats, builtins on raw bytes).
using reduce_kernel = void (*)(const void* in, void* inout, std::size_t n, const void* context);
reduce_kernel kernel_for(const op& o, const datatype& t);

}  // namespace ranklab
