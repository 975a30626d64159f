// The interposer's own reduction kernels: what MPI predefines and ranklab has no builtin
// for (see types.hpp, interposer_kernel). ranklab runs them as user operators on elements in
// packed form, which puts a pair's index right after its value (MPI_DOUBLE_INT: 12 bytes,
// the index at offset 8 whatever its alignment) and a long double anywhere in a message: so
// every element is loaded and stored with memcpy, never through a typed pointer.
//
// Why packed pairs rather than the pair structs as they lie in memory (16 bytes for
// MPI_DOUBLE_INT, 32 for MPI_LONG_DOUBLE_INT, with the index at the struct's offset): the
// packed form is the type signature, which the staging machinery the data-movement
// collectives use already produces (staging.hpp; a dense pair such as MPI_2INT is used in
// place); it moves no padding over the network, and the result never writes the padding
// bytes of the caller's buffer, which are not in the type map. The price is a copy in and
// out for the padded pairs.
#include <complex>
#include <cstring>

#include "types.hpp"

namespace ranklab::mpi::interpose {

namespace {

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void store(std::byte* p, const T& v) {
  std::memcpy(p, &v, sizeof v);
}

// inout[i] = f(in[i], inout[i]) on values of T, `Combine` a stateless callable.
template <class T, class Combine>
void elementwise(const void* in, void* inout, std::size_t n, const void*) {
  const auto* a = static_cast<const std::byte*>(in);
  auto* b = static_cast<std::byte*>(inout);
  for (std::size_t i = 0; i < n; ++i, a += sizeof(T), b += sizeof(T)) store(b, Combine{}(load<T>(a), load<T>(b)));
}

struct plus {
  template <class T>
  T operator()(const T& x, const T& y) const {
    return x + y;
  }
};
struct times {
  template <class T>
  T operator()(const T& x, const T& y) const {
    return x * y;
  }
};
struct lesser {
  template <class T>
  T operator()(const T& x, const T& y) const {
    return y < x ? y : x;
  }
};
struct greater {
  template <class T>
  T operator()(const T& x, const T& y) const {
    return x < y ? y : x;
  }
};
// MPI_LXOR: 1 when exactly one operand is non-zero, else 0, in the operands' type.
struct logical_xor {
  template <class T>
  T operator()(const T& x, const T& y) const {
    return static_cast<T>((x != 0) != (y != 0));
  }
};

// MPI_MINLOC / MPI_MAXLOC on packed (value, index) pairs (MPI 4.0, section 6.9.4): the
// lesser (greater) value with its index; on equal values the lesser index.
template <class V, class I, bool max>
void locate(const void* in, void* inout, std::size_t n, const void*) {
  constexpr std::size_t size = sizeof(V) + sizeof(I);
  const auto* a = static_cast<const std::byte*>(in);
  auto* b = static_cast<std::byte*>(inout);
  for (std::size_t e = 0; e < n; ++e, a += size, b += size) {
    const V u = load<V>(a);
    const V v = load<V>(b);
    if (max ? v < u : u < v) {
      std::memcpy(b, a, size);
    } else if (u == v) {
      const I i = load<I>(a + sizeof(V));
      if (i < load<I>(b + sizeof(V))) store(b + sizeof(V), i);
    }
  }
}

template <class V, class I>
user_function located(mpi_operator o) {
  if (o == mpi_operator::minloc) return &locate<V, I, false>;
  if (o == mpi_operator::maxloc) return &locate<V, I, true>;
  return nullptr;
}

// Sums and products; minima and maxima too where `ordered`.
template <class T, bool ordered>
user_function arithmetic(mpi_operator o) {
  switch (o) {
    case mpi_operator::sum:
      return &elementwise<T, plus>;
    case mpi_operator::prod:
      return &elementwise<T, times>;
    case mpi_operator::min:
      if constexpr (ordered) return &elementwise<T, lesser>;
      return nullptr;
    case mpi_operator::max:
      if constexpr (ordered) return &elementwise<T, greater>;
      return nullptr;
    default:
      return nullptr;
  }
}

// LXOR on integers (and MPI_C_BOOL): by size, since only zero or not matters.
user_function logical_xor_of(const datatype& t) {
  if (t.kind == type_kind::bytes || t.kind == type_kind::float32 || t.kind == type_kind::float64) return nullptr;
  switch (t.size) {
    case 1:
      return &elementwise<std::uint8_t, logical_xor>;
    case 2:
      return &elementwise<std::uint16_t, logical_xor>;
    case 4:
      return &elementwise<std::uint32_t, logical_xor>;
    case 8:
      return &elementwise<std::uint64_t, logical_xor>;
    default:
      return nullptr;
  }
}

}  // namespace

user_function interposer_kernel(mpi_operator o, element_layout l, const datatype& t) {
  switch (l) {
    case element_layout::ranklab:
      return o == mpi_operator::lxor ? logical_xor_of(t) : nullptr;
    case element_layout::long_double:
      return arithmetic<long double, true>(o);
    case element_layout::float_complex:
      return arithmetic<std::complex<float>, false>(o);
    case element_layout::double_complex:
      return arithmetic<std::complex<double>, false>(o);
    case element_layout::long_double_complex:
      return arithmetic<std::complex<long double>, false>(o);
    case element_layout::float_int:
      return located<float, int>(o);
    case element_layout::double_int:
      return located<double, int>(o);
    case element_layout::long_int:
      return located<long, int>(o);
    case element_layout::int_int:
      return located<int, int>(o);
    case element_layout::short_int:
      return located<short, int>(o);
    case element_layout::long_double_int:
      return located<long double, int>(o);
    case element_layout::float_float:
      return located<float, float>(o);
    case element_layout::double_double:
      return located<double, double>(o);
  }
  return nullptr;
}

}  // namespace ranklab::mpi::interpose
