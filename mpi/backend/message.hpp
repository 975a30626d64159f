// A message's memory as MPI takes it: a start address, a count and a datatype. A schedule's
// message is a list of regions of the in, out and scratch buffers; MPI reads or writes them
// in place through one derived datatype, so packed messages need no staging copy.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <span>
#include <string_view>

#include "detail/transfer.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::mpi::detail {

class mpi_message {
 public:
  mpi_message() = default;
  mpi_message(const mpi_message&) = delete;
  mpi_message& operator=(const mpi_message&) = delete;
  mpi_message(mpi_message&& o) noexcept { *this = static_cast<mpi_message&&>(o); }
  mpi_message& operator=(mpi_message&& o) noexcept;
  ~mpi_message() { reset(); }

  // One contiguous piece: MPI_BYTE at its address, unless it is too long for an int count.
  static mpi_message contiguous(std::byte* data, std::uint64_t bytes);
  // The regions of a round's message in `buffers`: adjacent regions merge; one piece goes
  // as is, several become one hindexed type over MPI_BYTE at their absolute addresses
  // (PMPI_Get_address), sent from MPI_BOTTOM.
  static mpi_message of_regions(std::span<const region> regions, const ranklab::detail::buffer_table& buffers);

  void* address() const { return address_; }
  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }
  std::uint64_t bytes() const { return bytes_; }
  // The bytes a completed receive into this message got.
  std::uint64_t received_bytes(const MPI_Status& status) const;
  void reset() noexcept;  // frees a derived type

 private:
  static mpi_message of_pieces(std::span<const ranklab::detail::piece> pieces, std::uint64_t bytes);
  void* address_ = nullptr;
  int count_ = 0;
  MPI_Datatype type_ = MPI_BYTE;
  bool derived_ = false;
  std::uint64_t bytes_ = 0;
};

}  // namespace ranklab::mpi::detail
