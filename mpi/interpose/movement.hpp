// What the data-movement collectives share: they run on bytes (staging.hpp), and the
// v-collectives whose counts MPI gives to some ranks only first share them (job.hpp).
#pragma once
#include <cstdint>
#include <vector>

#include "interpose.hpp"
#include "job.hpp"
#include "staging.hpp"

namespace ranklab::mpi::interpose {

inline constexpr datatype bytes_type = datatype_of<std::byte>();

// Falls back (on every rank alike: the root is an argument all ranks pass) for a bad root.
void require_root(const comm_state& st, int root);
// Falls back unless packed and dense buffers can meet in a message (types.hpp, pack_is_raw).
void require_raw_packing();
// This rank's part disagrees with what the others will send or expect: MPI calls that an
// erroneous program; ranklab says which rank and how many bytes, as a usage_error.
void expect_bytes(const comm_state& st, collective c, const char* what, std::uint64_t have, std::uint64_t want);

// MPI_IN_PLACE is the root's option only (usage_error elsewhere).
void require_not_in_place(const comm_state& st, collective c, const void* buf);

// Marks a count the caller got wrong (negative): every rank that sees it falls back
// (require_valid).
inline constexpr std::uint64_t invalid_count = ~std::uint64_t{0};
// block_bytes(blocks()), or p invalid counts if the caller's counts are negative.
template <class F>
std::vector<std::uint64_t> bytes_or_invalid(int p, F&& blocks) {
  try {
    return block_bytes(blocks());
  } catch (const fallback&) {
    return std::vector<std::uint64_t>(static_cast<std::size_t>(p), invalid_count);
  }
}

}  // namespace ranklab::mpi::interpose
