// The caption (the call, the algorithm and the verifier's counts) and the legend of a
// figure's symbols.
#include <fmt/format.h>

#include <algorithm>

#include "draw/svg.hpp"
#include "draw/views.hpp"

namespace ranklab::tools::draw {

view caption_view(const figure& fig) {
  const verify_report& r = fig.report;
  svg_writer w;
  w.leaf("text", {{"x", "0"}, {"y", "16"}, {"class", "title"}}, fig.title);
  std::string counts = fmt::format("{} rounds, {} messages, volume {} elements (largest message {})", r.rounds,
                                   r.messages, r.elements, r.max_message);
  if (r.local_elements) counts += fmt::format(", {} elements copied or reduced locally", r.local_elements);
  if (r.fences) counts += fmt::format(", {} fence rounds", fig.fences.size());
  w.leaf("text", {{"x", "0"}, {"y", "34"}, {"class", "caption"}}, counts);
  std::string note;
  if (!fig.one_ported)
    note = "shared-memory direct algorithm: fences and reads of other ranks' buffers, outside the one-ported model. ";
  if (!r.ok) note += "The verifier rejects these schedules: " + r.problems.front() + ". ";
  if (!fig.flow_note.empty()) note += fig.flow_note + ".";
  if (!note.empty()) w.leaf("text", {{"x", "0"}, {"y", "50"}, {"class", "caption"}}, note);
  return {w.str(), 60 + 7.0 * static_cast<double>(std::max(counts.size(), fig.title.size())),
          note.empty() ? 42.0 : 58.0};
}

view legend_view() {
  // Each item: a symbol, then its text; ~6.5 pixels per character of 12-pixel text.
  svg_writer w;
  double x = 0;
  auto text = [&](std::string_view t) {
    w.leaf("text", {{"x", num(x)}, {"y", "14"}, {"class", "caption"}}, t);
    x += 6.5 * static_cast<double>(t.size()) + 24;
  };
  auto arrow = [&](const char* head, double head_room) {
    w.leaf("line",
           {{"x1", num(x)}, {"y1", "10"}, {"x2", num(x + 30)}, {"y2", "10"}, {"stroke", "#555"}, {"marker-end", head}});
    x += 36 + head_room;
  };
  arrow("url(#head)", 0);
  text("message (sender's colour; Bi: block i of the out buffer)");
  arrow("url(#head-reduce)", 8);  // the ⊕ is centred on the end
  text("reduced into the receiver's data");
  w.open("g", {{"class", "step copy"}});
  w.leaf("rect", {{"x", num(x)}, {"y", "6"}, {"width", "8"}, {"height", "8"}});
  w.close("g");
  x += 14;
  text("local copy");
  w.open("g", {{"class", "step reduce"}});
  w.leaf("circle", {{"cx", num(x + 5)}, {"cy", "10"}, {"r", "5"}});
  w.close("g");
  x += 14;
  text("local reduction");
  return {w.str(), x, 22};
}

}  // namespace ranklab::tools::draw
