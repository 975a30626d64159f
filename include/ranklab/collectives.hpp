// The typed collective surface, written once for every backend: the MPI-style collectives
// on ranges, each in a blocking form, a nonblocking i-form and a persistent *_init form.
// Each checks the caller's buffers, builds the `call` (make_call/make_vcall) and hands it
// to the backend, which
// derives from collectives<Backend, Request> and provides
//   int rank() const; int size() const;
//   void run_collective(const call&, const void* in, void* out);
//   Request start_collective(const call&, const void* in, void* out);
// and, for the persistent *_init forms (instantiated only when used),
//   Persistent init_collective(const call&, const void* in, void* out);
// returning an object with start(), wait(), test(), done(); optionally
//   const detail::last_call& last_call() const;  void repeat();  (private is fine, with
//   collectives<Backend, Request> a friend: repeat() is only for a call that matched)
//   bool repeat_collective(const detail::vcall_request&);
// for a repeat of the backend's last blocking call (the same arguments and buffers), so
// that nothing is built or checked again: the typed surface compares a call_request with
// last_call() and calls repeat() when they match; repeat_collective runs a v-collective's
// call and returns true when it repeats the last one.
// Counts are in elements, with MPI semantics.
#pragma once
#include <cstdint>
#include <cstring>
#include <ranges>
#include <span>
#include <string_view>
#include <type_traits>

#include "ranklab/call.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/datatype.hpp"
#include "ranklab/errors.hpp"

namespace ranklab {

template <class R>
concept buffer_range = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    std::is_trivially_copyable_v<std::ranges::range_value_t<R>>;

namespace detail {

// A call checked at one rank, with the buffers it runs on.
struct prepared_call {
  call c;
  const void* in = nullptr;
  void* out = nullptr;
};

// A call with a single count as the typed surface receives it, before it becomes a
// `call`: what a backend compares with the call it last prepared, so that a repeated call
// costs neither building a call nor checking it again. Points to the caller's operator and
// algorithm, which outlive the call.
struct call_request {
  collective coll = collective::barrier;
  int root = 0;
  std::uint64_t count = 0;
  const void* in = nullptr;
  void* out = nullptr;
  datatype type;
  const op* reduction = nullptr;
  const algo* choice = nullptr;
};

// Two algorithm names ("auto", "ring", "recursive_doubling") compared a word at a time:
// 8-byte words from the start and one ending at the end, overlapping the one before, or
// two overlapping 4-byte words; a byte loop cost some thirty instructions for "auto" and a
// hundred for an 18-character name, on the way of every repeated call (see last_call).
[[gnu::always_inline]] inline bool same_text(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  auto same_word = [&]<class Word>(Word, std::size_t at) {
    Word x, y;
    std::memcpy(&x, a.data() + at, sizeof(Word));
    std::memcpy(&y, b.data() + at, sizeof(Word));
    return x == y;
  };
  if (n >= 8) {
    for (std::size_t at = 0; at + 8 < n; at += 8)
      if (!same_word(std::uint64_t{}, at)) return false;
    return same_word(std::uint64_t{}, n - 8);
  }
  if (n >= 4) return same_word(std::uint32_t{}, 0) && same_word(std::uint32_t{}, n - 4);
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// The backend's last prepared blocking call, flattened: everything its checks and its
// preparation derive from (collective, counts, root, type, operator, algorithm) and the
// buffers. The operator's context counts too: a schedule does not depend on it, but the
// prepared call reduces with it (two make_op operators from lambdas of one type share the
// function and differ only there).
//
// The typed surface compares a call with it in the caller's own code, before it builds
// anything, and calls the backend only to run the repeat. A rank that streams small calls
// (a non-root's gathers, a root's bcasts) waits on its stores: its last message's line is
// still with the receiver, and stores queued behind that one fill the store queue. A
// call_request built in memory and passed by reference cost some ten stores a call.
struct last_call {
  const void* in = nullptr;
  const void* out = nullptr;
  std::uint64_t count = 0;
  collective coll = collective::barrier;
  int root = 0;
  datatype type;
  op_kind kind = op_kind::sum;
  bool commutative = false;
  // A call_request may repeat it: a call is prepared, with a single count, on buffers the
  // typed surface accepts (the general entry points leave overlap to the caller).
  bool typed = false;
  user_function function = nullptr;
  const void* context = nullptr;
  algo_params params;
  std::string_view algorithm;  // as requested

  // Inline where it is used, for its arguments to stay in registers.
  [[gnu::always_inline]] bool same_call(collective c, int r, std::uint64_t n, const void* i, const void* o,
                                        const datatype& t, const op& red, const algo& a) const {
    return in == i && out == o && count == n && coll == c && root == r && type == t && kind == red.kind &&
           commutative == red.commutative && function == red.function && context == red.context && params == a.params &&
           same_text(algorithm, a.name);
  }
  [[gnu::always_inline]] bool repeated_by(const call_request& r) const {
    return typed && same_call(r.coll, r.root, r.count, r.in, r.out, r.type, *r.reduction, *r.choice);
  }
};

// A v-collective's call as the typed surface receives it: call_request's parts (count 0),
// the caller's counts and displacements, and the lengths of its buffers, which the checks
// hold against this rank's part of the layout. Building the `call` copies the counts into
// vectors and checks them (validate), which a repeated small call would pay on every call.
struct vcall_request {
  call_request call;
  std::span<const std::uint64_t> counts;
  std::span<const std::uint64_t> displs;
  std::uint64_t in_count = 0;
  std::uint64_t out_count = 0;
};

// Throws usage_error unless the `which` buffer of collective c holds `want` elements.
void expect_elements(int rank, collective c, const char* which, std::uint64_t have, std::uint64_t want);

// make_call, checked at `rank` of `p`: the root is a rank, `in` and `out` do not overlap
// (except in place, where allowed).
prepared_call make_checked_call(int rank, int p, collective c, int root, std::uint64_t count, const void* in, void* out,
                                const datatype& t, const op& o, const algo& a);

// make_vcall, checked at `rank` of `p`: the root, the counts and displacements, the buffers
// against this rank's part of the layout (`in_count`, `out_count` elements).
prepared_call make_checked_vcall(int rank, int p, collective c, int root, std::span<const std::uint64_t> counts,
                                 std::span<const std::uint64_t> displs, const void* in, std::uint64_t in_count,
                                 void* out, std::uint64_t out_count, const datatype& t, const op& o, const algo& a);

}  // namespace detail

template <class Backend, class Request>
class collectives {
 public:
  using counts_view = std::span<const std::uint64_t>;

  // Waits until every rank has entered the barrier.
  void barrier(const algo& a = {}) { run(barrier_call(a)); }
  // Starts a barrier.
  [[nodiscard]] Request ibarrier(const algo& a = {}) { return start(barrier_call(a)); }
  // A persistent barrier (MPI-4 *_init): checked and prepared once, run by every start().
  [[nodiscard]] auto barrier_init(const algo& a = {}) { return init(barrier_call(a)); }

  // Copies the root's `buf` into every rank's `buf`.
  template <buffer_range R>
  void bcast(R&& buf, int root, const algo& a = {}) {
    run(bcast_call(buf, root, a));
  }
  // Starts a bcast.
  template <buffer_range R>
  [[nodiscard]] Request ibcast(R&& buf, int root, const algo& a = {}) {
    return start(bcast_call(buf, root, a));
  }
  // A persistent bcast (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range R>
  [[nodiscard]] auto bcast_init(R&& buf, int root, const algo& a = {}) {
    return init(bcast_call(buf, root, a));
  }

  // Combines every rank's `in` with `o` into the root's `out` (may be empty at the other ranks).
  template <buffer_range I, buffer_range O>
  void reduce(const I& in, O&& out, const op& o, int root, const algo& a = {}) {
    run(reduce_call(in, out, o, root, a));
  }
  // Starts a reduce.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request ireduce(const I& in, O&& out, const op& o, int root, const algo& a = {}) {
    return start(reduce_call(in, out, o, root, a));
  }
  // A persistent reduce (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto reduce_init(const I& in, O&& out, const op& o, int root, const algo& a = {}) {
    return init(reduce_call(in, out, o, root, a));
  }

  // Combines every rank's `in` with `o` into every rank's `out`.
  template <buffer_range I, buffer_range O>
  void allreduce(const I& in, O&& out, const op& o, const algo& a = {}) {
    run(allreduce_call(in, out, o, a));
  }
  // Starts an allreduce.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request iallreduce(const I& in, O&& out, const op& o, const algo& a = {}) {
    return start(allreduce_call(in, out, o, a));
  }
  // A persistent allreduce (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto allreduce_init(const I& in, O&& out, const op& o, const algo& a = {}) {
    return init(allreduce_call(in, out, o, a));
  }

  // allreduce in place: `inout` is both the rank's input and the result.
  template <buffer_range R>
  void allreduce(R&& inout, const op& o, const algo& a = {}) {
    run(allreduce_call(inout, o, a));
  }
  // Starts an allreduce in place.
  template <buffer_range R>
  [[nodiscard]] Request iallreduce(R&& inout, const op& o, const algo& a = {}) {
    return start(allreduce_call(inout, o, a));
  }
  // A persistent allreduce in place (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range R>
  [[nodiscard]] auto allreduce_init(R&& inout, const op& o, const algo& a = {}) {
    return init(allreduce_call(inout, o, a));
  }

  // Inclusive prefix reduction: rank r's `out` combines the `in` of ranks 0..r.
  template <buffer_range I, buffer_range O>
  void scan(const I& in, O&& out, const op& o, const algo& a = {}) {
    run(scan_call(in, out, o, a));
  }
  // Starts a scan.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request iscan(const I& in, O&& out, const op& o, const algo& a = {}) {
    return start(scan_call(in, out, o, a));
  }
  // A persistent scan (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto scan_init(const I& in, O&& out, const op& o, const algo& a = {}) {
    return init(scan_call(in, out, o, a));
  }

  // Exclusive prefix reduction over ranks 0..r-1; rank 0's `out` is left unchanged (MPI: undefined).
  template <buffer_range I, buffer_range O>
  void exscan(const I& in, O&& out, const op& o, const algo& a = {}) {
    run(exscan_call(in, out, o, a));
  }
  // Starts an exscan.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request iexscan(const I& in, O&& out, const op& o, const algo& a = {}) {
    return start(exscan_call(in, out, o, a));
  }
  // A persistent exscan (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto exscan_init(const I& in, O&& out, const op& o, const algo& a = {}) {
    return init(exscan_call(in, out, o, a));
  }

  // Every rank's `out` receives all ranks' `in`, in rank order.
  template <buffer_range I, buffer_range O>
  void allgather(const I& in, O&& out, const algo& a = {}) {
    run(allgather_call(in, out, a));
  }
  // Starts an allgather.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request iallgather(const I& in, O&& out, const algo& a = {}) {
    return start(allgather_call(in, out, a));
  }
  // A persistent allgather (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto allgather_init(const I& in, O&& out, const algo& a = {}) {
    return init(allgather_call(in, out, a));
  }

  // Combines every rank's `in` with `o`; rank r receives block r of the result in `out`.
  template <buffer_range I, buffer_range O>
  void reduce_scatter_block(const I& in, O&& out, const op& o, const algo& a = {}) {
    run(reduce_scatter_block_call(in, out, o, a));
  }
  // Starts a reduce_scatter_block.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request ireduce_scatter_block(const I& in, O&& out, const op& o, const algo& a = {}) {
    return start(reduce_scatter_block_call(in, out, o, a));
  }
  // A persistent reduce_scatter_block (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto reduce_scatter_block_init(const I& in, O&& out, const op& o, const algo& a = {}) {
    return init(reduce_scatter_block_call(in, out, o, a));
  }

  // Rank r receives block r of the root's `in` (significant at the root only).
  template <buffer_range I, buffer_range O>
  void scatter(const I& in, O&& out, int root, const algo& a = {}) {
    run(scatter_call(in, out, root, a));
  }
  // Starts a scatter.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request iscatter(const I& in, O&& out, int root, const algo& a = {}) {
    return start(scatter_call(in, out, root, a));
  }
  // A persistent scatter (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto scatter_init(const I& in, O&& out, int root, const algo& a = {}) {
    return init(scatter_call(in, out, root, a));
  }

  // The root's `out` receives all ranks' `in`, in rank order.
  template <buffer_range I, buffer_range O>
  void gather(const I& in, O&& out, int root, const algo& a = {}) {
    run(gather_call(in, out, root, a));
  }
  // Starts a gather.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request igather(const I& in, O&& out, int root, const algo& a = {}) {
    return start(gather_call(in, out, root, a));
  }
  // A persistent gather (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto gather_init(const I& in, O&& out, int root, const algo& a = {}) {
    return init(gather_call(in, out, root, a));
  }

  // Block j of rank i's `in` goes to block i of rank j's `out`.
  template <buffer_range I, buffer_range O>
  void alltoall(const I& in, O&& out, const algo& a = {}) {
    run(alltoall_call(in, out, a));
  }
  // Starts an alltoall.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request ialltoall(const I& in, O&& out, const algo& a = {}) {
    return start(alltoall_call(in, out, a));
  }
  // A persistent alltoall (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto alltoall_init(const I& in, O&& out, const algo& a = {}) {
    return init(alltoall_call(in, out, a));
  }

  // The v-collectives: every rank passes the full counts (and optional displacements),
  // because schedules are computed locally without messages.

  // allgather with counts[r] elements from rank r, at displs[r] (packed if empty).
  template <buffer_range I, buffer_range O>
  void allgatherv(const I& in, O&& out, counts_view counts, counts_view displs = {}, const algo& a = {}) {
    run(allgatherv_call(in, out, counts, displs, a));
  }
  // Starts an allgatherv.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request iallgatherv(const I& in, O&& out, counts_view counts, counts_view displs = {},
                                    const algo& a = {}) {
    return start(allgatherv_call(in, out, counts, displs, a));
  }
  // A persistent allgatherv (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto allgatherv_init(const I& in, O&& out, counts_view counts, counts_view displs = {},
                                     const algo& a = {}) {
    return init(allgatherv_call(in, out, counts, displs, a));
  }

  // Combines every rank's `in` with `o`; rank r receives the counts[r] elements of its block.
  template <buffer_range I, buffer_range O>
  void reduce_scatter(const I& in, O&& out, counts_view counts, const op& o, const algo& a = {}) {
    run(reduce_scatter_call(in, out, counts, o, a));
  }
  // Starts a reduce_scatter.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request ireduce_scatter(const I& in, O&& out, counts_view counts, const op& o, const algo& a = {}) {
    return start(reduce_scatter_call(in, out, counts, o, a));
  }
  // A persistent reduce_scatter (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto reduce_scatter_init(const I& in, O&& out, counts_view counts, const op& o, const algo& a = {}) {
    return init(reduce_scatter_call(in, out, counts, o, a));
  }

  // scatter with counts[r] elements for rank r, at displs[r] of the root's `in`.
  template <buffer_range I, buffer_range O>
  void scatterv(const I& in, O&& out, counts_view counts, int root, counts_view displs = {}, const algo& a = {}) {
    run(scatterv_call(in, out, counts, root, displs, a));
  }
  // Starts a scatterv.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request iscatterv(const I& in, O&& out, counts_view counts, int root, counts_view displs = {},
                                  const algo& a = {}) {
    return start(scatterv_call(in, out, counts, root, displs, a));
  }
  // A persistent scatterv (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto scatterv_init(const I& in, O&& out, counts_view counts, int root, counts_view displs = {},
                                   const algo& a = {}) {
    return init(scatterv_call(in, out, counts, root, displs, a));
  }

  // gather with counts[r] elements from rank r, at displs[r] of the root's `out`.
  template <buffer_range I, buffer_range O>
  void gatherv(const I& in, O&& out, counts_view counts, int root, counts_view displs = {}, const algo& a = {}) {
    run(gatherv_call(in, out, counts, root, displs, a));
  }
  // Starts a gatherv.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request igatherv(const I& in, O&& out, counts_view counts, int root, counts_view displs = {},
                                 const algo& a = {}) {
    return start(gatherv_call(in, out, counts, root, displs, a));
  }
  // A persistent gatherv (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto gatherv_init(const I& in, O&& out, counts_view counts, int root, counts_view displs = {},
                                  const algo& a = {}) {
    return init(gatherv_call(in, out, counts, root, displs, a));
  }

  // alltoall with counts[i*p + j] elements from rank i to rank j (row-major p x p, alike on all ranks).
  template <buffer_range I, buffer_range O>
  void alltoallv(const I& in, O&& out, counts_view counts, const algo& a = {}) {
    run(alltoallv_call(in, out, counts, a));
  }
  // Starts an alltoallv.
  template <buffer_range I, buffer_range O>
  [[nodiscard]] Request ialltoallv(const I& in, O&& out, counts_view counts, const algo& a = {}) {
    return start(alltoallv_call(in, out, counts, a));
  }
  // A persistent alltoallv (MPI-4 *_init): checked and prepared once, run by every start().
  template <buffer_range I, buffer_range O>
  [[nodiscard]] auto alltoallv_init(const I& in, O&& out, counts_view counts, const algo& a = {}) {
    return init(alltoallv_call(in, out, counts, a));
  }

 private:
  using prepared = detail::prepared_call;

  Backend& self() { return static_cast<Backend&>(*this); }
  const Backend& self() const { return static_cast<const Backend&>(*this); }

  using request_of_call = detail::call_request;

  void run(const prepared& p) { self().run_collective(p.c, p.in, p.out); }
  Request start(const prepared& p) { return self().start_collective(p.c, p.in, p.out); }
  auto init(const prepared& p) { return self().init_collective(p.c, p.in, p.out); }
  void run(const request_of_call& r) {
    if constexpr (requires(Backend & b) {
                    b.last_call();
                    b.repeat();
                  })
      if (self().last_call().repeated_by(r)) return self().repeat();
    run(checked(r));
  }
  Request start(const request_of_call& r) { return start(checked(r)); }
  auto init(const request_of_call& r) { return init(checked(r)); }
  using vrequest_of_call = detail::vcall_request;
  void run(const vrequest_of_call& r) {
    if constexpr (requires(Backend & b) { b.repeat_collective(r); })
      if (self().repeat_collective(r)) return;
    run(checked(r));
  }
  Request start(const vrequest_of_call& r) { return start(checked(r)); }
  auto init(const vrequest_of_call& r) { return init(checked(r)); }

  template <class R>
  static constexpr datatype type_of() {
    return datatype_of<std::remove_cv_t<std::ranges::range_value_t<R>>>();
  }
  template <class R>
  static std::uint64_t size_of(const R& r) {
    return static_cast<std::uint64_t>(std::ranges::size(r));
  }
  template <class R>
  static void* data_of(R&& r) {
    return const_cast<void*>(static_cast<const void*>(std::ranges::data(r)));
  }

  void expect(collective c, const char* which, std::uint64_t have, std::uint64_t want) const {
    if (have != want) detail::expect_elements(self().rank(), c, which, have, want);  // throws
  }
  // The buffer-length checks of each builder below run on every call; the rest, derived
  // from the request alone, when it is checked (not when it repeats the last call).
  static request_of_call make(collective c, int root, std::uint64_t count, const void* in, void* out, datatype t,
                              const op& o, const algo& a) {
    return {c, root, count, in, out, t, &o, &a};
  }
  prepared checked(const request_of_call& r) const {
    return detail::make_checked_call(self().rank(), self().size(), r.coll, r.root, r.count, r.in, r.out, r.type,
                                     *r.reduction, *r.choice);
  }
  template <class I, class O>
  static vrequest_of_call make_v(collective c, int root, counts_view counts, counts_view displs, const I& in, O&& out,
                                 datatype t, const op& o, const algo& a) {
    return {make(c, root, 0, data_of(in), data_of(out), t, o, a), counts, displs, size_of(in), size_of(out)};
  }
  prepared checked(const vrequest_of_call& r) const {
    const request_of_call& c = r.call;
    return detail::make_checked_vcall(self().rank(), self().size(), c.coll, c.root, r.counts, r.displs, c.in,
                                      r.in_count, c.out, r.out_count, c.type, *c.reduction, *c.choice);
  }

  request_of_call barrier_call(const algo& a) const {
    return make(collective::barrier, 0, 0, nullptr, nullptr, datatype_of<std::byte>(), ops::sum, a);
  }
  template <class R>
  request_of_call bcast_call(R&& buf, int root, const algo& a) const {
    return make(collective::bcast, root, size_of(buf), nullptr, data_of(buf), type_of<R>(), ops::sum, a);
  }
  template <class I, class O>
  request_of_call reduce_call(const I& in, O&& out, const op& o, int root, const algo& a) const {
    if (self().rank() == root) expect(collective::reduce, "out", size_of(out), size_of(in));
    return make(collective::reduce, root, size_of(in), data_of(in), data_of(out), type_of<I>(), o, a);
  }
  // allreduce, scan, exscan: `out` as long as `in`.
  template <class I, class O>
  request_of_call elementwise_call(collective c, const I& in, O&& out, const op& o, const algo& a) const {
    expect(c, "out", size_of(out), size_of(in));
    return make(c, 0, size_of(in), data_of(in), data_of(out), type_of<I>(), o, a);
  }
  template <class I, class O>
  request_of_call allreduce_call(const I& in, O&& out, const op& o, const algo& a) const {
    return elementwise_call(collective::allreduce, in, out, o, a);
  }
  template <class R>
  request_of_call allreduce_call(R&& inout, const op& o, const algo& a) const {
    return make(collective::allreduce, 0, size_of(inout), data_of(inout), data_of(inout), type_of<R>(), o, a);
  }
  template <class I, class O>
  request_of_call scan_call(const I& in, O&& out, const op& o, const algo& a) const {
    return elementwise_call(collective::scan, in, out, o, a);
  }
  template <class I, class O>
  request_of_call exscan_call(const I& in, O&& out, const op& o, const algo& a) const {
    return elementwise_call(collective::exscan, in, out, o, a);
  }
  template <class I, class O>
  request_of_call allgather_call(const I& in, O&& out, const algo& a) const {
    expect(collective::allgather, "out", size_of(out), size_of(in) * self().size());
    return make(collective::allgather, 0, size_of(in), data_of(in), data_of(out), type_of<I>(), ops::sum, a);
  }
  template <class I, class O>
  request_of_call reduce_scatter_block_call(const I& in, O&& out, const op& o, const algo& a) const {
    expect(collective::reduce_scatter_block, "in", size_of(in), size_of(out) * self().size());
    return make(collective::reduce_scatter_block, 0, size_of(out), data_of(in), data_of(out), type_of<I>(), o, a);
  }
  template <class I, class O>
  request_of_call scatter_call(const I& in, O&& out, int root, const algo& a) const {
    if (self().rank() == root) expect(collective::scatter, "in", size_of(in), size_of(out) * self().size());
    return make(collective::scatter, root, size_of(out), data_of(in), data_of(out), type_of<O>(), ops::sum, a);
  }
  template <class I, class O>
  request_of_call gather_call(const I& in, O&& out, int root, const algo& a) const {
    if (self().rank() == root) expect(collective::gather, "out", size_of(out), size_of(in) * self().size());
    return make(collective::gather, root, size_of(in), data_of(in), data_of(out), type_of<I>(), ops::sum, a);
  }
  template <class I, class O>
  request_of_call alltoall_call(const I& in, O&& out, const algo& a) const {
    expect(collective::alltoall, "out", size_of(out), size_of(in));
    if (size_of(in) % static_cast<std::uint64_t>(self().size()) != 0)
      throw usage_error(self().rank(), "alltoall", "input length is not a multiple of p");
    return make(collective::alltoall, 0, size_of(in) / self().size(), data_of(in), data_of(out), type_of<I>(), ops::sum,
                a);
  }
  template <class I, class O>
  vrequest_of_call allgatherv_call(const I& in, O&& out, counts_view counts, counts_view displs, const algo& a) const {
    return make_v(collective::allgatherv, 0, counts, displs, in, out, type_of<I>(), ops::sum, a);
  }
  template <class I, class O>
  vrequest_of_call reduce_scatter_call(const I& in, O&& out, counts_view counts, const op& o, const algo& a) const {
    return make_v(collective::reduce_scatter, 0, counts, {}, in, out, type_of<I>(), o, a);
  }
  template <class I, class O>
  vrequest_of_call scatterv_call(const I& in, O&& out, counts_view counts, int root, counts_view displs,
                                 const algo& a) const {
    return make_v(collective::scatterv, root, counts, displs, in, out, type_of<O>(), ops::sum, a);
  }
  template <class I, class O>
  vrequest_of_call gatherv_call(const I& in, O&& out, counts_view counts, int root, counts_view displs,
                                const algo& a) const {
    return make_v(collective::gatherv, root, counts, displs, in, out, type_of<I>(), ops::sum, a);
  }
  template <class I, class O>
  vrequest_of_call alltoallv_call(const I& in, O&& out, counts_view counts, const algo& a) const {
    return make_v(collective::alltoallv, 0, counts, {}, in, out, type_of<I>(), ops::sum, a);
  }
};

}  // namespace ranklab
