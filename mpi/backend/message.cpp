// Messages as MPI datatypes (see message.hpp).
#include "message.hpp"

#include <algorithm>
#include <vector>

#include "mpi_check.hpp"

namespace ranklab::mpi::detail {

namespace {
// MPI counts are ints: longer pieces are cut into blocks of this many bytes.
constexpr std::uint64_t max_block = std::uint64_t{1} << 30;
}  // namespace

mpi_message& mpi_message::operator=(mpi_message&& o) noexcept {
  if (this != &o) {
    reset();
    address_ = o.address_;
    count_ = o.count_;
    type_ = o.type_;
    derived_ = o.derived_;
    bytes_ = o.bytes_;
    o.derived_ = false;
    o.type_ = MPI_BYTE;
  }
  return *this;
}

void mpi_message::reset() noexcept {
  if (derived_) PMPI_Type_free(&type_);
  derived_ = false;
  type_ = MPI_BYTE;
  address_ = nullptr;
  count_ = 0;
  bytes_ = 0;
}

mpi_message mpi_message::contiguous(std::byte* data, std::uint64_t bytes) {
  const ranklab::detail::piece p{data, static_cast<std::size_t>(bytes)};
  return of_pieces(std::span(&p, bytes ? 1 : 0), bytes);
}

mpi_message mpi_message::of_regions(std::span<const region> regions, const ranklab::detail::buffer_table& buffers) {
  // Reused: a round's message is built on every call, and most are one or two regions.
  thread_local std::vector<ranklab::detail::piece> pieces;
  pieces.clear();
  std::uint64_t bytes = 0;
  for (const region& r : regions) {
    if (r.count == 0) continue;
    const ranklab::detail::piece p = buffers.resolve(r);
    bytes += p.bytes;
    if (!pieces.empty() && pieces.back().data + pieces.back().bytes == p.data)
      pieces.back().bytes += p.bytes;
    else
      pieces.push_back(p);
  }
  return of_pieces(pieces, bytes);
}

mpi_message mpi_message::of_pieces(std::span<const ranklab::detail::piece> pieces, std::uint64_t bytes) {
  mpi_message m;
  m.bytes_ = bytes;
  if (pieces.empty()) return m;  // an empty message is still exchanged: round pairing never depends on counts
  if (pieces.size() == 1 && pieces[0].bytes <= max_block) {
    m.address_ = pieces[0].data;
    m.count_ = static_cast<int>(pieces[0].bytes);
    return m;
  }
  thread_local std::vector<int> lengths;
  thread_local std::vector<MPI_Aint> displacements;
  lengths.clear();
  displacements.clear();
  for (const ranklab::detail::piece& p : pieces)
    for (std::uint64_t done = 0; done < p.bytes; done += max_block) {
      MPI_Aint address = 0;
      check(PMPI_Get_address(p.data + done, &address), no_rank, "MPI executor", "PMPI_Get_address");
      displacements.push_back(address);
      lengths.push_back(static_cast<int>(std::min(max_block, p.bytes - done)));
    }
  check(PMPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(), MPI_BYTE,
                                  &m.type_),
        no_rank, "MPI executor", "PMPI_Type_create_hindexed");
  m.derived_ = true;
  check(PMPI_Type_commit(&m.type_), no_rank, "MPI executor", "PMPI_Type_commit");
  m.address_ = MPI_BOTTOM;
  m.count_ = 1;
  return m;
}

std::uint64_t mpi_message::received_bytes(const MPI_Status& status) const {
  MPI_Count n = 0;
  // Elements of a type built over MPI_BYTE are bytes.
  PMPI_Get_elements_x(&status, type_, &n);
  return n == MPI_UNDEFINED ? 0 : static_cast<std::uint64_t>(n);
}

}  // namespace ranklab::mpi::detail
