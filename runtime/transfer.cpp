// The data path of every executor (detail/transfer.hpp): copies and reductions between
// pieces of memory, so that all executors produce the same bits.
#include "detail/transfer.hpp"

#include <algorithm>
#include <cstring>

namespace ranklab::detail {

void reduce_in_right_staged(const std::byte* src, std::byte* dst, std::size_t bytes, const reduction& red) {
  thread_local std::vector<std::byte> stage;
  constexpr std::size_t piece_bytes = 64 * 1024;
  const std::size_t step = std::max<std::size_t>(red.elem_size, piece_bytes / red.elem_size * red.elem_size);
  if (stage.size() < step) stage.resize(step);
  for (std::size_t done = 0; done < bytes; done += step) {
    const std::size_t len = std::min(step, bytes - done);
    std::memcpy(stage.data(), src + done, len);
    red.kernel(dst + done, stage.data(), red.elements(len), red.context);
    std::memcpy(dst + done, stage.data(), len);
  }
}

void transfer(std::span<const piece> src, std::span<const piece> dst, combine how, const reduction& red) {
  std::size_t si = 0, so = 0, di = 0, dof = 0;
  while (si < src.size() && di < dst.size()) {
    const std::size_t len = std::min(src[si].bytes - so, dst[di].bytes - dof);
    transfer(src[si].data + so, dst[di].data + dof, len, how, red);
    so += len;
    dof += len;
    if (so == src[si].bytes) ++si, so = 0;
    if (dof == dst[di].bytes) ++di, dof = 0;
  }
}

void run_step(const local_step& step, const buffer_table& buffers, const reduction& red,
              const buffer_table* (*remote)(const void* context, int rank), const void* context) {
  const buffer_table& from = step.src_rank == no_rank ? buffers : *remote(context, step.src_rank);
  const buffer_table& to = step.dst_rank == no_rank ? buffers : *remote(context, step.dst_rank);
  transfer(from.address(step.src), to.address(step.dst), step.src.count * buffers.elem_size, step.how, red);
}

}  // namespace ranklab::detail
