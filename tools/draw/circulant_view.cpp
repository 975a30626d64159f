// The circulant graph of J. L. Träff, "Optimal Broadcast Schedules in Logarithmic Time with
// Applications to Broadcast, All-Broadcast, Reduction and All-Reduction": ranks on a
// circle, in round k of a phase every rank r sends to (r + skip[k]) mod p, one skip class
// per round, and beside it the receive and send schedules of every rank (the paper's
// Table 1, from schedules/circulant_table.hpp), the current round's rows marked.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "draw/page.hpp"
#include "draw/svg.hpp"
#include "schedules/circulant_table.hpp"

namespace ranklab::tools::draw {

namespace {

struct table {
  int p = 1, q = 0;
  std::vector<std::int64_t> skips;
  std::vector<int> baseblock;
  std::vector<std::vector<int>> recv, send;  // [rank][k]
};

table read_table(int p) {
  const auto j = nlohmann::json::parse(circulant_table_json(p, 0, p));
  table t{p, j["q"].get<int>(), j["skips"].get<std::vector<std::int64_t>>(), {}, {}, {}};
  for (const auto& r : j["ranks"]) {
    t.baseblock.push_back(r["baseblock"].get<int>());
    t.recv.push_back(r["recv"].get<std::vector<int>>());
    t.send.push_back(r["send"].get<std::vector<int>>());
  }
  return t;
}

struct circle {
  double cx, cy, radius;
  double x(int r, int p) const { return cx + radius * std::cos(angle(r, p)); }
  double y(int r, int p) const { return cy + radius * std::sin(angle(r, p)); }
  static double angle(int r, int p) { return 2 * std::numbers::pi * r / p - std::numbers::pi / 2; }
};

constexpr double node_radius = 14;

// The chord from node a towards node b, stopping at the nodes' rims.
void chord(svg_writer& w, const circle& c, int a, int b, int p, std::initializer_list<attr> extra = {}) {
  const double x0 = c.x(a, p), y0 = c.y(a, p), x1 = c.x(b, p), y1 = c.y(b, p);
  const double len = std::hypot(x1 - x0, y1 - y0), ux = (x1 - x0) / len, uy = (y1 - y0) / len;
  w.raw(fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"", num(x0 + ux * node_radius),
                    num(y0 + uy * node_radius), num(x1 - ux * (node_radius + 1)), num(y1 - uy * (node_radius + 1))));
  for (const attr& e : extra) w.raw(fmt::format(" {}=\"{}\"", e.name, xml_escape(e.value)));
  w.raw("/>\n");
}

// The graph with round k's skip class drawn (k < 0: the graph alone).
view graph(const table& t, int k) {
  const int p = t.p;
  const double radius = std::clamp(p * 10.0, 80.0, 220.0);
  const circle c{radius + 30, radius + 44, radius};
  svg_writer w;
  w.leaf("text", {{"x", num(c.cx)}, {"y", "14"}, {"class", "head"}},
         k < 0 ? fmt::format("p = {}, q = {}, skips {}", p, t.q, fmt::join(t.skips, " "))
               : fmt::format("round {}: skip {}", k, t.skips[static_cast<std::size_t>(k)]));
  for (int s = 0; s < t.q; ++s)
    for (int r = 0; r < p; ++r)
      if (p > 1)
        chord(w, c, r, static_cast<int>((r + t.skips[static_cast<std::size_t>(s)]) % p), p, {{"class", "graph-edge"}});
  if (k >= 0) {
    const std::int64_t skip = t.skips[static_cast<std::size_t>(k)];
    for (int r = 0; r < p && p > 1; ++r) {
      const int to = static_cast<int>((r + skip) % p);
      const int block = t.send[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)];
      w.open("g", {{"class", "skip-edge"},
                   {"data-from", std::to_string(r)},
                   {"data-to", std::to_string(to)},
                   {"data-skip", std::to_string(skip)}});
      chord(w, c, r, to, p, {{"stroke", rank_colour(k)}, {"marker-end", "url(#head)"}});
      w.leaf("title", {}, fmt::format("round {}: rank {} sends block {} to rank {}", k, r, block, to));
      w.close("g");
    }
  }
  for (int r = 0; r < p; ++r) {
    w.open("g", {{"class", "node"}});
    w.leaf("circle", {{"cx", num(c.x(r, p))}, {"cy", num(c.y(r, p))}, {"r", num(node_radius)}});
    w.leaf("text", {{"x", num(c.x(r, p))}, {"y", num(c.y(r, p) + 5)}}, std::to_string(r));
    w.close("g");
  }
  return {w.str(), 2 * c.cx, c.cy + radius + 30};
}

// The paper's table: a column per rank, rows r, b, recv[k], send[k]; with `stepping`, the
// rows of round k marked in step k + 1.
view schedule_table(const table& t, bool stepping) {
  constexpr double name_width = 80, column = 34, line = 20;
  svg_writer w;
  w.open("g", {{"class", "table"}});
  const double width = name_width + t.p * column;
  if (stepping)
    for (int k = 0; k < t.q; ++k)
      for (const int row : {2 + k, 2 + t.q + k})
        w.leaf("rect", {{"class", "row-now"},
                        {"data-step", std::to_string(k + 1)},
                        {"x", "0"},
                        {"y", num(row * line + 4)},
                        {"width", num(width)},
                        {"height", num(line)}});
  // A round's rows are named in the colour of its edges in the graph.
  auto row = [&](int i, const std::string& name, auto value, int k = -1) {
    const double y = (i + 1) * line - 1;
    w.leaf("text", {{"x", "0"}, {"y", num(y)}, {"class", "row-name"}, {"fill", k < 0 ? "#555" : rank_colour(k)}}, name);
    for (int r = 0; r < t.p; ++r)
      w.leaf("text", {{"x", num(name_width + (r + 1) * column - 4)}, {"y", num(y)}}, std::to_string(value(r)));
  };
  const auto at = [](const std::vector<std::vector<int>>& v, int r, int k) {
    return v[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)];
  };
  row(0, "r:", [](int r) { return r; });
  row(1, "b:", [&](int r) { return t.baseblock[static_cast<std::size_t>(r)]; });
  for (int k = 0; k < t.q; ++k)
    row(
        2 + k, fmt::format("recv[{}]:", k), [&](int r) { return at(t.recv, r, k); }, k);
  for (int k = 0; k < t.q; ++k)
    row(
        2 + t.q + k, fmt::format("send[{}]:", k), [&](int r) { return at(t.send, r, k); }, k);
  w.close("g");
  return {w.str(), width + 8, (2 + 2 * t.q + 1) * line + 8};
}

}  // namespace

std::string circulant_svg(int p, bool stepping) {
  const table t = read_table(p);
  constexpr double margin = 16;
  svg_writer title;
  const std::string heading =
      fmt::format("Circulant graph of p = {} (Träff): round k's edges go from r to (r + skip[k]) mod p", p);
  const std::string lines[] = {
      "recv[k]/send[k]: the block rank r receives/sends in round k of a phase (negative: none yet); b: baseblock",
      "A broadcast uses an edge only when there is a block for it (none to the root, no negative block in the first "
      "phase):",
      "`ranklab draw --coll bcast --algo circulant` shows who sends in each round"};
  title.leaf("text", {{"x", "0"}, {"y", "18"}, {"class", "title"}}, heading);
  double text_right = text_width(heading, title_px, true);
  double y = 18;
  for (const std::string& l : lines) {
    y += 20;
    title.leaf("text", {{"x", "0"}, {"y", num(y)}, {"class", "caption"}}, l);
    text_right = std::max(text_right, text_width(l));
  }
  std::string body = translated({title.str(), 0, 0}, margin, margin);
  const double top = margin + y + 16;
  double width = 2 * margin + text_right, height = top;
  const view tab = schedule_table(t, stepping);
  std::vector<std::string> names{"the circulant graph"};
  for (int k = 0; k < t.q; ++k)
    names.push_back(fmt::format("round {}: skip {}", k, t.skips[static_cast<std::size_t>(k)]));
  if (stepping) {
    // One panel per step, all at the same place; the script shows one.
    view largest;
    for (int k = -1; k < t.q; ++k) {
      const view g = graph(t, k);
      body += fmt::format("<g data-step=\"{}\">\n{}</g>\n", k + 1, translated(g, margin, top));
      largest = g;
    }
    body += translated(tab, margin + largest.width + 24, top + 40);
    width = std::max(width, margin + largest.width + 24 + tab.width + margin);
    height = top + std::max(largest.height, tab.height + 40) + margin;
  } else {
    // Small multiples, wrapped, then the table below.
    double x = margin, y = top, row = 0;
    for (int k = 0; k < t.q; ++k) {
      const view g = graph(t, k);
      if (x > margin && x + g.width > 1200) {
        x = margin;
        y += row;
        row = 0;
      }
      body += fmt::format("<g class=\"round-panel\" data-round=\"{}\">\n{}</g>\n", k, translated(g, x, y));
      x += g.width;
      row = std::max(row, g.height);
      width = std::max(width, x + margin);
    }
    if (t.q == 0) {  // p = 1: no rounds, just the one rank
      const view g = graph(t, -1);
      body += translated(g, margin, y);
      row = g.height;
    }
    y += row + 8;
    body += translated(tab, margin, y);
    width = std::max(width, margin + tab.width + margin);
    height = y + tab.height + margin;
  }
  return svg_document(body, width, height, names);
}

}  // namespace ranklab::tools::draw
