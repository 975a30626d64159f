// Cells, message labels and the data-flow grid of a figure (see flow.hpp).
#include "draw/flow.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace ranklab::tools::draw {

namespace {

// The grid is left out beyond these: the labels are looked at every step (elements times
// steps), and every cell of every step is an element of the drawing (a page of more than
// ~40k cells is over ten megabytes that a browser renders slowly, and no one reads).
constexpr std::uint64_t max_flow_work = std::uint64_t{1} << 24;
constexpr std::uint64_t max_flow_cells = 40'000;

std::uint64_t all_ranks(int p) { return p >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << p) - 1; }
std::uint64_t rank_bit(int r) { return std::uint64_t{1} << r; }

// The block of the gathered layout holding element e, or -1.
int block_of(const coll_args& a, std::uint64_t e) {
  for (int j = 0; j < a.p; ++j)
    if (e >= block_offset(a, j) && e < block_offset(a, j) + block_count(a, j)) return j;
  return -1;
}

std::string buffer_name(buffer_id b) {
  if (b == in_buffer) return "in";
  if (b == out_buffer) return "out";
  return fmt::format("s{}", b - first_scratch);
}

}  // namespace

held_data wanted_label(const coll_args& a, int rank, std::uint64_t e) {
  const auto index = [](std::uint64_t i) { return static_cast<std::uint32_t>(i); };
  switch (a.coll) {
    case collective::bcast:
      return {rank_bit(a.root), index(e)};
    case collective::reduce:
    case collective::allreduce:
      return {all_ranks(a.p), index(e)};
    case collective::scan:
      return {all_ranks(rank + 1), index(e)};
    case collective::exscan:
      if (rank == 0) return {};
      return {all_ranks(rank), index(e)};
    case collective::allgather:
    case collective::allgatherv:
    case collective::gather:
    case collective::gatherv: {
      const int j = block_of(a, e);
      if (j < 0) return {};
      return {rank_bit(j), index(e - block_offset(a, j))};
    }
    case collective::scatter:
    case collective::scatterv:
      return {rank_bit(a.root), index(block_offset(a, rank) + e)};
    case collective::reduce_scatter:
    case collective::reduce_scatter_block:
      return {all_ranks(a.p), index(block_offset(a, rank) + e)};
    case collective::alltoall: {
      if (a.count == 0) return {};
      const auto j = static_cast<int>(e / a.count);
      return {rank_bit(j), index(static_cast<std::uint64_t>(rank) * a.count + e % a.count)};
    }
    default:  // barrier moves no data; alltoallv's layout is not drawn
      return {};
  }
}

cells make_cells(const schedule_set& schedules, const coll_args& args) {
  std::vector<std::uint64_t> b{0};
  std::uint64_t longest = 0;
  for (const schedule& s : schedules) {
    longest = std::max(longest, s.out_count());
    const auto shift = input_in_out_layout(args, s.rank());
    auto add = [&](std::span<const region> regions) {
      for (const region& r : regions)
        if (r.buffer == out_buffer || (r.buffer == in_buffer && shift)) {
          const std::uint64_t at = r.buffer == out_buffer ? r.offset : *shift + r.offset;
          b.push_back(at);
          b.push_back(at + r.count);
        }
    };
    for (const round& rd : s.rounds()) {
      add(s.send_regions(rd));
      add(s.recv_regions(rd));
    }
  }
  // The collective's own blocks: a block moved whole in one message still gets its cell.
  const bool blocked = args.coll == collective::allgather || args.coll == collective::allgatherv ||
                       args.coll == collective::gather || args.coll == collective::gatherv ||
                       (args.coll == collective::alltoall && args.count > 0);
  if (blocked)
    for (int j = 0; j < args.p; ++j) {
      const std::uint64_t off = args.coll == collective::alltoall ? j * args.count : block_offset(args, j);
      b.push_back(off);
      b.push_back(off + (args.coll == collective::alltoall ? args.count : block_count(args, j)));
    }
  b.push_back(longest);
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  while (!b.empty() && b.back() > longest) b.pop_back();
  if (b.size() - 1 <= max_cells) return {b, true};
  // Too many to read: an even split, and element ranges in the labels.
  cells even;
  for (std::size_t i = 0; i <= max_cells; ++i) even.bounds.push_back(longest * i / max_cells);
  even.bounds.erase(std::unique(even.bounds.begin(), even.bounds.end()), even.bounds.end());
  return even;
}

std::optional<std::uint64_t> input_in_out_layout(const coll_args& args, int rank) {
  switch (args.coll) {
    case collective::reduce:
    case collective::allreduce:
    case collective::scan:
    case collective::exscan:
      return 0;
    case collective::allgather:
    case collective::allgatherv:
    case collective::gather:
    case collective::gatherv:
      return block_offset(args, rank);
    default:
      return std::nullopt;
  }
}

std::string regions_ranges(std::span<const region> regions) {
  std::vector<std::string> parts;
  for (const region& r : regions)
    if (r.count) parts.push_back(fmt::format("{}[{},{})", buffer_name(r.buffer), r.offset, r.offset + r.count));
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string regions_label(std::span<const region> regions, const cells& c, const coll_args& args, int rank) {
  std::vector<std::size_t> blocks;
  std::vector<std::string> ranges;
  auto bound = [&](std::uint64_t x) {
    const auto it = std::lower_bound(c.bounds.begin(), c.bounds.end(), x);
    return it != c.bounds.end() && *it == x ? static_cast<std::ptrdiff_t>(it - c.bounds.begin()) : -1;
  };
  const auto shift = input_in_out_layout(args, rank);
  for (const region& r : regions) {
    if (r.count == 0) continue;
    std::optional<std::uint64_t> at;  // the region's offset in the out buffer's layout
    if (r.buffer == out_buffer) at = r.offset;
    if (r.buffer == in_buffer && shift) at = *shift + r.offset;
    const auto first = at ? bound(*at) : -1, last = at ? bound(*at + r.count) : -1;
    // One cell is the whole buffer: "B0" would say less than the range.
    if (c.blocks && c.bounds.size() > 2 && first >= 0 && last > first)
      for (auto i = first; i < last; ++i) blocks.push_back(static_cast<std::size_t>(i));
    else
      ranges.push_back(fmt::format("{}[{},{})", buffer_name(r.buffer), r.offset, r.offset + r.count));
  }
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < blocks.size();) {
    std::size_t j = i;
    while (j + 1 < blocks.size() && blocks[j + 1] == blocks[j] + 1) ++j;
    parts.push_back(j == i ? fmt::format("B{}", blocks[i]) : fmt::format("B{}-B{}", blocks[i], blocks[j]));
    i = j + 1;
  }
  parts.insert(parts.end(), ranges.begin(), ranges.end());
  return fmt::format("{}", fmt::join(parts, " "));
}

namespace {

// One rank's labels by element index, to find its best partial result for an element.
struct holdings {
  std::vector<held_data> sorted;
  explicit holdings(const std::vector<std::vector<held_data>>& buffers) {
    for (const auto& b : buffers)
      for (const held_data& h : b)
        if (h.known()) sorted.push_back(h);
    std::sort(sorted.begin(), sorted.end(), [](const held_data& x, const held_data& y) { return x.index < y.index; });
  }
  // Share of `want` held in one element: the most contributions of it combined so far.
  double share(const held_data& want) const {
    auto it = std::lower_bound(sorted.begin(), sorted.end(), want.index,
                               [](const held_data& h, std::uint32_t i) { return h.index < i; });
    int best = 0;
    for (; it != sorted.end() && it->index == want.index; ++it)
      if ((it->ranks & ~want.ranks) == 0) best = std::max(best, std::popcount(it->ranks));
    return static_cast<double>(best) / std::popcount(want.ranks);
  }
};

std::vector<cell_state> rank_cells(const figure& fig, const cells& c, int r,
                                   const std::vector<std::vector<held_data>>& buffers) {
  std::vector<cell_state> out;
  const auto& held_out = buffers[out_buffer];
  const holdings have(buffers);
  for (std::size_t i = 0; i + 1 < c.bounds.size() && c.bounds[i] < held_out.size(); ++i) {
    cell_state cs{c.bounds[i], std::min<std::uint64_t>(c.bounds[i + 1], held_out.size())};
    cs.complete = true;
    double fill = 0;
    std::uint64_t defined = 0;
    for (std::uint64_t e = cs.begin; e < cs.end; ++e) {
      const held_data want = wanted_label(fig.args, r, e);
      cs.holds |= held_out[e].ranks;
      if (!want.known()) continue;
      ++defined;
      cs.wanted |= want.ranks;
      cs.complete = cs.complete && held_out[e] == want;
      fill += have.share(want);
    }
    cs.complete = cs.complete && defined > 0;
    cs.fill = defined ? fill / static_cast<double>(defined) : 0;
    out.push_back(cs);
  }
  return out;
}

}  // namespace

void compute_flow(figure& fig, const schedule_set& schedules, const cells& c) {
  if (fig.args.p > max_data_flow_ranks) {
    fig.flow_note = fmt::format("no data-flow view beyond p = {}", max_data_flow_ranks);
    return;
  }
  std::uint64_t elements = 0;
  for (const schedule& s : schedules)
    for (buffer_id b = 0; b < first_scratch + s.scratch_counts().size(); ++b) elements += s.buffer_count(b);
  const std::uint64_t steps = fig.rounds + 1;
  std::uint64_t cells_per_step = 0;
  for (const schedule& s : schedules) {
    const auto end = std::lower_bound(c.bounds.begin(), c.bounds.end(), s.out_count());
    cells_per_step += static_cast<std::uint64_t>(end - c.bounds.begin());
  }
  if (elements * steps > max_flow_work || cells_per_step * steps > max_flow_cells) {
    fig.flow_note = fmt::format(
        "no data-flow view: {} elements and {} cells over {} steps are too many to draw; try a smaller --count or -p",
        elements, cells_per_step, steps);
    return;
  }
  const int preloaded = fig.args.coll == collective::bcast ? fig.args.root : no_rank;
  trace_data_flow(schedules, preloaded, [&](std::size_t, const held_buffers& state) {
    auto& step = fig.flow.emplace_back();
    for (int r = 0; r < fig.args.p; ++r) step.push_back(rank_cells(fig, c, r, state[static_cast<std::size_t>(r)]));
  });
  fig.has_flow = true;
}

}  // namespace ranklab::tools::draw
