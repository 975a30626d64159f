// Moving data between lists of memory pieces, copying or reducing: the one data path
// shared by every executor, so they agree bit for bit.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include "ranklab/datatype.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

struct piece {
  std::byte* data = nullptr;
  std::size_t bytes = 0;
};

// What a reduction needs: kernel and context, element size.
struct reduction {
  reduce_kernel kernel = nullptr;
  const void* context = nullptr;
  std::size_t elem_size = 1;
  // For a commutative operator both combine orders are the kernel's own order, which saves
  // reduce_in_right its staging copies.
  bool commutative = false;
};

// Base addresses of a rank's buffers: in, out, scratch...
struct buffer_table {
  std::vector<std::byte*> base;
  std::size_t elem_size = 1;
  std::byte* address(const region& r) const { return base[r.buffer] + r.offset * elem_size; }
  piece resolve(const region& r) const { return {address(r), r.count * elem_size}; }
};

// A local step with its regions resolved to memory (a plan's buffers stay put while it is
// prepared for the same call).
struct resolved_step {
  const std::byte* src = nullptr;
  std::byte* dst = nullptr;
  std::size_t bytes = 0;
  combine how = combine::copy;
  bool small_copy = false;  // a copy of at most a cache line between disjoint pieces
};

// dst pieces <- src pieces, total sizes equal (checked by the caller).
void transfer(std::span<const piece> src, std::span<const piece> dst, combine how, const reduction& red);
// One contiguous piece into one piece.
void transfer(const std::byte* src, std::byte* dst, std::size_t bytes, combine how, const reduction& red);
// A local step; `remote(rank)` gives another rank's buffer table for direct reads.
void run_step(const local_step& step, const buffer_table& buffers, const reduction& red,
              const buffer_table* (*remote)(const void* context, int rank) = nullptr, const void* context = nullptr);

}  // namespace ranklab::detail
