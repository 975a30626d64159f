// The space-time diagram: ranks as rows, rounds as columns, an arrow per message from the
// sender's row to the receiver's, local steps as marks on a rank's row, fences as bands
// across all rows. Elements carry data-round (and messages data-from/data-to), which the
// HTML script uses to step through the rounds and the tests use to check the drawing.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "draw/svg.hpp"
#include "draw/views.hpp"

namespace ranklab::tools::draw {

namespace {

constexpr double label_width = 80;
constexpr double prologue_width = 40;
constexpr double mark_inset = 9;    // local steps, from the column's edges
constexpr double arrow_inset = 22;  // messages, from the column's edges
constexpr double label_gap = 6;     // a label's start after its arrow's
constexpr std::size_t max_label = 26;
// A label's baseline from its sender's row line: above it (the arrow leaves downwards) or
// below it (upwards). Text of text_px is about 13 pixels above the baseline and 3 below, so
// a label stays within half a row of its own line and clear of the line itself.
constexpr double above_baseline = -4;
constexpr double below_baseline = 14;
static_assert(row_height / 2 >= 17 + 1, "a label above its row line fits in half a row");

double row_centre(int r) { return rows_top + (r + 0.5) * row_height; }

std::string shortened(const std::string& label) {
  return label.size() <= max_label ? label : label.substr(0, max_label - 2) + "…";
}
std::string label_text(const message& m) { return (m.reduces ? "⊕ " : "") + shortened(m.label); }

struct columns {
  double first = label_width;  // x of round 0
  double width = 100;
  bool prologue = false;
  double x(int round) const { return round < 0 ? label_width : first + round * width; }
  double column_width(int round) const { return round < 0 ? prologue_width : width; }
};

columns layout(const figure& fig) {
  columns c;
  c.prologue = std::any_of(fig.steps.begin(), fig.steps.end(), [](const step_mark& m) { return m.round < 0; });
  if (c.prologue) c.first += prologue_width;
  double longest = text_width("round 10");
  for (const message& m : fig.messages) longest = std::max(longest, text_width(label_text(m)));
  // Room for the label along its arrow, between the arrow's start and end.
  c.width = std::max(110.0, longest + label_gap + 2 * arrow_inset + 8);
  return c;
}

void draw_grid(svg_writer& w, const figure& fig, const columns& c, double right) {
  const double bottom = rows_top + fig.args.p * row_height;
  if (c.prologue)
    w.leaf("text", {{"x", num(c.x(-1) + prologue_width / 2)}, {"y", num(rows_top - 8)}, {"class", "head"}}, "init");
  for (std::size_t i = 0; i < fig.rounds; ++i) {
    const double x = c.x(static_cast<int>(i));
    if (i % 2 == 0)
      w.leaf("rect", {{"x", num(x)},
                      {"y", num(rows_top)},
                      {"width", num(c.width)},
                      {"height", num(bottom - rows_top)},
                      {"class", "band"}});
    w.leaf(
        "text",
        {{"x", num(x + c.width / 2)}, {"y", num(rows_top - 8)}, {"class", "head"}, {"data-round", std::to_string(i)}},
        fmt::format("round {}", i));
  }
  for (int r = 0; r < fig.args.p; ++r) {
    const double y = row_centre(r);
    w.leaf("text", {{"x", num(label_width - 8)}, {"y", num(y + 4)}, {"class", "rank"}}, fmt::format("rank {}", r));
    w.leaf("line",
           {{"x1", num(label_width)}, {"y1", num(y)}, {"x2", num(right)}, {"y2", num(y)}, {"class", "timeline"}});
  }
  for (const std::size_t i : fig.fences) {
    const double x = c.x(static_cast<int>(i)) + c.width / 2;
    w.open("g", {{"class", "fence"}, {"data-round", std::to_string(i)}});
    w.leaf("line", {{"x1", num(x)}, {"y1", num(rows_top)}, {"x2", num(x)}, {"y2", num(bottom)}});
    w.leaf("title", {}, fmt::format("round {}: fence (no rank goes on before all have arrived)", i));
    w.close("g");
  }
}

void draw_messages(svg_writer& w, const figure& fig, const columns& c) {
  const int p = fig.args.p;
  const double top = rows_top, bottom = rows_top + p * row_height;
  for (const message& m : fig.messages) {
    const double x0 = c.x(static_cast<int>(m.round)) + arrow_inset, x1 = x0 + c.width - 2 * arrow_inset;
    const double y0 = row_centre(m.from), y1 = row_centre(m.to);
    const std::string colour = rank_colour(m.from);
    const int wrap = wraps_around(m, p);
    w.open("g", {{"class", wrap ? "msg wrap" : "msg"},
                 {"data-round", std::to_string(m.round)},
                 {"data-from", std::to_string(m.from)},
                 {"data-to", std::to_string(m.to)},
                 {"data-elements", std::to_string(m.elements)},
                 {"data-reduce", m.reduces ? "1" : "0"}});
    const char* head = m.reduces ? "url(#head-reduce)" : "url(#head)";
    if (wrap == 0) {
      w.leaf("line", {{"x1", num(x0)},
                      {"y1", num(y0)},
                      {"x2", num(x1)},
                      {"y2", num(y1)},
                      {"stroke", colour},
                      {"marker-end", head}});
    } else {
      // One straight line on the cylinder: out at one end, in at the other, at the x where
      // the distance travelled so far says.
      const double out = wrap > 0 ? bottom : top, in = wrap > 0 ? top : bottom;
      const double first = std::abs(out - y0), total = first + std::abs(y1 - in);
      const double xm = x0 + (x1 - x0) * first / total;
      w.leaf("line", {{"x1", num(x0)}, {"y1", num(y0)}, {"x2", num(xm)}, {"y2", num(out)}, {"stroke", colour}});
      w.leaf("line", {{"x1", num(xm)},
                      {"y1", num(in)},
                      {"x2", num(x1)},
                      {"y2", num(y1)},
                      {"stroke", colour},
                      {"marker-end", head}});
    }
    // The label on the sender's row, from the arrow's start, on the side of the row line
    // the arrow does not take: every rank sends at most one message a round, so a row holds
    // at most one label per column, and the labels of a column never meet.
    const bool down = wrap != 0 ? wrap > 0 : m.to > m.from;
    w.leaf("text",
           {{"x", num(x0 + label_gap)},
            {"y", num(y0 + (down ? above_baseline : below_baseline))},
            {"class", "label"},
            {"fill", colour}},
           label_text(m));
    w.leaf("title", {},
           fmt::format("round {}: rank {} -> rank {}, {} elements{}: {}{}", m.round, m.from, m.to, m.elements,
                       m.reduces ? ", reduced into the receiver's data" : "", m.label,
                       m.detail.empty() ? "" : " (" + m.detail + ")"));
    w.close("g");
  }
}

void draw_steps(svg_writer& w, const figure& fig, const columns& c) {
  // One mark per rank, round and side; its tooltip lists the steps.
  std::map<std::tuple<int, int, bool>, std::vector<const step_mark*>> marks;
  for (const step_mark& s : fig.steps) marks[{s.round, s.rank, s.after}].push_back(&s);
  for (const auto& [key, list] : marks) {
    const auto [round, rank, after] = key;
    const double x = round < 0 ? c.x(-1) + prologue_width / 2
                               : (after ? c.x(round) + c.width - mark_inset : c.x(round) + mark_inset);
    const double y = row_centre(rank);
    const bool reduces = std::any_of(list.begin(), list.end(), [](const step_mark* s) { return s->reduces; });
    w.open("g", {{"class", reduces ? "step reduce" : "step copy"},
                 {"data-round", std::to_string(round)},
                 {"data-rank", std::to_string(rank)}});
    for (const step_mark* s : list)
      if (s->peer != no_rank)
        w.leaf("line",
               {{"x1", num(x)}, {"y1", num(row_centre(s->peer))}, {"x2", num(x)}, {"y2", num(y)}, {"class", "remote"}});
    if (reduces)
      w.leaf("circle", {{"cx", num(x)}, {"cy", num(y)}, {"r", "5"}});
    else
      w.leaf("rect", {{"x", num(x - 4)}, {"y", num(y - 4)}, {"width", "8"}, {"height", "8"}});
    std::string text =
        round < 0 ? "before round 0:" : fmt::format("round {}, {} the messages:", round, after ? "after" : "before");
    for (const step_mark* s : list) text += "\n" + s->text;
    w.leaf("title", {}, text);
    w.close("g");
  }
}

}  // namespace

view space_time_view(const figure& fig) {
  const columns c = layout(fig);
  const double right = c.x(static_cast<int>(fig.rounds)) + 8;
  svg_writer w;
  w.open("g", {{"class", "space-time"}});
  draw_grid(w, fig, c, right);
  draw_steps(w, fig, c);
  draw_messages(w, fig, c);
  w.close("g");
  return {w.str(), right, rows_top + fig.args.p * row_height + 8};
}

view summary_view(const figure& fig) {
  constexpr double chart_height = 160;
  const double bar = std::clamp(900.0 / std::max<std::size_t>(fig.rounds, 1), 4.0, 40.0);
  const std::uint64_t most =
      fig.round_elements.empty() ? 0 : *std::max_element(fig.round_elements.begin(), fig.round_elements.end());
  svg_writer w;
  w.open("g", {{"class", "summary"}});
  const std::string head =
      fmt::format("p = {}: elements sent per round (an arrow per message would be unreadable)", fig.args.p);
  w.leaf("text", {{"x", num(label_width)}, {"y", num(rows_top - 8)}, {"class", "head-left"}}, head);
  const double base = rows_top + chart_height;
  for (std::size_t i = 0; i < fig.rounds; ++i) {
    const double h = most ? chart_height * static_cast<double>(fig.round_elements[i]) / static_cast<double>(most) : 0;
    const double x = label_width + static_cast<double>(i) * bar;
    w.open("g", {{"class", "round-summary"},
                 {"data-round", std::to_string(i)},
                 {"data-elements", std::to_string(fig.round_elements[i])},
                 {"data-messages", std::to_string(fig.round_messages[i])}});
    w.leaf("rect", {{"x", num(x + 1)}, {"y", num(base - h)}, {"width", num(bar - 2)}, {"height", num(h)}});
    w.leaf("title", {},
           fmt::format("round {}: {} messages, {} elements", i, fig.round_messages[i], fig.round_elements[i]));
    w.close("g");
  }
  w.leaf("line", {{"x1", num(label_width)},
                  {"y1", num(base)},
                  {"x2", num(label_width + fig.rounds * bar)},
                  {"y2", num(base)},
                  {"class", "timeline"}});
  w.leaf("text", {{"x", num(label_width - 6)}, {"y", num(rows_top + 10)}, {"class", "rank"}}, std::to_string(most));
  w.leaf("text", {{"x", num(label_width)}, {"y", num(base + 16)}, {"class", "head-left"}},
         fmt::format("rounds 0..{}", fig.rounds ? fig.rounds - 1 : 0));
  w.close("g");
  return {w.str(), label_width + std::max(static_cast<double>(fig.rounds) * bar, text_width(head)) + 16, base + 24};
}

}  // namespace ranklab::tools::draw
