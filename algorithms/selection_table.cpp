// The built-in selection table: data, not code. Rows are tried in order; the first whose
// collective and message-size band match, and whose algorithm exists and accepts the call,
// wins. `ranklab tune` will regenerate such a table from measurements on the machine.
#include "selection_table.hpp"

#include <fmt/format.h>

#include <array>
#include <limits>

namespace ranklab::detail {

namespace {
struct row {
  collective coll;
  std::uint64_t max_bytes;  // per-rank message size band (inclusive)
  std::string_view algorithm;
};
constexpr auto any_size = std::numeric_limits<std::uint64_t>::max();

constexpr std::array table = {
    row{collective::barrier, any_size, "dissemination"},
    row{collective::bcast, any_size, "circulant"},
    row{collective::bcast, any_size, "binomial"},
    row{collective::reduce, any_size, "circulant"},
    row{collective::reduce, any_size, "binomial"},
    row{collective::allreduce, 4096, "recursive_doubling"},
    row{collective::allreduce, any_size, "circulant"},
    row{collective::allreduce, any_size, "recursive_doubling"},
    row{collective::allgather, any_size, "circulant"},
    row{collective::allgatherv, any_size, "circulant"},
    row{collective::reduce_scatter, any_size, "circulant"},
    row{collective::reduce_scatter_block, any_size, "circulant"},
};
}  // namespace

const algorithm* select_from_table(const coll_args& args, std::size_t elem_size, std::string& why) {
  const std::uint64_t bytes = args.count * elem_size;
  for (const row& r : table) {
    if (r.coll != args.coll || bytes > r.max_bytes) continue;
    const algorithm* a = registry::find(r.coll, r.algorithm);
    if (a == nullptr || !meets_preconditions(*a, args)) continue;
    why = r.max_bytes == any_size ? "default table"
                                  : fmt::format("default table, up to {} bytes", r.max_bytes);
    return a;
  }
  // Fall back to any registered algorithm that accepts the call.
  for (const algorithm* a : registry::for_collective(args.coll))
    if (meets_preconditions(*a, args)) {
      why = "first registered algorithm that accepts the call";
      return a;
    }
  return nullptr;
}

}  // namespace ranklab::detail
