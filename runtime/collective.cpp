// The collectives' names and properties, and the layout arithmetic of their arguments
// (block offsets, buffer extents, validation) that builders, executors and checks share.
#include "ranklab/collective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>

#include "ranklab/errors.hpp"

namespace ranklab {

namespace {
constexpr std::array<std::string_view, collective_count> names = {
    "barrier", "bcast",  "reduce",  "allreduce", "allgather", "allgatherv", "reduce_scatter", "reduce_scatter_block",
    "scan",    "exscan", "scatter", "scatterv",  "gather",    "gatherv",    "alltoall",       "alltoallv"};

[[noreturn]] void bad(const coll_args& a, const std::string& cause) {
  throw usage_error(no_rank, std::string(name(a.coll)), cause);
}
}  // namespace

std::string_view name(collective c) { return names[static_cast<std::size_t>(c)]; }

std::optional<collective> collective_from_name(std::string_view n) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == n) return static_cast<collective>(i);
  return std::nullopt;
}

bool is_rooted(collective c) {
  switch (c) {
    case collective::bcast:
    case collective::reduce:
    case collective::scatter:
    case collective::scatterv:
    case collective::gather:
    case collective::gatherv:
      return true;
    default:
      return false;
  }
}

bool is_reduction(collective c) {
  switch (c) {
    case collective::reduce:
    case collective::allreduce:
    case collective::reduce_scatter:
    case collective::reduce_scatter_block:
    case collective::scan:
    case collective::exscan:
      return true;
    default:
      return false;
  }
}

bool has_vector_counts(collective c) {
  switch (c) {
    case collective::allgatherv:
    case collective::reduce_scatter:
    case collective::scatterv:
    case collective::gatherv:
    case collective::alltoallv:
      return true;
    default:
      return false;
  }
}

std::uint64_t block_count(const coll_args& a, int j) {
  if (has_vector_counts(a.coll) && a.coll != collective::alltoallv) return a.counts[j];
  return a.count;
}

std::uint64_t block_offset(const coll_args& a, int j) {
  if (!a.displs.empty()) return a.displs[j];
  if (has_vector_counts(a.coll) && a.coll != collective::alltoallv)
    return std::accumulate(a.counts.begin(), a.counts.begin() + j, std::uint64_t{0});
  return a.count * static_cast<std::uint64_t>(j);
}

std::uint64_t total_count(const coll_args& a) {
  if (has_vector_counts(a.coll) && a.coll != collective::alltoallv)
    return std::accumulate(a.counts.begin(), a.counts.end(), std::uint64_t{0});
  return a.count * static_cast<std::uint64_t>(a.p);
}

namespace {
// Length of the gathered layout: the end of the furthest block (displacements may leave gaps).
std::uint64_t layout_extent(const coll_args& a) {
  if (a.displs.empty()) return total_count(a);
  std::uint64_t end = 0;
  for (int j = 0; j < a.p; ++j) end = std::max(end, block_offset(a, j) + block_count(a, j));
  return end;
}
}  // namespace

buffer_extent buffer_extents(const coll_args& a, int rank) {
  const bool root = rank == a.root;
  const auto p = static_cast<std::uint64_t>(a.p);
  switch (a.coll) {
    case collective::barrier:
      return {0, 0};
    case collective::bcast:
      return {0, a.count};
    case collective::reduce:
      return {a.count, root ? a.count : 0};
    case collective::allreduce:
    case collective::scan:
    case collective::exscan:
      return {a.count, a.count};
    case collective::allgather:
      return {a.count, a.count * p};
    case collective::allgatherv:
      return {a.counts[rank], layout_extent(a)};
    case collective::reduce_scatter:
      return {total_count(a), a.counts[rank]};
    case collective::reduce_scatter_block:
      return {a.count * p, a.count};
    case collective::scatter:
      return {root ? a.count * p : 0, a.count};
    case collective::scatterv:
      return {root ? layout_extent(a) : 0, a.counts[rank]};
    case collective::gather:
      return {a.count, root ? a.count * p : 0};
    case collective::gatherv:
      return {a.counts[rank], root ? layout_extent(a) : 0};
    case collective::alltoall:
      return {a.count * p, a.count * p};
    case collective::alltoallv: {
      std::uint64_t in = 0, out = 0;
      for (int j = 0; j < a.p; ++j) {
        in += a.counts[static_cast<std::size_t>(rank) * p + j];
        out += a.counts[static_cast<std::size_t>(j) * p + rank];
      }
      return {in, out};
    }
  }
  return {0, 0};
}

namespace {
// The most elements a buffer of elem_size-byte elements can hold. Counts, sums and
// displacements beyond it cannot describe real memory: they come from an overflow or a
// negative value converted to unsigned, and offsets computed from them would wrap.
std::uint64_t max_elements(const coll_args& a) {
  return static_cast<std::uint64_t>(PTRDIFF_MAX) / std::max<std::uint64_t>(a.elem_size, 1);
}

// Parameters are the same for every algorithm: 0 (-1 for removed_steps) lets it choose.
void validate_params(const coll_args& a) {
  const algo_params& pr = a.params;
  if (pr.blocks < 0) bad(a, fmt::format("blocks = {} (need at least 1, or 0 to let the algorithm choose)", pr.blocks));
  if (pr.radix < 0 || pr.radix == 1)
    bad(a, fmt::format("radix = {} (need at least 2, or 0 for the algorithm's default)", pr.radix));
  if (pr.removed_steps < -1)
    bad(a,
        fmt::format("removed_steps = {} (need 0..ceil(log2 p), or -1 to let the algorithm choose)", pr.removed_steps));
}

// Counts, their sums and displacement + count must stay below max_elements: the layout
// arithmetic (block_offset, total_count, buffer_extents) is then free of overflow.
void validate_sizes(const coll_args& a) {
  const std::uint64_t limit = max_elements(a);
  const auto p = static_cast<std::uint64_t>(a.p);
  if (!has_vector_counts(a.coll)) {
    if (a.count > limit / p)
      bad(a, fmt::format("count {} is larger than any buffer of {}-byte elements", a.count, a.elem_size));
    return;
  }
  std::uint64_t sum = 0;
  for (std::size_t j = 0; j < a.counts.size(); ++j) {
    if (a.counts[j] > limit - sum)
      bad(a, fmt::format("counts add up to more than any buffer holds (counts[{}] = {}; a negative count "
                         "converted to unsigned?)",
                         j, a.counts[j]));
    sum += a.counts[j];
  }
  for (std::size_t j = 0; j < a.displs.size(); ++j)
    if (a.displs[j] > limit - a.counts[j])
      bad(a, fmt::format("displacement {} of rank {} (with its {} elements) lies past any buffer (a negative "
                         "displacement converted to unsigned?)",
                         a.displs[j], j, a.counts[j]));
}
}  // namespace

bool has_in_place_form(collective c) {
  return c == collective::allreduce || c == collective::scan || c == collective::exscan;
}

void validate(const coll_args& a) {
  if (a.in_place && !has_in_place_form(a.coll))
    bad(a, "in place: only allreduce, scan and exscan take the same buffer for input and output");
  if (a.p < 1) bad(a, fmt::format("p = {} (need at least 1 rank)", a.p));
  if (a.elem_size == 0) bad(a, "element size 0 (a datatype needs at least one byte per element)");
  if (is_rooted(a.coll) && (a.root < 0 || a.root >= a.p)) bad(a, fmt::format("root {} outside 0..{}", a.root, a.p - 1));
  validate_params(a);
  if (has_vector_counts(a.coll)) {
    const std::size_t want = a.coll == collective::alltoallv
                                 ? static_cast<std::size_t>(a.p) * static_cast<std::size_t>(a.p)
                                 : static_cast<std::size_t>(a.p);
    if (a.counts.size() != want)
      bad(a, fmt::format("counts has {} entries, needs {} (p = {})", a.counts.size(), want, a.p));
    if (!a.displs.empty()) {
      if (a.coll == collective::alltoallv || a.coll == collective::reduce_scatter)
        bad(a, "displacements are not supported for this collective");
      if (a.displs.size() != a.counts.size())
        bad(a, fmt::format("displs has {} entries, counts {}", a.displs.size(), a.counts.size()));
    }
    validate_sizes(a);
    if (!a.displs.empty()) {
      // Blocks must not overlap: an overlapping receive layout is undefined in MPI too.
      std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
      for (int j = 0; j < a.p; ++j)
        if (a.counts[j] > 0) spans.emplace_back(a.displs[j], a.displs[j] + a.counts[j]);
      std::sort(spans.begin(), spans.end());
      for (std::size_t i = 1; i < spans.size(); ++i)
        if (spans[i].first < spans[i - 1].second)
          bad(a, fmt::format("blocks at displacements {} and {} overlap", spans[i - 1].first, spans[i].first));
    }
  } else if (!a.counts.empty() || !a.displs.empty()) {
    bad(a, "counts/displacements given to a collective with a single count");
  } else {
    validate_sizes(a);
  }
}

std::string describe(const coll_args& a) {
  std::string s = fmt::format("{}(p={}", name(a.coll), a.p);
  if (is_rooted(a.coll)) s += fmt::format(", root={}", a.root);
  if (has_vector_counts(a.coll))
    s += fmt::format(", counts[{}]", a.counts.size());
  else if (a.coll != collective::barrier)
    s += fmt::format(", count={}", a.count);
  if (a.in_place) s += ", in place";
  if (a.params.blocks) s += fmt::format(", blocks={}", a.params.blocks);
  if (a.params.radix) s += fmt::format(", radix={}", a.params.radix);
  if (a.params.removed_steps >= 0) s += fmt::format(", r={}", a.params.removed_steps);
  if (a.params.segment) s += fmt::format(", segment={}", a.params.segment);
  return s + ")";
}

}  // namespace ranklab
