// Putting the views together (see page.hpp).
#include "draw/page.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "draw/svg.hpp"

namespace ranklab::tools::draw {

namespace {

constexpr double margin = 16;

// .past/.now/.future are set by the page's script (step through the rounds).
// Sizes: text_px and title_px of svg.hpp; labels keep a white halo over the arrows.
constexpr const char* styles = R"(
text{font-family:DejaVu Sans,Arial,sans-serif;font-size:14px}
.title{font-size:18px;font-weight:bold}
.caption{fill:#333}
.head{text-anchor:middle;fill:#555}
.head-left{fill:#555}
.rank{text-anchor:end;fill:#333}
.timeline{stroke:#bbb;stroke-width:1}
.band{fill:#f3f3f3}
.msg line{stroke-width:1.6}
.label{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
.step rect{fill:#fff;stroke:#333}
.step circle{fill:#d95f02;stroke:#333}
.remote{stroke:#888;stroke-dasharray:3 2}
.fence line{stroke:#444;stroke-width:2;stroke-dasharray:6 3}
.round-summary rect{fill:#4c78a8}
.cell{stroke:#999;stroke-width:0.5}
.count{text-anchor:middle}
.node circle{fill:#fff;stroke:#333}
.node text{text-anchor:middle}
.graph-edge{stroke:#ddd;stroke-width:1}
.skip-edge line{stroke-width:1.8}
.table text{text-anchor:end}
.table .row-name{text-anchor:start}
.row-now{fill:#fde0c5}
.future{opacity:0.12}
.now line{stroke-width:3}
.now .label{font-weight:bold}
)";

// Arrowheads in user units: a highlighted (thicker) arrow keeps its head's size. The ⊕ of a
// reducing receive sits upright on the arrow's end.
constexpr const char* markers = R"(<defs>
<marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker>
<marker id="head-reduce" viewBox="0 0 12 12" refX="6" refY="6" markerUnits="userSpaceOnUse" markerWidth="14" markerHeight="14" orient="0"><circle cx="6" cy="6" r="5" fill="#fff" stroke="#d95f02" stroke-width="1.5"/><path d="M6,2.5 V9.5 M2.5,6 H9.5" stroke="#d95f02" stroke-width="1.5"/></marker>
</defs>
)";

// Shows step s: elements of round i are past (i < s-1), now (i = s-1) or future; only the
// groups of step s (data-step) are displayed.
constexpr const char* script = R"((function () {
  var svg = document.querySelector('svg.ranklab');
  var names = svg.getAttribute('data-step-names').split('|');
  var last = names.length - 1, step = 0;
  var rounds = svg.querySelectorAll('[data-round]'), steps = svg.querySelectorAll('[data-step]');
  function show() {
    rounds.forEach(function (e) {
      var r = Number(e.getAttribute('data-round'));
      e.classList.toggle('past', r < step - 1);
      e.classList.toggle('now', r === step - 1);
      e.classList.toggle('future', r >= step);
    });
    steps.forEach(function (e) {
      e.style.display = Number(e.getAttribute('data-step')) === step ? '' : 'none';
    });
    document.getElementById('where').textContent = names[step] + ' (' + step + '/' + last + ')';
    document.getElementById('prev').disabled = step === 0;
    document.getElementById('next').disabled = step === last;
  }
  function go(s) { step = Math.max(0, Math.min(last, s)); show(); }
  document.getElementById('prev').addEventListener('click', function () { go(step - 1); });
  document.getElementById('next').addEventListener('click', function () { go(step + 1); });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'ArrowRight') { go(step + 1); e.preventDefault(); }
    if (e.key === 'ArrowLeft') { go(step - 1); e.preventDefault(); }
    if (e.key === 'Home') go(0);
    if (e.key === 'End') go(last);
  });
  // Walk every step once, so a broken step fails at load time (the headless check reads
  // data-stepped from the DOM), then start at the beginning.
  for (var s = last; s >= 0; --s) go(s);
  document.body.setAttribute('data-stepped', String(last));
})();
)";

}  // namespace

std::string translated(const view& v, double x, double y) {
  return fmt::format("<g transform=\"translate({},{})\">\n{}</g>\n", num(x), num(y), v.markup);
}

std::string svg_document(const std::string& body, double width, double height,
                         const std::vector<std::string>& step_names) {
  std::string names;
  for (std::size_t i = 0; i < step_names.size(); ++i) names += (i ? "|" : "") + step_names[i];
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"ranklab\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" "
      "data-step-names=\"{2}\">\n<style>{3}</style>\n{4}<rect width=\"100%\" height=\"100%\" "
      "fill=\"#fff\"/>\n{5}</svg>\n",
      num(width), num(height), xml_escape(names), styles, markers, body);
}

std::string figure_svg(const figure& fig, bool stepping) {
  const view main = fig.args.p <= max_detailed_p ? space_time_view(fig) : summary_view(fig);
  const double wrap_width = std::max(main.width, 900.0);
  const view caption = caption_view(fig, wrap_width), legend = legend_view(fig, wrap_width);
  const double top = margin + caption.height + legend.height + 12;
  std::string body = translated(caption, margin, margin) + translated(legend, margin, margin + caption.height);
  body += translated(main, margin, top);
  double width = std::max({caption.width, legend.width, main.width}) + 2 * margin;
  double height = top + main.height + margin;
  if (stepping) {
    // Beside the diagram, rows aligned, unless the diagram is wider than a screen: then
    // below it, where it stays in sight.
    const view flow = flow_view(fig, true, 0);
    const bool beside = main.width <= 900;
    const double x = beside ? margin + main.width + 24 : margin, y = beside ? top : top + main.height + 16;
    body += translated(flow, x, y);
    width = std::max(width, x + flow.width + margin);
    height = std::max(height, y + flow.height + margin);
  } else {
    const view flow = flow_view(fig, false, std::max(main.width, 960.0));
    body += translated(flow, margin, top + main.height + 16);
    width = std::max(width, flow.width + 2 * margin);
    height += flow.height ? flow.height + 16 : 0;
  }
  std::vector<std::string> names{"before round 0"};
  for (std::size_t i = 0; i < fig.rounds; ++i) names.push_back(fmt::format("after round {}", i));
  return svg_document(body, width, height, names);
}

std::string html_page(const std::string& title, const std::string& svg) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n"
      "<style>body{{font-family:DejaVu Sans,Arial,sans-serif;margin:12px}} #controls{{margin:0 0 8px 16px}} "
      "button{{font-size:14px}} "
      "#where{{display:inline-block;min-width:16em;text-align:center}}</style>\n</head>\n<body>\n"
      "<div id=\"controls\"><button id=\"prev\" type=\"button\">&#9664; previous</button> <span id=\"where\"></span> "
      "<button id=\"next\" type=\"button\">next &#9654;</button> (arrow keys step "
      "too)</div>\n{1}<script>\n{2}</script>\n"
      "</body>\n</html>\n",
      xml_escape(title), svg, script);
}

}  // namespace ranklab::tools::draw
