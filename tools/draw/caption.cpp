// The caption (the call, the algorithm, the verifier's counts and what the rounds do) and
// the legend of a figure's symbols and label notations.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "draw/svg.hpp"
#include "draw/views.hpp"

namespace ranklab::tools::draw {

namespace {

constexpr double line_height = 20;

// Who sends in each round, from the schedules: "every rank sends in every round" only when
// that is so.
std::string senders_line(const figure& fig) {
  if (fig.rounds == 0 || fig.report.messages == 0) return {};
  const auto p = static_cast<std::uint64_t>(fig.args.p);
  const bool all =
      std::all_of(fig.round_messages.begin(), fig.round_messages.end(), [&](std::uint64_t n) { return n == p; });
  if (all) return fmt::format("every rank sends a message in every round ({} per round)", p);
  std::vector<std::string> counts;
  for (const std::uint64_t n : fig.round_messages) counts.push_back(std::to_string(n));
  if (counts.size() > 24) {
    counts.resize(24);
    counts.push_back("…");
  }
  return fmt::format("ranks sending in rounds 0..{}: {} (of p = {})", fig.rounds - 1, fmt::join(counts, " "), p);
}

// Splits `text` at spaces into lines of at most `width` pixels.
std::vector<std::string> wrapped(const std::string& text, double width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    const std::string longer = line.empty() ? word : line + " " + word;
    if (!line.empty() && text_width(longer) > width) {
      lines.push_back(line);
      line = word;
    } else {
      line = longer;
    }
    at = end + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

view caption_view(const figure& fig, double max_width) {
  const verify_report& r = fig.report;
  svg_writer w;
  w.leaf("text", {{"x", "0"}, {"y", "18"}, {"class", "title"}}, fig.title);
  double width = text_width(fig.title, title_px, true);
  std::string counts = fmt::format("{} rounds, {} messages, volume {} elements (largest message {})", r.rounds,
                                   r.messages, r.elements, r.max_message);
  if (r.local_elements) counts += fmt::format(", {} elements copied or reduced locally", r.local_elements);
  if (r.fences) counts += fmt::format(", {} fence rounds", fig.fences.size());
  std::vector<std::string> paragraphs{counts};
  if (const std::string s = senders_line(fig); !s.empty()) paragraphs.push_back(s);
  if (!fig.choice.empty()) paragraphs.push_back(fig.choice);
  if (!fig.one_ported)
    paragraphs.push_back(
        "shared-memory direct algorithm: fences and reads of other ranks' buffers, outside the one-ported model");
  if (!r.ok) paragraphs.push_back("the verifier rejects these schedules: " + r.problems.front());
  if (!fig.flow_note.empty()) paragraphs.push_back(fig.flow_note);
  double y = 18;
  for (const std::string& para : paragraphs)
    for (const std::string& line : wrapped(para, max_width)) {
      y += line_height;
      w.leaf("text", {{"x", "0"}, {"y", num(y)}, {"class", "caption"}}, line);
      width = std::max(width, text_width(line));
    }
  return {w.str(), width, y + 8};
}

view legend_view(const figure& fig, double max_width) {
  // The notations the labels use, each explained once.
  bool blocks = false, in = false, out = false, scratch = false, reduces = false;
  for (const message& m : fig.messages) {
    const std::string_view l = m.label;
    for (std::size_t i = 0; i + 1 < l.size(); ++i)
      if (l[i] == 'B' && (i == 0 || l[i - 1] == ' ' || l[i - 1] == '-') &&
          std::isdigit(static_cast<unsigned char>(l[i + 1])))
        blocks = true;
    in = in || l.find("in[") != std::string_view::npos;
    out = out || l.find("out[") != std::string_view::npos;
    for (std::size_t i = 0; i + 2 < l.size(); ++i)
      if (l[i] == 's' && (i == 0 || l[i - 1] == ' ') && std::isdigit(static_cast<unsigned char>(l[i + 1])))
        scratch = true;
    reduces = reduces || m.reduces;
  }
  svg_writer w;
  double x = 0, y = 0, width = 0;
  constexpr double item_gap = 28, line = 24;
  // An item is a symbol of `symbol` pixels (drawn by `draw` at x) and its text; it goes to
  // the next line when it would pass max_width.
  auto item = [&](double symbol, std::string_view text, auto draw) {
    const double need = symbol + text_width(text);
    if (x > 0 && x + need > max_width) {
      x = 0;
      y += line;
    }
    draw(x, y);
    w.leaf("text", {{"x", num(x + symbol)}, {"y", num(y + 15)}, {"class", "caption"}}, text);
    x += need;
    width = std::max(width, x);
    x += item_gap;
  };
  auto arrow = [&](const char* head) {
    return [&w, head](double at, double top) {
      w.leaf("line", {{"x1", num(at)},
                      {"y1", num(top + 10)},
                      {"x2", num(at + 30)},
                      {"y2", num(top + 10)},
                      {"stroke", "#555"},
                      {"marker-end", head}});
    };
  };
  const auto nothing = [](double, double) {};
  if (!fig.messages.empty())
    item(40, "message, in its sender's colour, labelled on the sender's row", arrow("url(#head)"));
  if (reduces) item(48, "reduced into the receiver's data (⊕ in the label)", arrow("url(#head-reduce)"));
  if (blocks) item(0, "Bi: block i of the data (a cell of the data-flow grid)", nothing);
  if (out) item(0, "out[a,b): elements a..b-1 of the output buffer", nothing);
  if (in) item(0, "in[a,b): of the input buffer", nothing);
  if (scratch) item(0, "s0[a,b): of scratch buffer 0", nothing);
  if (std::any_of(fig.messages.begin(), fig.messages.end(),
                  [&](const message& m) { return wraps_around(m, fig.args.p) != 0; }))
    item(0, "an arrow leaving at the bottom comes back in at the top, or the reverse (rank p-1 next to rank 0)",
         nothing);
  if (!fig.fences.empty())
    item(16, "fence: no rank goes on before all have arrived", [&](double at, double top) {
      w.open("g", {{"class", "fence"}});
      w.leaf("line", {{"x1", num(at + 6)}, {"y1", num(top)}, {"x2", num(at + 6)}, {"y2", num(top + 20)}});
      w.close("g");
    });
  if (std::any_of(fig.steps.begin(), fig.steps.end(), [](const step_mark& s) { return s.peer != no_rank; }))
    item(16, "a local step reading or writing another rank's buffer (shared memory)", [&](double at, double top) {
      w.leaf("line",
             {{"x1", num(at + 6)}, {"y1", num(top)}, {"x2", num(at + 6)}, {"y2", num(top + 20)}, {"class", "remote"}});
    });
  const auto has_step = [&](bool reduce) {
    return std::any_of(fig.steps.begin(), fig.steps.end(), [&](const step_mark& s) { return s.reduces == reduce; });
  };
  if (has_step(false))
    item(14, "local copy", [&](double at, double top) {
      w.open("g", {{"class", "step copy"}});
      w.leaf("rect", {{"x", num(at)}, {"y", num(top + 6)}, {"width", "8"}, {"height", "8"}});
      w.close("g");
    });
  if (has_step(true))
    item(16, "local reduction", [&](double at, double top) {
      w.open("g", {{"class", "step reduce"}});
      w.leaf("circle", {{"cx", num(at + 5)}, {"cy", num(top + 10)}, {"r", "5"}});
      w.close("g");
    });
  return {w.str(), width, x > 0 ? y + line : y};
}

}  // namespace ranklab::tools::draw
