// Staging MPI buffers as packed bytes (see staging.hpp).
#include "staging.hpp"

#include <cstring>
#include <numeric>

#include "interpose.hpp"

namespace ranklab::mpi::interpose {

namespace {

const std::byte* at(const typed_blocks& b, const type_shape& s, std::size_t j) {
  return static_cast<const std::byte*>(b.base) + static_cast<MPI_Aint>(b.displs[j]) * s.extent;
}

// Whether the blocks already are the packed layout: dense elements, back to back from the
// first block on.
bool packed_already(const typed_blocks& b, const type_shape& s) {
  if (!s.dense || b.counts.empty()) return false;
  std::uint64_t next = b.displs[0];
  for (std::size_t j = 0; j < b.counts.size(); ++j) {
    if (b.counts[j] > 0 && b.displs[j] != next) return false;
    next += b.counts[j];
  }
  return true;
}

std::uint64_t total_bytes(const typed_blocks& b, const type_shape& s) {
  return std::accumulate(b.counts.begin(), b.counts.end(), std::uint64_t{0}) * s.size;
}

}  // namespace

typed_blocks one_block(const void* base, std::uint64_t count, MPI_Datatype t, std::uint64_t first) {
  return typed_blocks{base, t, {count}, {first}};
}

typed_blocks regular_blocks(const void* base, std::uint64_t count, int p, MPI_Datatype t) {
  typed_blocks b{base, t, {}, {}};
  for (int j = 0; j < p; ++j) {
    b.counts.push_back(count);
    b.displs.push_back(count * static_cast<std::uint64_t>(j));
  }
  return b;
}

typed_blocks v_blocks(const void* base, const int counts[], const int displs[], int p, MPI_Datatype t) {
  typed_blocks b{base, t, {}, {}};
  for (int j = 0; j < p; ++j) {
    b.counts.push_back(nonnegative(counts[j]));
    b.displs.push_back(nonnegative(displs[j]));
  }
  return b;
}

std::vector<std::uint64_t> block_bytes(const typed_blocks& b) {
  const type_shape s = shape_of(b.type);
  std::vector<std::uint64_t> out;
  for (std::uint64_t c : b.counts) out.push_back(c * s.size);
  return out;
}

std::unique_ptr<std::byte[]> temporary(std::uint64_t bytes) {
  return std::make_unique_for_overwrite<std::byte[]>(std::max<std::uint64_t>(bytes, 1));
}

staged staged::input(const typed_blocks& b, bool copy) {
  staged s;
  s.blocks_ = b;
  s.shape_ = shape_of(b.type);
  s.bytes_ = total_bytes(b, s.shape_);
  if (!copy && packed_already(b, s.shape_)) {
    s.data_ = const_cast<std::byte*>(at(b, s.shape_, 0));
    return s;
  }
  s.temp_ = temporary(s.bytes_);
  s.data_ = s.temp_.get();
  std::byte* to = s.data_;
  for (std::size_t j = 0; j < b.counts.size(); ++j) {
    pack(at(b, s.shape_, j), b.counts[j], b.type, s.shape_, to, MPI_COMM_SELF);
    to += b.counts[j] * s.shape_.size;
  }
  return s;
}

staged staged::output(const typed_blocks& b, bool copy) {
  staged s;
  s.blocks_ = b;
  s.shape_ = shape_of(b.type);
  s.bytes_ = total_bytes(b, s.shape_);
  if (!copy && packed_already(b, s.shape_)) {
    s.data_ = const_cast<std::byte*>(at(b, s.shape_, 0));
    return s;
  }
  s.temp_ = temporary(s.bytes_);
  s.data_ = s.temp_.get();
  s.unpack_ = true;
  return s;
}

staged staged::inout(const typed_blocks& b) {
  staged s = input(b);
  s.unpack_ = s.temp_ != nullptr;
  return s;
}

staged staged::scratch(std::uint64_t bytes) {
  staged s;
  s.bytes_ = bytes;
  s.temp_ = temporary(bytes);
  s.data_ = s.temp_.get();
  return s;
}

void staged::finish() {
  if (!unpack_) return;
  const std::byte* from = data_;
  for (std::size_t j = 0; j < blocks_.counts.size(); ++j) {
    unpack(from, const_cast<std::byte*>(at(blocks_, shape_, j)), blocks_.counts[j], blocks_.type, shape_,
           MPI_COMM_SELF);
    from += blocks_.counts[j] * shape_.size;
  }
  unpack_ = false;
}

}  // namespace ranklab::mpi::interpose
