// A rank's handle: its number, the team size, one-ported send-receive rounds and the
// collectives. Collectives build (and cache) the rank's schedule of the chosen algorithm
// and run it on the thread executor.
#pragma once
#include <cstdint>
#include <memory>
#include <ranges>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ranklab/call.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/datatype.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/request.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab {

namespace detail {
struct team_state;
struct comm_state;
}  // namespace detail
struct algorithm;

template <class R>
concept buffer_range = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
                       std::is_trivially_copyable_v<std::ranges::range_value_t<R>>;

class comm {
 public:
  comm(comm&&) noexcept;
  comm& operator=(comm&&) noexcept;
  ~comm();

  int rank() const { return rank_; }
  int size() const { return size_; }

  // ---- one-ported rounds ------------------------------------------------------------------
  // Sends `send` to `dest` and receives from `source` into `recv` in one round; either peer
  // may be no_rank. Returns the number of bytes received. A message larger than `recv`
  // raises size_mismatch_error naming both ranks.
  std::size_t sendrecv_bytes(int dest, std::span<const std::byte> send, int source,
                             std::span<std::byte> recv);

  template <buffer_range S, buffer_range R>
  std::size_t sendrecv(int dest, const S& send, int source, R&& recv) {
    return sendrecv_bytes(dest, std::as_bytes(std::span(send)), source,
                          std::as_writable_bytes(std::span(recv))) /
           sizeof(std::ranges::range_value_t<R>);
  }
  template <buffer_range S>
  void send(int dest, const S& data) {
    sendrecv_bytes(dest, std::as_bytes(std::span(data)), no_rank, {});
  }
  // Returns the number of elements received.
  template <buffer_range R>
  std::size_t recv(int source, R&& data) {
    return sendrecv_bytes(no_rank, {}, source, std::as_writable_bytes(std::span(data))) /
           sizeof(std::ranges::range_value_t<R>);
  }

  // ---- collectives (MPI semantics; counts in elements) ------------------------------------
  // Every collective has a blocking form and a nonblocking i-form returning a request.
#define RANKLAB_COLLECTIVE(NAME, PARAMS, ARGS, TEMPLATE)                                  \
  TEMPLATE void NAME PARAMS { run_prepared(NAME##_call ARGS); }                           \
  TEMPLATE [[nodiscard]] request i##NAME PARAMS { return start_prepared(NAME##_call ARGS); }
#define RANKLAB_T1 template <buffer_range R>
#define RANKLAB_T2 template <buffer_range I, buffer_range O>
  using counts_view = std::span<const std::uint64_t>;

  RANKLAB_COLLECTIVE(barrier, (const algo& a = {}), (a), )
  RANKLAB_COLLECTIVE(bcast, (R&& buf, int root, const algo& a = {}), (buf, root, a), RANKLAB_T1)
  // out is significant at the root only (may be empty elsewhere)
  RANKLAB_COLLECTIVE(reduce, (const I& in, O&& out, const op& o, int root, const algo& a = {}),
                     (in, out, o, root, a), RANKLAB_T2)
  RANKLAB_COLLECTIVE(allreduce, (const I& in, O&& out, const op& o, const algo& a = {}), (in, out, o, a),
                     RANKLAB_T2)
  // in place
  RANKLAB_COLLECTIVE(allreduce, (R&& inout, const op& o, const algo& a = {}), (inout, o, a), RANKLAB_T1)
  RANKLAB_COLLECTIVE(scan, (const I& in, O&& out, const op& o, const algo& a = {}), (in, out, o, a), RANKLAB_T2)
  // Rank 0's out is left unchanged (MPI leaves it undefined).
  RANKLAB_COLLECTIVE(exscan, (const I& in, O&& out, const op& o, const algo& a = {}), (in, out, o, a), RANKLAB_T2)
  RANKLAB_COLLECTIVE(allgather, (const I& in, O&& out, const algo& a = {}), (in, out, a), RANKLAB_T2)
  RANKLAB_COLLECTIVE(reduce_scatter_block, (const I& in, O&& out, const op& o, const algo& a = {}),
                     (in, out, o, a), RANKLAB_T2)
  // in is significant at the root only
  RANKLAB_COLLECTIVE(scatter, (const I& in, O&& out, int root, const algo& a = {}), (in, out, root, a), RANKLAB_T2)
  RANKLAB_COLLECTIVE(gather, (const I& in, O&& out, int root, const algo& a = {}), (in, out, root, a), RANKLAB_T2)
  RANKLAB_COLLECTIVE(alltoall, (const I& in, O&& out, const algo& a = {}), (in, out, a), RANKLAB_T2)
  // v-collectives: every rank passes the full counts (and optional displacements), because
  // schedules are computed locally without messages.
  RANKLAB_COLLECTIVE(allgatherv, (const I& in, O&& out, counts_view counts, counts_view displs = {}, const algo& a = {}),
                     (in, out, counts, displs, a), RANKLAB_T2)
  RANKLAB_COLLECTIVE(reduce_scatter, (const I& in, O&& out, counts_view counts, const op& o, const algo& a = {}),
                     (in, out, counts, o, a), RANKLAB_T2)
  RANKLAB_COLLECTIVE(scatterv, (const I& in, O&& out, counts_view counts, int root, counts_view displs = {},
                                const algo& a = {}),
                     (in, out, counts, root, displs, a), RANKLAB_T2)
  RANKLAB_COLLECTIVE(gatherv, (const I& in, O&& out, counts_view counts, int root, counts_view displs = {},
                               const algo& a = {}),
                     (in, out, counts, root, displs, a), RANKLAB_T2)
  // counts[i*p + j]: elements rank i sends to rank j (row-major p x p, the same on all ranks).
  RANKLAB_COLLECTIVE(alltoallv, (const I& in, O&& out, counts_view counts, const algo& a = {}), (in, out, counts, a),
                     RANKLAB_T2)
#undef RANKLAB_COLLECTIVE
#undef RANKLAB_T1
#undef RANKLAB_T2

  // ---- the general entry points -----------------------------------------------------------
  // Runs one collective call: selects the algorithm, builds (or reuses) this rank's schedule,
  // checks the call against the other ranks' and executes it. `in`/`out` hold the extents
  // buffer_extents() gives for this rank.
  void run_collective(const call& c, const void* in, void* out);
  [[nodiscard]] request start_collective(const call& c, const void* in, void* out);
  // Runs a schedule on the thread executor (for custom or hand-built schedules).
  void execute(const schedule& s, const void* in, void* out, const datatype& type,
               const op& reduction = ops::sum);
  // The algorithm the last collective call used and why (for --explain and logs).
  const algorithm* last_algorithm() const;
  std::string_view last_selection_reason() const;

  detail::comm_state& state() { return *state_; }

 private:
  friend class team;
  comm(detail::team_state* team, int rank);

  struct prepared {
    call c;
    const void* in = nullptr;
    void* out = nullptr;
  };
  void run_prepared(const prepared& p) { run_collective(p.c, p.in, p.out); }
  request start_prepared(const prepared& p) { return start_collective(p.c, p.in, p.out); }

  template <class R>
  static constexpr datatype type_of() {
    return datatype_of<std::remove_cv_t<std::ranges::range_value_t<R>>>();
  }
  template <class R>
  static std::uint64_t size_of(const R& r) { return static_cast<std::uint64_t>(std::ranges::size(r)); }
  template <class R>
  static void* data_of(R&& r) {
    return const_cast<void*>(static_cast<const void*>(std::ranges::data(r)));
  }

  void expect(collective c, const char* which, std::uint64_t have, std::uint64_t want) const;
  prepared make(collective c, int root, std::uint64_t count, const void* in, void* out, datatype t, const op& o,
                const algo& a) const;
  prepared make_v(collective c, int root, counts_view counts, counts_view displs, const void* in,
                  std::uint64_t in_count, void* out, std::uint64_t out_count, datatype t, const op& o,
                  const algo& a) const;

  prepared barrier_call(const algo& a) const {
    return make(collective::barrier, 0, 0, nullptr, nullptr, datatype_of<std::byte>(), ops::sum, a);
  }
  template <class R>
  prepared bcast_call(R&& buf, int root, const algo& a) const {
    return make(collective::bcast, root, size_of(buf), nullptr, data_of(buf), type_of<R>(), ops::sum, a);
  }
  template <class I, class O>
  prepared reduce_call(const I& in, O&& out, const op& o, int root, const algo& a) const {
    if (rank_ == root) expect(collective::reduce, "out", size_of(out), size_of(in));
    return make(collective::reduce, root, size_of(in), data_of(in), data_of(out), type_of<I>(), o, a);
  }
  template <class I, class O>
  prepared allreduce_call(const I& in, O&& out, const op& o, const algo& a) const {
    expect(collective::allreduce, "out", size_of(out), size_of(in));
    return make(collective::allreduce, 0, size_of(in), data_of(in), data_of(out), type_of<I>(), o, a);
  }
  template <class R>
  prepared allreduce_call(R&& inout, const op& o, const algo& a) const {
    return make(collective::allreduce, 0, size_of(inout), data_of(inout), data_of(inout), type_of<R>(), o, a);
  }
  template <class I, class O>
  prepared scan_call(const I& in, O&& out, const op& o, const algo& a) const {
    expect(collective::scan, "out", size_of(out), size_of(in));
    return make(collective::scan, 0, size_of(in), data_of(in), data_of(out), type_of<I>(), o, a);
  }
  template <class I, class O>
  prepared exscan_call(const I& in, O&& out, const op& o, const algo& a) const {
    expect(collective::exscan, "out", size_of(out), size_of(in));
    return make(collective::exscan, 0, size_of(in), data_of(in), data_of(out), type_of<I>(), o, a);
  }
  template <class I, class O>
  prepared allgather_call(const I& in, O&& out, const algo& a) const {
    expect(collective::allgather, "out", size_of(out), size_of(in) * size_);
    return make(collective::allgather, 0, size_of(in), data_of(in), data_of(out), type_of<I>(), ops::sum, a);
  }
  template <class I, class O>
  prepared reduce_scatter_block_call(const I& in, O&& out, const op& o, const algo& a) const {
    expect(collective::reduce_scatter_block, "in", size_of(in), size_of(out) * size_);
    return make(collective::reduce_scatter_block, 0, size_of(out), data_of(in), data_of(out), type_of<I>(), o, a);
  }
  template <class I, class O>
  prepared scatter_call(const I& in, O&& out, int root, const algo& a) const {
    if (rank_ == root) expect(collective::scatter, "in", size_of(in), size_of(out) * size_);
    return make(collective::scatter, root, size_of(out), data_of(in), data_of(out), type_of<O>(), ops::sum, a);
  }
  template <class I, class O>
  prepared gather_call(const I& in, O&& out, int root, const algo& a) const {
    if (rank_ == root) expect(collective::gather, "out", size_of(out), size_of(in) * size_);
    return make(collective::gather, root, size_of(in), data_of(in), data_of(out), type_of<I>(), ops::sum, a);
  }
  template <class I, class O>
  prepared alltoall_call(const I& in, O&& out, const algo& a) const {
    expect(collective::alltoall, "out", size_of(out), size_of(in));
    if (size_of(in) % static_cast<std::uint64_t>(size_) != 0)
      throw usage_error(rank_, "alltoall", "input length is not a multiple of p");
    return make(collective::alltoall, 0, size_of(in) / size_, data_of(in), data_of(out), type_of<I>(), ops::sum, a);
  }
  template <class I, class O>
  prepared allgatherv_call(const I& in, O&& out, counts_view counts, counts_view displs, const algo& a) const {
    return make_v(collective::allgatherv, 0, counts, displs, data_of(in), size_of(in), data_of(out), size_of(out),
                  type_of<I>(), ops::sum, a);
  }
  template <class I, class O>
  prepared reduce_scatter_call(const I& in, O&& out, counts_view counts, const op& o, const algo& a) const {
    return make_v(collective::reduce_scatter, 0, counts, {}, data_of(in), size_of(in), data_of(out), size_of(out),
                  type_of<I>(), o, a);
  }
  template <class I, class O>
  prepared scatterv_call(const I& in, O&& out, counts_view counts, int root, counts_view displs,
                         const algo& a) const {
    return make_v(collective::scatterv, root, counts, displs, data_of(in), size_of(in), data_of(out), size_of(out),
                  type_of<O>(), ops::sum, a);
  }
  template <class I, class O>
  prepared gatherv_call(const I& in, O&& out, counts_view counts, int root, counts_view displs,
                        const algo& a) const {
    return make_v(collective::gatherv, root, counts, displs, data_of(in), size_of(in), data_of(out), size_of(out),
                  type_of<I>(), ops::sum, a);
  }
  template <class I, class O>
  prepared alltoallv_call(const I& in, O&& out, counts_view counts, const algo& a) const {
    return make_v(collective::alltoallv, 0, counts, {}, data_of(in), size_of(in), data_of(out), size_of(out),
                  type_of<I>(), ops::sum, a);
  }

  detail::team_state* team_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  std::shared_ptr<detail::comm_state> state_;
};

}  // namespace ranklab
