// The parts of a drawing, each an SVG fragment in its own coordinates with its size: the
// caption, the space-time diagram (or, for many ranks, per-round volume bars), the
// data-flow grid and the circulant graph. page.hpp puts them together.
#pragma once
#include <string>

#include "draw/figure.hpp"

namespace ranklab::tools::draw {

struct view {
  std::string markup;
  double width = 0, height = 0;
};

// Ranks as rows: both the space-time diagram and the data-flow grid put rank r's row at
// rows_top + r * row_height (its centre half a row lower), so they line up side by side.
inline constexpr double row_height = 26;
inline constexpr double rows_top = 34;
// Above this many ranks an arrow per message is a hairball: per-round bars instead.
inline constexpr int max_detailed_p = 32;

view caption_view(const figure& fig);
view space_time_view(const figure& fig);
view summary_view(const figure& fig);
// stacked: every step's grid at the same place (the HTML shows one at a time); otherwise
// small multiples, one grid per step, wrapped at about max_width.
view flow_view(const figure& fig, bool stacked, double max_width);
view legend_view();
// `v` moved to (x, y) of the page it is placed on.
std::string translated(const view& v, double x, double y);

}  // namespace ranklab::tools::draw
