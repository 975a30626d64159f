// The parts of a drawing, each an SVG fragment in its own coordinates with its size: the
// caption, the space-time diagram (or, for many ranks, per-round volume bars), the
// data-flow grid and the circulant graph. page.hpp puts them together.
#pragma once
#include <algorithm>
#include <string>

#include "draw/figure.hpp"

namespace ranklab::tools::draw {

struct view {
  std::string markup;
  double width = 0, height = 0;
};

// Ranks as rows: both the space-time diagram and the data-flow grid put rank r's row at
// rows_top + r * row_height (its centre half a row lower), so they line up side by side.
// A row is tall enough for a label above and one below its line (space_time.cpp).
inline constexpr double row_height = 36;
inline constexpr double rows_top = 40;
// Above this many ranks an arrow per message is a hairball: per-round bars instead.
inline constexpr int max_detailed_p = 32;

// A message between ranks that are neighbours across the ends of the rows (p-1 -> 0 in a
// ring, or 0 -> p-1) is drawn leaving one end and coming back at the other, as if the rows
// were wrapped around a cylinder, rather than across every row in between. +1: it leaves
// downwards (at the bottom), -1: upwards, 0: a straight arrow.
// Only short ways around (at most a quarter of the rows) are drawn so: a longer one is
// clearer as the straight arrow.
inline int wraps_around(const message& m, int p) {
  const int straight = m.to > m.from ? m.to - m.from : m.from - m.to, around = p - straight;
  if (around >= straight || around > std::max(1, p / 4)) return 0;
  return m.to < m.from ? +1 : -1;
}

// The caption's lines are wrapped at about max_width pixels.
view caption_view(const figure& fig, double max_width);
view space_time_view(const figure& fig);
view summary_view(const figure& fig);
// stacked: every step's grid at the same place (the HTML shows one at a time); otherwise
// small multiples, one grid per step, wrapped at about max_width.
view flow_view(const figure& fig, bool stacked, double max_width);
// The symbols and the label notations the figure uses, in lines of at most max_width.
view legend_view(const figure& fig, double max_width);
// `v` moved to (x, y) of the page it is placed on.
std::string translated(const view& v, double x, double y);

}  // namespace ranklab::tools::draw
