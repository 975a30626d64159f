// The data-flow grid: one row per rank, one cell per block of the out buffer, coloured by
// the rank the block comes from (one colour for reductions) and filled as the rank comes to
// hold it: solid when its out buffer holds the final result, pale for a part of it (some
// contributions of a reduction, or the data still outside the out buffer), white for none.
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "draw/svg.hpp"
#include "draw/views.hpp"

namespace ranklab::tools::draw {

namespace {

constexpr double grid_label = 40;
constexpr double step_gap = 24;
const char* const reduction_colour = "#d95f02";

std::string ranks_list(std::uint64_t mask) {
  std::vector<int> ranks;
  for (int r = 0; r < 64; ++r)
    if (mask >> r & 1) ranks.push_back(r);
  return fmt::format("{}", fmt::join(ranks, " "));
}

std::string step_name(std::size_t step) {
  return step == 0 ? "before round 0" : fmt::format("after round {}", step - 1);
}

// Each cell's width: the out buffer's cells in a row of at most ~360 pixels.
double cell_width(const figure& fig) {
  std::size_t most = 1;
  for (const auto& row : fig.flow.front()) most = std::max(most, row.size());
  return std::clamp(360.0 / static_cast<double>(most), 6.0, 32.0);
}

view one_step(const figure& fig, std::size_t step, double cw) {
  const auto& ranks = fig.flow[step];
  svg_writer w;
  double right = grid_label;
  w.leaf("text", {{"x", num(grid_label)}, {"y", num(rows_top - 8)}, {"class", "head-left"}}, step_name(step));
  for (int r = 0; r < fig.args.p; ++r) {
    const double y = rows_top + r * row_height + 4, h = row_height - 8;
    w.leaf("text", {{"x", num(grid_label - 6)}, {"y", num(y + h / 2 + 4)}, {"class", "rank"}}, std::to_string(r));
    const auto& cells = ranks[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const cell_state& cs = cells[i];
      const double x = grid_label + static_cast<double>(i) * cw;
      right = std::max(right, x + cw);
      const int want = std::popcount(cs.wanted);
      const std::string colour = want == 1 ? rank_colour(std::countr_zero(cs.wanted)) : reduction_colour;
      const double opacity = cs.complete ? 1.0 : cs.fill > 0 ? 0.15 + 0.45 * cs.fill : 0.0;
      w.open("rect", {{"class", "cell"},
                      {"data-rank", std::to_string(r)},
                      {"data-cell", std::to_string(i)},
                      {"data-begin", std::to_string(cs.begin)},
                      {"data-end", std::to_string(cs.end)},
                      {"data-complete", cs.complete ? "1" : "0"},
                      {"data-holds", ranks_list(cs.holds)},
                      {"data-wanted", ranks_list(cs.wanted)},
                      {"x", num(x)},
                      {"y", num(y)},
                      {"width", num(cw)},
                      {"height", num(h)},
                      {"fill", colour},
                      {"fill-opacity", num(opacity)}});
      std::string title = fmt::format("rank {}, elements [{},{}) of out, {}: ", r, cs.begin, cs.end, step_name(step));
      if (cs.wanted == 0)
        title += "no result defined here";
      else if (cs.complete)
        title += "final result";
      else if (cs.fill > 0)
        title += fmt::format("{:.0f}% of the final result held", 100 * cs.fill);
      else
        title += "nothing of the final result";
      if (want > 1) title += fmt::format(" (contributions in out: {})", cs.holds ? ranks_list(cs.holds) : "none");
      w.leaf("title", {}, title);
      w.close("rect");
      // How many of the contributions it holds, where that fits in the cell.
      const std::string count = fmt::format("{:.0f}/{}", cs.fill * want, want);
      if (want > 1 && cs.fill > 0 && !cs.complete && text_width(count) + 4 <= cw)
        w.leaf("text", {{"x", num(x + cw / 2)}, {"y", num(y + h / 2 + 5)}, {"class", "count"}}, count);
    }
  }
  // Under the grid, the cells' names as the message labels give them (B0, B1, ...), where
  // they fit.
  double bottom = rows_top + fig.args.p * row_height;
  if (fig.block_names) {
    std::size_t most = 0;
    for (const auto& row : ranks) most = std::max(most, row.size());
    const bool fits = text_width(fmt::format("B{}", most ? most - 1 : 0)) + 2 <= cw;
    for (std::size_t i = 0; fits && i < most; ++i)
      w.leaf(
          "text",
          {{"x", num(grid_label + (static_cast<double>(i) + 0.5) * cw)}, {"y", num(bottom + 12)}, {"class", "count"}},
          fmt::format("B{}", i));
    if (fits) bottom += 18;
  }
  // Wide enough for its heading, so that the next step's grid does not run into it.
  right = std::max(right, grid_label + text_width(step_name(step)));
  return {w.str(), right + 16, bottom};
}

}  // namespace

view flow_view(const figure& fig, bool stacked, double max_width) {
  if (!fig.has_flow || fig.flow.empty()) return {};
  const double cw = cell_width(fig);
  svg_writer w;
  double x = 0, y = 0, width = 0, height = 0;
  for (std::size_t s = 0; s < fig.flow.size(); ++s) {
    const view v = one_step(fig, s, cw);
    if (!stacked && x > 0 && x + v.width > max_width) {
      x = 0;
      y = height + step_gap;
    }
    w.open("g", {{"class", "flow-step"},
                 {"data-step", std::to_string(s)},
                 {"transform", fmt::format("translate({},{})", num(x), num(y))}});
    w.raw(v.markup);
    w.close("g");
    width = std::max(width, x + v.width);
    height = std::max(height, y + v.height);
    if (!stacked) x += v.width;
  }
  return {w.str(), width, height};
}

}  // namespace ranklab::tools::draw
