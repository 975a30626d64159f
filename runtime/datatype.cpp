// Reduction kernels for the builtin operators, one instantiation per (operator, type).
// Written as plain loops over restrict-free spans that g++ -O2 vectorises.
#include "ranklab/datatype.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "ranklab/errors.hpp"

namespace ranklab {

namespace {

constexpr std::array<std::string_view, 11> type_names = {"int8",  "uint8",  "int16",   "uint16",  "int32", "uint32",
                                                         "int64", "uint64", "float32", "float64", "bytes"};
constexpr std::array<std::string_view, 10> op_names = {"sum", "prod", "min",  "max", "band",
                                                       "bor", "bxor", "land", "lor", "user"};

template <class T, class F>
void apply(const void* in, void* inout, std::size_t n, F f) {
  // memcpy-free typed access: buffers are element-aligned by construction (element offsets)
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (std::size_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
}

// Integer sums and products wrap (two's complement), computed unsigned to stay defined.
template <class T>
using arith_t = typename std::conditional_t<std::is_integral_v<T>, std::make_unsigned<T>, std::type_identity<T>>::type;

template <class T, op_kind K>
void builtin_kernel(const void* in, void* inout, std::size_t n, const void*) {
  using A = arith_t<T>;
  if constexpr (K == op_kind::sum)
    apply<T>(in, inout, n, [](T a, T b) { return T(A(a) + A(b)); });
  else if constexpr (K == op_kind::prod)
    apply<T>(in, inout, n, [](T a, T b) { return T(A(A(a) * A(b))); });
  else if constexpr (K == op_kind::min)
    apply<T>(in, inout, n, [](T a, T b) { return b < a ? b : a; });
  else if constexpr (K == op_kind::max)
    apply<T>(in, inout, n, [](T a, T b) { return a < b ? b : a; });
  else if constexpr (K == op_kind::land)
    apply<T>(in, inout, n, [](T a, T b) { return T(a && b); });
  else if constexpr (K == op_kind::lor)
    apply<T>(in, inout, n, [](T a, T b) { return T(a || b); });
  else if constexpr (std::is_integral_v<T>) {
    if constexpr (K == op_kind::band)
      apply<T>(in, inout, n, [](T a, T b) { return T(a & b); });
    else if constexpr (K == op_kind::bor)
      apply<T>(in, inout, n, [](T a, T b) { return T(a | b); });
    else if constexpr (K == op_kind::bxor)
      apply<T>(in, inout, n, [](T a, T b) { return T(a ^ b); });
  }
}

template <class T>
reduce_kernel kernel_for_type(op_kind k) {
  switch (k) {
    case op_kind::sum:
      return builtin_kernel<T, op_kind::sum>;
    case op_kind::prod:
      return builtin_kernel<T, op_kind::prod>;
    case op_kind::min:
      return builtin_kernel<T, op_kind::min>;
    case op_kind::max:
      return builtin_kernel<T, op_kind::max>;
    case op_kind::land:
      return builtin_kernel<T, op_kind::land>;
    case op_kind::lor:
      return builtin_kernel<T, op_kind::lor>;
    case op_kind::band:
    case op_kind::bor:
    case op_kind::bxor:
      if constexpr (std::is_integral_v<T>) {
        if (k == op_kind::band) return builtin_kernel<T, op_kind::band>;
        if (k == op_kind::bor) return builtin_kernel<T, op_kind::bor>;
        return builtin_kernel<T, op_kind::bxor>;
      }
      return nullptr;
    case op_kind::user:
      return nullptr;
  }
  return nullptr;
}

}  // namespace

// A value cast from a bad integer must not index past the tables (it names itself "unknown").
std::string_view name(type_kind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return i < type_names.size() ? type_names[i] : "unknown";
}
std::string_view name(op_kind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return i < op_names.size() ? op_names[i] : "unknown";
}

datatype datatype_from_name(std::string_view n) {
  constexpr std::array<std::uint32_t, 11> sizes = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 1};
  for (std::size_t i = 0; i + 1 < type_names.size(); ++i)
    if (type_names[i] == n) return {static_cast<type_kind>(i), sizes[i]};
  if (n == "int") return datatype_of<int>();
  if (n == "double") return datatype_of<double>();
  if (n == "float") return datatype_of<float>();
  throw usage_error(no_rank, "datatype",
                    "unknown type '" + std::string(n) + "' (int8..int64, uint8..uint64, float32, float64)");
}

op op_from_name(std::string_view n) {
  for (std::size_t i = 0; i + 1 < op_names.size(); ++i)
    if (op_names[i] == n) return op::builtin(static_cast<op_kind>(i));
  throw usage_error(no_rank, "operator",
                    "unknown operator '" + std::string(n) + "' (sum, prod, min, max, band, bor, bxor, land, lor)");
}

reduce_kernel kernel_for(const op& o, const datatype& t) {
  if (o.kind == op_kind::user) {
    if (o.function == nullptr)
      throw usage_error(no_rank, "operator", "user-defined operator without a function (op::user(nullptr, ...))");
    // make_op<T> knows its T: on elements of another size it would read and write past them.
    if (o.element.size != 0 && o.element != t)
      throw usage_error(no_rank, "operator",
                        fmt::format("user operator made for elements of type '{}' ({} bytes) applied to type "
                                    "'{}' ({} bytes)",
                                    name(o.element.kind), o.element.size, name(t.kind), t.size));
    return o.function;
  }
  reduce_kernel k = nullptr;
  switch (t.kind) {
    case type_kind::int8:
      k = kernel_for_type<std::int8_t>(o.kind);
      break;
    case type_kind::uint8:
      k = kernel_for_type<std::uint8_t>(o.kind);
      break;
    case type_kind::int16:
      k = kernel_for_type<std::int16_t>(o.kind);
      break;
    case type_kind::uint16:
      k = kernel_for_type<std::uint16_t>(o.kind);
      break;
    case type_kind::int32:
      k = kernel_for_type<std::int32_t>(o.kind);
      break;
    case type_kind::uint32:
      k = kernel_for_type<std::uint32_t>(o.kind);
      break;
    case type_kind::int64:
      k = kernel_for_type<std::int64_t>(o.kind);
      break;
    case type_kind::uint64:
      k = kernel_for_type<std::uint64_t>(o.kind);
      break;
    case type_kind::float32:
      k = kernel_for_type<float>(o.kind);
      break;
    case type_kind::float64:
      k = kernel_for_type<double>(o.kind);
      break;
    case type_kind::bytes:
      break;
  }
  if (k == nullptr) {
    const char* hint = t.kind == type_kind::bytes
                           ? " (a struct or other non-arithmetic type: reduce it with make_op<T>)"
                       : o.kind == op_kind::band || o.kind == op_kind::bor || o.kind == op_kind::bxor
                           ? " (bitwise operators need an integer type)"
                           : "";
    throw usage_error(no_rank, "operator",
                      fmt::format("operator '{}' does not apply to type '{}'{}", name(o.kind), name(t.kind), hint));
  }
  return k;
}

}  // namespace ranklab
