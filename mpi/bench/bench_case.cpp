// The buffers, native calls and checks of one benchmark configuration (see bench_case.hpp).
#include "bench_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "bench/workload.hpp"
#include "ranklab/errors.hpp"

namespace ranklab::mpi_bench {

namespace {

constexpr std::uint64_t int_max = std::numeric_limits<int>::max();

// Input values: distinct per rank and position, small enough that the int32 sums of 8 ranks
// never overflow (MPI's signed overflow would make the reference itself undefined).
std::int32_t int_input(int rank, std::uint64_t j) { return static_cast<std::int32_t>((rank * 131 + j * 7) % 1009); }
std::byte byte_input(int rank, std::uint64_t j) { return static_cast<std::byte>((rank * 131 + j * 7 + 3) & 0xff); }

void check_fits_int(std::uint64_t v, collective c, std::uint64_t bytes) {
  if (v > int_max)
    throw usage_error(no_rank, "ranklab_mpi_bench",
                      fmt::format("{} with {} bytes per rank needs counts beyond MPI's int", name(c), bytes));
}

}  // namespace

const std::vector<collective>& supported_collectives() { return tools::bench::mpi_bench_collectives(); }

bench_case::bench_case(collective c, int p, int rank, std::uint64_t bytes)
    : coll_(c), p_(p), rank_(rank), bytes_(tools::bench::reported_bytes(c, bytes)) {
  if (std::find(supported_collectives().begin(), supported_collectives().end(), c) == supported_collectives().end())
    throw usage_error(no_rank, "ranklab_mpi_bench", fmt::format("no native counterpart for {}", name(c)));
  base_ = ranklab_call("auto");
  const coll_args& a = base_.args;
  const std::uint64_t n = has_vector_counts(c) ? a.counts[0] : a.count;
  // The largest count or displacement MPI sees is p blocks (a gathered layout, or the full
  // reduce_scatter vector).
  check_fits_int(n * static_cast<std::uint64_t>(p), c, bytes_);
  count_ = static_cast<int>(n);
  if (has_vector_counts(c)) {
    counts_.assign(static_cast<std::size_t>(p), count_);
    for (int j = 0; j < p; ++j) displs_.push_back(j * count_);
  }
  const buffer_extent e = buffer_extents(a, rank);
  in_bytes_ = e.in * base_.type.size;
  out_bytes_ = e.out * base_.type.size;
  // Never empty, so that no buffer pointer is null (a non-root reduce has no output).
  in_.resize(std::max<std::size_t>(in_bytes_, 64));
  out_.resize(std::max<std::size_t>(out_bytes_, 64));
  fill(std::byte{0});
}

call bench_case::ranklab_call(std::string_view algo_name) const {
  return tools::bench::make_bench_call(coll_, p_, bytes_, algo_name);
}

void bench_case::fill(std::byte output_pattern) {
  std::fill(out_.begin(), out_.end(), output_pattern);
  if (coll_ == collective::bcast) {
    if (rank_ == 0)
      for (std::uint64_t j = 0; j < out_bytes_; ++j) out_[j] = byte_input(0, j);
    return;
  }
  if (base_.type.size == sizeof(std::int32_t)) {
    for (std::uint64_t j = 0; j < in_bytes_ / sizeof(std::int32_t); ++j) {
      const std::int32_t v = int_input(rank_, j);
      std::memcpy(in_.data() + j * sizeof v, &v, sizeof v);
    }
  } else {
    for (std::uint64_t j = 0; j < in_bytes_; ++j) in_[j] = byte_input(rank_, j);
  }
}

void bench_case::run_native(long iters) {
  const void* in = in_.data();
  void* out = out_.data();
  const MPI_Comm w = MPI_COMM_WORLD;
  const int n = count_;
  switch (coll_) {
    case collective::bcast:
      for (long i = 0; i < iters; ++i) MPI_Bcast(out, n, MPI_BYTE, 0, w);
      break;
    case collective::reduce:
      for (long i = 0; i < iters; ++i) MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, 0, w);
      break;
    case collective::allreduce:
      for (long i = 0; i < iters; ++i) MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, w);
      break;
    case collective::allgather:
      for (long i = 0; i < iters; ++i) MPI_Allgather(in, n, MPI_BYTE, out, n, MPI_BYTE, w);
      break;
    case collective::allgatherv:
      for (long i = 0; i < iters; ++i)
        MPI_Allgatherv(in, n, MPI_BYTE, out, counts_.data(), displs_.data(), MPI_BYTE, w);
      break;
    case collective::reduce_scatter:
      for (long i = 0; i < iters; ++i) MPI_Reduce_scatter(in, out, counts_.data(), MPI_INT, MPI_SUM, w);
      break;
    case collective::reduce_scatter_block:
      for (long i = 0; i < iters; ++i) MPI_Reduce_scatter_block(in, out, n, MPI_INT, MPI_SUM, w);
      break;
    default:
      break;  // the constructor admits only the collectives above
  }
}

void bench_case::run_ranklab(mpi::comm& c, const call& cl, long iters) {
  for (long i = 0; i < iters; ++i) c.run_collective(cl, in_.data(), out_.data());
}

void bench_case::record_native_result() {
  fill(std::byte{0x00});
  run_native(1);
  native_out_.assign(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(out_bytes_));
}

std::string bench_case::compare_ranklab_result(mpi::comm& c, const call& cl) {
  fill(std::byte{0xA5});
  run_ranklab(c, cl, 1);
  for (std::size_t j = 0; j < out_bytes_; ++j)
    if (out_[j] != native_out_[j])
      return fmt::format("rank {}: byte {} of {} is {:#04x}, native MPI gave {:#04x}", rank_, j, out_bytes_,
                         std::to_integer<unsigned>(out_[j]), std::to_integer<unsigned>(native_out_[j]));
  return {};
}

}  // namespace ranklab::mpi_bench
