// Data-movement collectives run on bytes: every rank's part of an MPI buffer (blocks of
// elements of its datatype at its displacements) becomes one packed run of bytes in rank
// order, the same layout on every rank whatever datatype and displacements each passed
// (MPI lets them differ as long as the type signatures match). A buffer already laid out
// that way (a dense type, blocks back to back) is used in place; any other goes through a
// temporary, packed before the call or unpacked after it.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "types.hpp"

namespace ranklab::mpi::interpose {

struct typed_blocks {
  const void* base = nullptr;
  MPI_Datatype type = MPI_BYTE;
  std::vector<std::uint64_t> counts;  // elements per block
  std::vector<std::uint64_t> displs;  // in extents of type from base
};

// One run of `count` elements at `base` + `first` extents.
typed_blocks one_block(const void* base, std::uint64_t count, MPI_Datatype t, std::uint64_t first = 0);
// p blocks of `count` elements back to back (gather's and scatter's root buffer).
typed_blocks regular_blocks(const void* base, std::uint64_t count, int p, MPI_Datatype t);
// p blocks as a v-collective's counts and displacements give them. Throws fallback for a
// negative count or displacement.
typed_blocks v_blocks(const void* base, const int counts[], const int displs[], int p, MPI_Datatype t);
// Bytes of each block (count * MPI_Type_size).
std::vector<std::uint64_t> block_bytes(const typed_blocks& b);

class staged {
 public:
  // The blocks to be read. `copy`: always into a temporary (the call also writes the
  // caller's memory there, as MPI_IN_PLACE sources do).
  static staged input(const typed_blocks& b, bool copy = false);
  // The blocks to be written; finish() unpacks the temporary, if there is one. The datatype
  // must still be valid then: a nonblocking call holds it (handles.hpp), and packing goes
  // through MPI_COMM_SELF (the bytes are raw: pack_is_raw), not the user's communicator,
  // which the program may free before the call completes. `copy`: always through a
  // temporary (an output that overlaps an input the call reads in place: a
  // reduce_scatter's MPI_IN_PLACE).
  static staged output(const typed_blocks& b, bool copy = false);
  // Blocks both read and written (an allreduce's MPI_IN_PLACE buffer): in place when already
  // packed, else packed into a temporary now and unpacked from it at the end.
  static staged inout(const typed_blocks& b);
  // A temporary of `bytes` bytes whose contents are dropped.
  static staged scratch(std::uint64_t bytes);

  std::byte* data() const { return data_; }
  std::uint64_t bytes() const { return bytes_; }
  void finish();

 private:
  typed_blocks blocks_;
  type_shape shape_;
  std::unique_ptr<std::byte[]> temp_;
  std::byte* data_ = nullptr;
  std::uint64_t bytes_ = 0;
  bool unpack_ = false;
};

// A temporary buffer of `bytes` bytes (uninitialised).
std::unique_ptr<std::byte[]> temporary(std::uint64_t bytes);

}  // namespace ranklab::mpi::interpose
