// Scratch memory on cache-line boundaries. It comes from the aligned operator new[], so it
// must go back through the aligned operator delete[]: a plain unique_ptr<std::byte[]> would
// release it with the unaligned one (undefined behaviour, which AddressSanitizer reports as
// new-delete-type-mismatch).
#pragma once
#include <cstddef>
#include <memory>
#include <new>

namespace ranklab::detail {

inline constexpr std::align_val_t cache_line_alignment{64};

struct aligned_delete {
  void operator()(std::byte* p) const noexcept { ::operator delete[](p, cache_line_alignment); }
};
using aligned_bytes = std::unique_ptr<std::byte[], aligned_delete>;

inline aligned_bytes make_aligned_bytes(std::size_t bytes) {
  return aligned_bytes(static_cast<std::byte*>(::operator new[](bytes, cache_line_alignment)));
}

}  // namespace ranklab::detail
