// MPI datatypes as bytes: which buffers ranklab can move as they are, and packing the others.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>

#include "interpose.hpp"
#include "types.hpp"

namespace ranklab::mpi::interpose {

namespace {

struct envelope {
  int ints = 0, aints = 0, types = 0, combiner = MPI_COMBINER_NAMED;
};

// A derived type's constructor arguments; frees the derived types MPI_Type_get_contents
// handed out (the predefined ones must not be freed, nor the F90 parameterized ones, which
// have no old types).
struct contents {
  std::vector<int> ints;
  std::vector<MPI_Aint> aints;
  std::vector<MPI_Datatype> types;
  contents(MPI_Datatype t, const envelope& e) : ints(e.ints), aints(e.aints), types(e.types) {
    check_mpi(PMPI_Type_get_contents(t, e.ints, e.aints, e.types, ints.data(), aints.data(), types.data()),
              "MPI_Type_get_contents");
  }
  contents(const contents&) = delete;
  contents& operator=(const contents&) = delete;
  ~contents() {
    for (MPI_Datatype& t : types) {
      envelope e;
      if (PMPI_Type_get_envelope(t, &e.ints, &e.aints, &e.types, &e.combiner) == MPI_SUCCESS &&
          e.combiner != MPI_COMBINER_NAMED && e.types > 0)
        PMPI_Type_free(&t);
    }
  }
};

// See type_shape::dense. Recurses through the constructors that can keep a type dense;
// any other (indexed, struct, subarray ...) may reorder or skip bytes, so it is packed.
bool dense(MPI_Datatype t) {
  MPI_Count size = 0;
  MPI_Aint lb = 0, extent = 0;
  check_mpi(PMPI_Type_size_x(t, &size), "MPI_Type_size_x");
  check_mpi(PMPI_Type_get_extent(t, &lb, &extent), "MPI_Type_get_extent");
  if (lb != 0 || extent != size) return false;
  envelope e;
  check_mpi(PMPI_Type_get_envelope(t, &e.ints, &e.aints, &e.types, &e.combiner), "MPI_Type_get_envelope");
  if (e.combiner == MPI_COMBINER_NAMED) return true;
  const contents c(t, e);
  switch (e.combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_RESIZED:  // lb 0 and extent == size were checked above
      return dense(c.types[0]);
    case MPI_COMBINER_VECTOR:  // count, blocklength, stride (in extents of the old type)
      return (c.ints[0] <= 1 || c.ints[2] == c.ints[1]) && dense(c.types[0]);
    case MPI_COMBINER_HVECTOR: {  // count, blocklength; stride in bytes
      MPI_Aint old_lb = 0, old_extent = 0;
      check_mpi(PMPI_Type_get_extent(c.types[0], &old_lb, &old_extent), "MPI_Type_get_extent");
      return (c.ints[0] <= 1 || c.aints[0] == c.ints[1] * old_extent) && dense(c.types[0]);
    }
    default:
      return false;
  }
}

// MPI_Pack and MPI_Unpack take int sizes: larger buffers go in pieces of whole elements.
template <class F>
void in_pieces(std::uint64_t n, const type_shape& s, F&& f) {
  const std::uint64_t per_piece = std::max<std::uint64_t>(1, INT_MAX / std::max<std::uint64_t>(s.size, 1));
  for (std::uint64_t done = 0; done < n;) {
    const std::uint64_t k = std::min(per_piece, n - done);
    f(done, static_cast<int>(k));
    done += k;
  }
}

}  // namespace

type_shape shape_of(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) throw fallback{reason::invalid_argument};
  type_shape s;
  MPI_Count size = 0;
  MPI_Aint lb = 0;
  check_mpi(PMPI_Type_size_x(t, &size), "MPI_Type_size_x");
  check_mpi(PMPI_Type_get_extent(t, &lb, &s.extent), "MPI_Type_get_extent");
  s.size = static_cast<std::uint64_t>(size);
  s.dense = dense(t);
  return s;
}

bool is_derived(MPI_Datatype t) {
  envelope e;
  check_mpi(PMPI_Type_get_envelope(t, &e.ints, &e.aints, &e.types, &e.combiner), "MPI_Type_get_envelope");
  return e.combiner != MPI_COMBINER_NAMED && e.types > 0;
}

bool pack_is_raw() {
  static const bool raw = [] {
    // A vector over ints (every other one) and a double: MPI_Pack must give their bytes.
    const std::array<int, 4> ints{1, -2, 3, -4};
    const double d = 0.1;
    MPI_Datatype every_other = MPI_DATATYPE_NULL;
    if (PMPI_Type_vector(2, 1, 2, MPI_INT, &every_other) != MPI_SUCCESS) return false;
    PMPI_Type_commit(&every_other);
    std::array<std::byte, 2 * sizeof(int) + sizeof(double)> packed{};
    int pos = 0;
    const bool ok =
        PMPI_Pack(ints.data(), 1, every_other, packed.data(), int(packed.size()), &pos, MPI_COMM_SELF) == MPI_SUCCESS &&
        PMPI_Pack(&d, 1, MPI_DOUBLE, packed.data(), int(packed.size()), &pos, MPI_COMM_SELF) == MPI_SUCCESS &&
        pos == int(packed.size());
    PMPI_Type_free(&every_other);
    const int expect[2] = {ints[0], ints[2]};
    return ok && std::memcmp(packed.data(), expect, sizeof expect) == 0 &&
           std::memcmp(packed.data() + sizeof expect, &d, sizeof d) == 0;
  }();
  return raw;
}

void pack(const void* buf, std::uint64_t n, MPI_Datatype t, const type_shape& s, std::byte* packed, MPI_Comm comm) {
  if (s.dense) {
    if (n > 0) std::memcpy(packed, buf, n * s.size);
    return;
  }
  in_pieces(n, s, [&](std::uint64_t done, int k) {
    int pos = 0;
    check_mpi(PMPI_Pack(static_cast<const char*>(buf) + done * s.extent, k, t, packed + done * s.size,
                        static_cast<int>(k * s.size), &pos, comm),
              "MPI_Pack");
  });
}

void unpack(const std::byte* packed, void* buf, std::uint64_t n, MPI_Datatype t, const type_shape& s, MPI_Comm comm) {
  if (s.dense) {
    if (n > 0) std::memmove(buf, packed, n * s.size);
    return;
  }
  in_pieces(n, s, [&](std::uint64_t done, int k) {
    int pos = 0;
    check_mpi(PMPI_Unpack(packed + done * s.size, static_cast<int>(k * s.size), &pos,
                          static_cast<char*>(buf) + done * s.extent, k, t, comm),
              "MPI_Unpack");
  });
}

}  // namespace ranklab::mpi::interpose
