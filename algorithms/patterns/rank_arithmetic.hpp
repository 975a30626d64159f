// Small helpers shared by schedule builders.
#pragma once
#include <bit>
#include <cstdint>

namespace ranklab::detail {

// ceil(log2 p) for p >= 1
inline int ceil_log2(std::uint64_t p) { return p <= 1 ? 0 : std::bit_width(p - 1); }
// largest power of two <= p, p >= 1
inline std::uint64_t floor_pow2(std::uint64_t p) { return std::bit_floor(p); }
// rank relative to root and back
inline int relative(int rank, int root, int p) { return (rank - root + p) % p; }
inline int absolute(int vrank, int root, int p) { return (vrank + root) % p; }
inline int mod(std::int64_t a, int p) { return static_cast<int>(((a % p) + p) % p); }
// A schedule::fence in units of alpha: p atomic increments of one cache line, then the
// last one's store seen by all (about one message latency); no log p chain of wake-ups.
inline double fence_alphas(int p) { return p <= 1 ? 0.0 : 1.0 + (p - 1) / 4.0; }

}  // namespace ranklab::detail
