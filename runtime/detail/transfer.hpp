// Moving data between lists of memory pieces, copying or reducing: the one data path
// shared by every executor, so they agree bit for bit.
#pragma once
#include <bit>
#include <cstddef>
#include <cstring>
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

  // Elements in `bytes`: a shift for the sizes of every builtin type, where a division
  // would stand on the path of each small reduction. (Not std::has_single_bit: without
  // -mpopcnt that is a call into libgcc.)
  std::size_t elements(std::size_t bytes) const {
    return (elem_size & (elem_size - 1)) == 0 ? bytes >> std::countr_zero(elem_size) : bytes / elem_size;
  }
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
// dst = dst (+) src for a non-commutative operator: the kernel's order is the other one, so
// src goes through a staged copy (out of line: the one case that needs a frame).
void reduce_in_right_staged(const std::byte* src, std::byte* dst, std::size_t bytes, const reduction& red);

// One contiguous piece into one piece. Inline, without the staging case's frame and
// without a division: a small call's copies and reductions are a few instructions and a
// call into memmove or the kernel (8 B allreduce at p = 2: 961 -> 868 instructions and
// 120 -> 89 stores per call; its time did not measurably move).
inline void transfer(const std::byte* src, std::byte* dst, std::size_t bytes, combine how, const reduction& red) {
  if (bytes == 0) return;
  if (how == combine::copy) {
    if (src != dst) std::memmove(dst, src, bytes);
  } else if (how == combine::reduce_in_left || red.commutative) {  // dst = src (+) dst: the kernel's own order
    red.kernel(src, dst, red.elements(bytes), red.context);
  } else {
    reduce_in_right_staged(src, dst, bytes, red);
  }
}
// A local step; `remote(rank)` gives another rank's buffer table for direct reads.
void run_step(const local_step& step, const buffer_table& buffers, const reduction& red,
              const buffer_table* (*remote)(const void* context, int rank) = nullptr, const void* context = nullptr);

}  // namespace ranklab::detail
