// The checks of a call at one rank (see call_checks.hpp and ranklab/collectives.hpp).
#include "call_checks.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <tuple>

#include "ranklab/collectives.hpp"
#include "ranklab/errors.hpp"

namespace ranklab::detail {

namespace {

void require_separate(const call& c, const buffer_extent& ext, int rank, const void* in, const void* out) {
  if (!buffers_separate(c, ext, in, out))
    throw usage_error(
        rank, std::string(name(c.args.coll)),
        "'in' and 'out' overlap; only allreduce, scan and exscan take the same buffer for both (in place)");
}

void require_root(int rank, int p, collective c, int root) {
  if (is_rooted(c) && (root < 0 || root >= p))
    throw usage_error(rank, std::string(name(c)), fmt::format("root {} outside 0..{}", root, p - 1));
}

}  // namespace

bool buffers_separate(const call& c, const buffer_extent& ext, const void* in, const void* out) {
  if (ext.in == 0 || ext.out == 0 || !in || !out) return true;
  const auto* a = static_cast<const std::byte*>(in);
  const auto* b = static_cast<const std::byte*>(out);
  const std::uint64_t a_bytes = ext.in * c.type.size, b_bytes = ext.out * c.type.size;
  if (a + a_bytes <= b || b + b_bytes <= a) return true;
  const bool in_place_ok = has_in_place_form(c.args.coll);
  return in_place_ok && a == b && a_bytes == b_bytes;
}

call as_called(const call& c, const void* in, const void* out) {
  call as = c;
  as.args.in_place = called_in_place(c, in, out);
  return as;
}

void require_buffers(const call& c, int rank, int p, const void* in, const void* out) {
  coll_args args = c.args;
  args.p = p;
  const buffer_extent ext = buffer_extents(args, rank);
  for (auto [which, ptr, count] : {std::tuple{"in", in, ext.in}, std::tuple{"out", out, ext.out}})
    if (count > 0 && !ptr)
      throw usage_error(rank, std::string(name(c.args.coll)),
                        fmt::format("'{}' is a null pointer but the call needs {} elements", which, count));
}

void expect_elements(int rank, collective c, const char* which, std::uint64_t have, std::uint64_t want) {
  if (have != want)
    throw usage_error(rank, std::string(name(c)),
                      fmt::format("'{}' buffer holds {} elements, the call needs {}", which, have, want));
}

prepared_call make_checked_call(int rank, int p, collective c, int root, std::uint64_t count, const void* in, void* out,
                                const datatype& t, const op& o, const algo& a) {
  prepared_call pr{make_call(c, p, count, root, t, o, a), in, out};
  require_root(rank, p, c, root);
  if (!has_vector_counts(c)) require_separate(pr.c, buffer_extents(pr.c.args, rank), rank, in, out);
  return pr;
}

prepared_call make_checked_vcall(int rank, int p, collective c, int root, std::span<const std::uint64_t> counts,
                                 std::span<const std::uint64_t> displs, const void* in, std::uint64_t in_count,
                                 void* out, std::uint64_t out_count, const datatype& t, const op& o, const algo& a) {
  prepared_call pr{make_vcall(c, p, counts, displs, root, t, o, a), in, out};
  require_root(rank, p, c, root);
  try {
    validate(pr.c.args);
  } catch (const error& e) {
    throw usage_error(rank, e.operation(), e.cause());
  }
  const buffer_extent ext = buffer_extents(pr.c.args, rank);
  // The send buffer must match this rank's count (unless unused here, as at a non-root);
  // the receive buffer may be longer than the layout needs, as in MPI.
  if (ext.in > 0 || !is_rooted(c)) expect_elements(rank, c, "in", in_count, ext.in);
  if (out_count < ext.out) expect_elements(rank, c, "out", out_count, ext.out);
  require_separate(pr.c, ext, rank, in, out);
  return pr;
}

}  // namespace ranklab::detail
