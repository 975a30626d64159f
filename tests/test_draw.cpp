// `ranklab draw` (tools/draw/): the drawings are generated from the schedules, so they are
// checked against the schedules and the verifier, never against stored pictures. The SVG is
// parsed as XML by a small parser here; every registered one-ported algorithm is drawn for
// several p, and the arrows must be the verifier's messages between the schedule's peers,
// the data-flow grid must end with every rank holding its final result. Also the Chrome
// trace export of team_options::trace: required keys, flow ids in matching pairs.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdlib.h>  // mkdtemp
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "draw/choice.hpp"
#include "draw/figure.hpp"
#include "draw/page.hpp"
#include "draw/views.hpp"
#include "ranklab/circulant.hpp"
#include "ranklab/data_flow.hpp"
#include "ranklab/ranklab.hpp"

using namespace ranklab;
namespace draw = ranklab::tools::draw;

namespace {

// ---- a small XML parser: elements, attributes, text; enough to read our SVG --------------

struct node {
  std::string tag;
  std::map<std::string, std::string> attrs;
  std::vector<node> children;
  std::string text;
  std::string attr(const std::string& name) const {
    const auto it = attrs.find(name);
    if (it == attrs.end()) throw std::runtime_error("<" + tag + "> has no attribute " + name);
    return it->second;
  }
  int number(const std::string& name) const { return std::stoi(attr(name)); }
  bool has_class(const std::string& c) const {
    const auto it = attrs.find("class");
    if (it == attrs.end()) return false;
    std::istringstream words(it->second);
    for (std::string w; words >> w;)
      if (w == c) return true;
    return false;
  }
};

class xml_parser {
 public:
  explicit xml_parser(std::string_view s) : s_(s) {}
  node document() {
    skip_misc();
    node root = element();
    skip_misc();
    if (at_ < s_.size()) fail("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(fmt::format("XML at offset {}: {}", at_, what));
  }
  bool starts(std::string_view t) const { return s_.substr(at_, t.size()) == t; }
  void skip_space() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
  }
  void skip_past(std::string_view end) {
    const auto e = s_.find(end, at_);
    if (e == std::string_view::npos) fail("unterminated " + std::string(end));
    at_ = e + end.size();
  }
  void skip_misc() {  // declarations, comments, whitespace
    for (;;) {
      skip_space();
      if (starts("<?"))
        skip_past("?>");
      else if (starts("<!--"))
        skip_past("-->");
      else if (starts("<!"))
        skip_past(">");
      else
        return;
    }
  }
  std::string name() {
    const std::size_t b = at_;
    while (at_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[at_])) || s_[at_] == '-' || s_[at_] == '_' ||
                               s_[at_] == ':' || s_[at_] == '.'))
      ++at_;
    if (b == at_) fail("a name expected");
    return std::string(s_.substr(b, at_ - b));
  }
  static std::string unescape(std::string_view t) {
    std::string out;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i] != '&') {
        out += t[i];
        continue;
      }
      const auto semi = t.find(';', i);
      if (semi == std::string_view::npos) throw std::runtime_error("bad entity");
      const std::string_view ent = t.substr(i + 1, semi - i - 1);
      if (ent == "amp")
        out += '&';
      else if (ent == "lt")
        out += '<';
      else if (ent == "gt")
        out += '>';
      else if (ent == "quot")
        out += '"';
      else if (ent == "apos")
        out += '\'';
      else
        throw std::runtime_error("unknown entity &" + std::string(ent) + ";");
      i = semi;
    }
    return out;
  }
  node element() {
    if (!starts("<")) fail("'<' expected");
    ++at_;
    node n;
    n.tag = name();
    for (;;) {
      skip_space();
      if (starts("/>")) {
        at_ += 2;
        return n;
      }
      if (starts(">")) {
        ++at_;
        break;
      }
      const std::string key = name();
      skip_space();
      if (!starts("=")) fail("'=' expected after " + key);
      ++at_;
      skip_space();
      const char quote = s_[at_];
      if (quote != '"' && quote != '\'') fail("quoted value expected");
      const auto end = s_.find(quote, at_ + 1);
      if (end == std::string_view::npos) fail("unterminated value");
      if (!n.attrs.emplace(key, unescape(s_.substr(at_ + 1, end - at_ - 1))).second) fail("duplicate " + key);
      at_ = end + 1;
    }
    for (;;) {
      if (starts("</")) {
        at_ += 2;
        if (name() != n.tag) fail("mismatched end tag of <" + n.tag + ">");
        skip_space();
        if (!starts(">")) fail("'>' expected");
        ++at_;
        return n;
      }
      if (starts("<!--")) {
        skip_past("-->");
      } else if (starts("<")) {
        n.children.push_back(element());
      } else {
        const auto lt = s_.find('<', at_);
        if (lt == std::string_view::npos) fail("unterminated <" + n.tag + ">");
        n.text += unescape(s_.substr(at_, lt - at_));
        at_ = lt;
      }
    }
  }
  std::string_view s_;
  std::size_t at_ = 0;
};

node parse_xml(std::string_view s) { return xml_parser(s).document(); }

void collect(const node& n, const std::string& tag, const std::string& cls, std::vector<const node*>& out) {
  if ((tag.empty() || n.tag == tag) && (cls.empty() || n.has_class(cls))) out.push_back(&n);
  for (const node& c : n.children) collect(c, tag, cls, out);
}
std::vector<const node*> find_all(const node& n, const std::string& tag, const std::string& cls) {
  std::vector<const node*> out;
  collect(n, tag, cls, out);
  return out;
}

// ---- calls -------------------------------------------------------------------------------

call draw_call(collective c, int p, int root) {
  const datatype t = datatype_of<std::int32_t>();
  constexpr std::uint64_t count = 3;
  if (!has_vector_counts(c)) return make_call(c, p, c == collective::barrier ? 0 : count, root, t);
  const auto n = static_cast<std::size_t>(p);
  const std::vector<std::uint64_t> counts(c == collective::alltoallv ? n * n : n, count);
  return make_vcall(c, p, counts, {}, root, t);
}

coll_args args_of(const call& c) {
  coll_args a = c.args;
  a.commutative = c.reduction.commutative;
  a.elem_size = c.type.size;
  return a;
}

// The collectives whose result the data-flow grid describes (drawing's wanted_label); the
// rest (barrier, alltoallv) have no cells to fill.
bool has_result_cells(collective c) { return c != collective::barrier && c != collective::alltoallv; }

const std::vector<int> draw_ps{1, 2, 3, 7, 8, 17};

}  // namespace

TEST_CASE("the XML parser reads what the drawing tests rely on and rejects broken markup") {
  const node n = parse_xml(R"(<?xml version="1.0"?><svg a="1"><g class="x y"><t>a &amp; b</t></g><e/></svg>)");
  CHECK(n.tag == "svg");
  CHECK(n.attr("a") == "1");
  REQUIRE(n.children.size() == 2);
  CHECK(n.children[0].has_class("y"));
  CHECK(n.children[0].children[0].text == "a & b");
  CHECK_THROWS(parse_xml("<svg><g></svg>"));
  CHECK_THROWS(parse_xml("<svg a=1/>"));
  CHECK_THROWS(parse_xml("<svg>&nbsp;</svg>"));
}

TEST_CASE(
    "every one-ported algorithm: an arrow per verifier message, between the schedule's peers, "
    "and a data-flow grid that ends complete") {
  int drawn = 0;
  for (const algorithm* a : registry::all()) {
    if (!a->one_ported) continue;
    for (const int p : draw_ps) {
      const int root = p / 2;
      const call cl = draw_call(a->coll, p, root);
      const coll_args args = args_of(cl);
      if (!meets_preconditions(*a, args)) continue;
      CAPTURE(a->name);
      CAPTURE(describe(args));
      const schedule_set schedules = build_all(*a, args);
      const verify_report report = verify(schedules);
      REQUIRE(report.ok);
      const draw::figure fig = draw::make_figure(*a, args);
      const node svg = parse_xml(draw::figure_svg(fig, false));
      ++drawn;

      const auto arrows = find_all(svg, "g", "msg");
      CHECK(arrows.size() == report.messages);
      std::set<std::tuple<int, int, int>> seen;
      for (const node* m : arrows) {
        const int i = m->number("data-round"), from = m->number("data-from"), to = m->number("data-to");
        REQUIRE(from >= 0);
        REQUIRE(from < p);
        const auto rounds = schedules[static_cast<std::size_t>(from)].rounds();
        REQUIRE(static_cast<std::size_t>(i) < rounds.size());
        CHECK(rounds[static_cast<std::size_t>(i)].send_to == to);
        CHECK(schedules[static_cast<std::size_t>(to)].rounds()[static_cast<std::size_t>(i)].recv_from == from);
        CHECK(std::stoull(m->attr("data-elements")) ==
              schedules[static_cast<std::size_t>(from)].send_count(rounds[static_cast<std::size_t>(i)]));
        CHECK(seen.emplace(i, from, to).second);
      }

      if (!has_result_cells(a->coll)) continue;
      const auto steps = find_all(svg, "g", "flow-step");
      REQUIRE(steps.size() == fig.rounds + 1);
      const node* last = steps.back();
      CHECK(last->number("data-step") == static_cast<int>(fig.rounds));
      for (const node* cell : find_all(*last, "rect", "cell")) {
        CAPTURE(cell->attr("data-rank"));
        CAPTURE(cell->attr("data-begin"));
        // Nothing is defined there (exscan at rank 0): nothing to hold.
        if (cell->attr("data-wanted").empty()) continue;
        CHECK(cell->attr("data-complete") == "1");
        const auto begin = std::stoull(cell->attr("data-begin"));
        if (a->coll == collective::bcast) CHECK(cell->attr("data-holds") == std::to_string(root));
        if (a->coll == collective::allgather) CHECK(cell->attr("data-holds") == std::to_string(begin / cl.args.count));
      }
      // Every rank with an out buffer has its row of cells at the end.
      std::set<int> rows;
      for (const node* cell : find_all(*last, "rect", "cell")) rows.insert(cell->number("data-rank"));
      for (int r = 0; r < p; ++r)
        if (buffer_extents(args, r).out > 0) CHECK(rows.count(r) == 1);
    }
  }
  CHECK(drawn > 100);
}

TEST_CASE("trace_data_flow: labels follow copies, messages and reductions; a contribution twice is unknown") {
  // Two ranks, two elements: rank 1 copies its input to out, then reduces rank 0's input into
  // it in round 0, and (double) again in round 1.
  schedule_set s{schedule(0, 2, 2, 2), schedule(1, 2, 2, 2)};
  const region in{in_buffer, 0, 2}, out{out_buffer, 0, 2};
  s[1].copy(in, out);
  for (int round = 0; round < 2; ++round) {
    s[0].next_round();
    s[0].send(1, in);
    s[1].next_round();
    s[1].recv(0, out, combine::reduce_in_left);
  }
  std::vector<held_buffers> steps;
  trace_data_flow(s, no_rank, [&](std::size_t step, const held_buffers& state) {
    CHECK(step == steps.size());
    steps.push_back(state);
  });
  REQUIRE(steps.size() == 3);
  for (std::uint32_t e = 0; e < 2; ++e) {
    CHECK(steps[0][0][in_buffer][e] == held_data{0b01, e});   // rank 0's input
    CHECK(!steps[0][0][out_buffer][e].known());               // never written
    CHECK(steps[0][1][out_buffer][e] == held_data{0b10, e});  // the prologue's copy
    CHECK(steps[1][1][out_buffer][e] == held_data{0b11, e});  // both contributions
    CHECK(!steps[2][1][out_buffer][e].known());               // rank 0's counted twice
  }
  // A broadcast's root starts with its data in its out buffer.
  const held_buffers bcast = trace_data_flow(schedule_set{schedule(0, 1, 0, 3)}, 0);
  CHECK(bcast[0][out_buffer][2] == held_data{0b1, 2});
  CHECK_THROWS_AS(trace_data_flow(schedule_set(65)), usage_error);
}

TEST_CASE("before round 0 a broadcast's data is at the root only, an allgather's block at its owner only") {
  for (const char* name : {"binomial", "circulant"}) {
    const algorithm* a = registry::find(collective::bcast, name);
    REQUIRE(a != nullptr);
    const coll_args args = args_of(draw_call(collective::bcast, 7, 3));
    const draw::figure fig = draw::make_figure(*a, args);
    REQUIRE(fig.has_flow);
    for (int r = 0; r < 7; ++r)
      for (const draw::cell_state& c : fig.flow.front()[static_cast<std::size_t>(r)]) CHECK(c.complete == (r == 3));
  }
  const algorithm* ring = registry::find(collective::allgather, "ring");
  REQUIRE(ring != nullptr);
  const draw::figure fig = draw::make_figure(*ring, args_of(draw_call(collective::allgather, 5, 0)));
  for (int r = 0; r < 5; ++r) {
    const auto& cells = fig.flow.front()[static_cast<std::size_t>(r)];
    REQUIRE(cells.size() == 5);
    for (std::size_t j = 0; j < cells.size(); ++j) CHECK((cells[j].fill == 1.0) == (j == static_cast<std::size_t>(r)));
  }
}

TEST_CASE("large p: per-round bars that add up to the verifier's messages and volume") {
  const algorithm* a = registry::find(collective::bcast, "binomial");
  REQUIRE(a != nullptr);
  const coll_args args = args_of(draw_call(collective::bcast, 40, 0));
  const verify_report report = verify(build_all(*a, args));
  const node svg = parse_xml(draw::figure_svg(draw::make_figure(*a, args), false));
  CHECK(find_all(svg, "g", "msg").empty());
  std::uint64_t messages = 0, elements = 0;
  for (const node* bar : find_all(svg, "g", "round-summary")) {
    messages += std::stoull(bar->attr("data-messages"));
    elements += std::stoull(bar->attr("data-elements"));
  }
  CHECK(messages == report.messages);
  CHECK(elements == report.elements);
}

TEST_CASE("the HTML page: one file, the SVG inline, a script, nothing from the network") {
  const algorithm* a = registry::find(collective::allreduce, "recursive_doubling");
  REQUIRE(a != nullptr);
  const draw::figure fig = draw::make_figure(*a, args_of(draw_call(collective::allreduce, 8, 0)));
  const std::string html = draw::html_page(fig.title, draw::figure_svg(fig, true));
  const auto begin = html.find("<svg"), end = html.find("</svg>");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  const node svg = parse_xml(html.substr(begin, end + 6 - begin));
  const std::string names = svg.attr("data-step-names");
  CHECK(std::count(names.begin(), names.end(), '|') == static_cast<long>(fig.rounds));
  CHECK(html.find("<script>") != std::string::npos);
  CHECK(html.find("keydown") != std::string::npos);
  CHECK(html.find(" src=") == std::string::npos);
  CHECK(html.find("href=") == std::string::npos);
  // The only URL is the SVG namespace, which is a name, not a download.
  std::string rest = html;
  const std::string ns = "http://www.w3.org/2000/svg";
  for (auto at = rest.find(ns); at != std::string::npos; at = rest.find(ns)) rest.erase(at, ns.size());
  CHECK(rest.find("http") == std::string::npos);
}

TEST_CASE("the circulant graph: round k's edges are the skip class of k, r -> (r + skip[k]) mod p") {
  for (const int p : {1, 2, 3, 7, 8, 17}) {
    CAPTURE(p);
    const circulant::skips s(p);
    const node svg = parse_xml(draw::circulant_svg(p, false));
    const auto panels = find_all(svg, "g", "round-panel");
    REQUIRE(panels.size() == static_cast<std::size_t>(s.q));
    for (const node* panel : panels) {
      const int k = panel->number("data-round");
      const auto edges = find_all(*panel, "g", "skip-edge");
      CHECK(edges.size() == static_cast<std::size_t>(p));
      std::set<int> senders;
      for (const node* e : edges) {
        const int from = e->number("data-from");
        CHECK(e->number("data-skip") == s[k]);
        CHECK(e->number("data-to") == s.to(from, k));
        senders.insert(from);
      }
      CHECK(senders.size() == static_cast<std::size_t>(p));
    }
    // The stepping layout shows one step at a time: the graph, then one panel per round.
    const node stepping = parse_xml(draw::circulant_svg(p, true));
    const std::string names = stepping.attr("data-step-names");
    CHECK(std::count(names.begin(), names.end(), '|') == s.q);
  }
}

TEST_CASE("Chrome trace export: required keys, a slice per traced round, flow ids in send/receive pairs") {
  const algorithm* a = registry::find(collective::bcast, "binomial");
  REQUIRE(a != nullptr);
  constexpr int p = 6;
  call cl = draw_call(collective::bcast, p, 2);
  cl.choice.name = "binomial";
  const verify_report report = verify(build_all(*a, args_of(cl)));
  team_options options;
  options.trace = true;
  team t(p, options);
  std::vector<std::vector<std::int32_t>> data(p, std::vector<std::int32_t>(cl.args.count, 1));
  run(t, [&](comm& c) { c.run_collective(cl, nullptr, data[static_cast<std::size_t>(c.rank())].data()); });
  std::ostringstream out;
  t.write_trace_chrome(out, [](const trace_event&) { return std::string("binomial"); });
  const auto doc = nlohmann::json::parse(out.str());
  REQUIRE(doc.contains("traceEvents"));
  std::map<std::uint64_t, std::pair<int, int>> flows;  // id -> (starts, finishes)
  std::size_t slices = 0;
  std::set<int> tracks;
  for (const auto& e : doc["traceEvents"]) {
    for (const char* key : {"name", "ph", "pid", "tid"}) CHECK(e.contains(key));
    const std::string ph = e["ph"];
    if (ph == "M") continue;
    CHECK(e.contains("ts"));
    if (ph == "X") {
      ++slices;
      tracks.insert(e["tid"].get<int>());
      CHECK(e.contains("dur"));
      CHECK(e["dur"].get<double>() >= 0);
      for (const char* key : {"call", "coll", "round", "algorithm"}) CHECK(e["args"].contains(key));
      CHECK(e["args"]["algorithm"] == "binomial");
    } else if (ph == "s" || ph == "f") {
      REQUIRE(e.contains("id"));
      auto& [starts, finishes] = flows[e["id"].get<std::uint64_t>()];
      (ph == "s" ? starts : finishes) += 1;
    } else {
      FAIL("unexpected phase " << ph);
    }
  }
  CHECK(slices == t.trace().size());
  CHECK(tracks.size() == static_cast<std::size_t>(p));
  CHECK(flows.size() == report.messages);
  for (const auto& [id, count] : flows) {
    CAPTURE(id);
    CHECK(count.first == 1);
    CHECK(count.second == 1);
  }
}

// ---- in a real browser: the text of every drawing is legible -----------------------------
//
// Headless Chromium (Debian's `chromium`) loads one page holding the drawings below, laid out
// both ways (static SVG, and the HTML page's layout one step at a time), and a script there
// measures every text element with getBBox() (in the HTML layout with the current round's
// bold labels everywhere): two text boxes that overlap, a text below
// draw_min_font pixels or a text outside its picture is written into the page, which
// --dump-dom hands back. Skipped, with a message, where Chromium is not installed.

namespace {

constexpr double draw_min_font = 14;

struct browser_figure {
  std::string name;
  collective coll = collective::bcast;
  std::string algo;  // "" : the circulant graph of p ranks
  int p = 0;
  std::uint64_t count = 0;  // 0: what `ranklab draw` chooses, max(8, p)
  int blocks = 0;
};

const std::vector<browser_figure>& browser_figures() {
  static const std::vector<browser_figure> figures{
      {"allreduce recursive_doubling p=8", collective::allreduce, "recursive_doubling", 8},
      {"allreduce recursive_doubling p=7", collective::allreduce, "recursive_doubling", 7},
      {"allreduce ring p=8", collective::allreduce, "ring", 8},
      {"allreduce circulant p=7", collective::allreduce, "circulant", 7},
      {"allreduce circulant p=8", collective::allreduce, "circulant", 8},
      {"allreduce rabenseifner p=8", collective::allreduce, "rabenseifner", 8},
      {"bcast binomial p=7", collective::bcast, "binomial", 7},
      {"bcast knomial p=8", collective::bcast, "knomial", 8},
      {"bcast circulant p=7 n=4", collective::bcast, "circulant", 7, 8, 4},
      {"bcast scatter_allgather p=7", collective::bcast, "scatter_allgather", 7},
      {"allgather ring p=7", collective::allgather, "ring", 7},
      {"allgather bruck p=8", collective::allgather, "bruck", 8},
      {"reduce_scatter_block ring p=7", collective::reduce_scatter_block, "ring", 7},
      {"alltoall bruck p=8", collective::alltoall, "bruck", 8},
      {"barrier dissemination p=7", collective::barrier, "dissemination", 7},
      {"bcast binomial p=40 (summary)", collective::bcast, "binomial", 40},
      {"circulant graph p=7", collective::bcast, "", 7},
      {"circulant graph p=8", collective::bcast, "", 8},
  };
  return figures;
}

std::string browser_svg(const browser_figure& f, bool stepping) {
  if (f.algo.empty()) return draw::circulant_svg(f.p, stepping);
  const algorithm* a = registry::find(f.coll, f.algo);
  if (a == nullptr) throw std::runtime_error("no algorithm " + f.algo);
  const std::uint64_t count = f.count ? f.count
                              : f.coll == collective::barrier
                                  ? 0
                                  : std::max<std::uint64_t>(8, static_cast<std::uint64_t>(f.p));
  call cl = make_call(f.coll, f.p, count, 0, datatype_of<std::int32_t>());
  coll_args args = args_of(cl);
  args.params.blocks = f.blocks;
  return draw::figure_svg(draw::make_figure(*a, args), stepping);
}

// Measures each <div data-name> 's SVG; with data-steps, once per step with only that
// step's groups shown (as the HTML page's script shows them).
constexpr const char* measure_script = R"(
(function () {
  var out = [], min = Number(document.body.getAttribute('data-min-font')), checked = 0;
  function box(t) {
    var b = t.getBBox(), m = t.getCTM();
    var xs = [], ys = [];
    [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]].forEach(function (p) {
      xs.push(m.a * p[0] + m.c * p[1] + m.e); ys.push(m.b * p[0] + m.d * p[1] + m.f);
    });
    return {x0: Math.min.apply(null, xs), x1: Math.max.apply(null, xs), y0: Math.min.apply(null, ys), y1: Math.max.apply(null, ys)};
  }
  function shown(e, svg) {
    for (; e && e !== svg; e = e.parentNode) if (e.style && e.style.display === 'none') return false;
    return true;
  }
  function measure(name, svg) {
    var w = Number(svg.getAttribute('width')), h = Number(svg.getAttribute('height'));
    var texts = [], small = [], smallest = min, overlaps = [];
    svg.querySelectorAll('text').forEach(function (t) {
      if (!shown(t, svg) || t.textContent.trim() === '') return;
      var size = parseFloat(getComputedStyle(t).fontSize);
      if (size < min) { small.push('"' + t.textContent + '" ' + size + 'px'); smallest = Math.min(smallest, size); }
      var b = box(t);
      b.text = t.textContent;
      if (b.x0 < -0.5 || b.y0 < -0.5 || b.x1 > w + 0.5 || b.y1 > h + 0.5)
        out.push(name + ': outside the ' + w + 'x' + h + ' picture: "' + b.text + '" at ' + Math.round(b.x0) + ',' + Math.round(b.y0));
      texts.push(b);
      ++checked;
    });
    for (var i = 0; i < texts.length; ++i)
      for (var j = i + 1; j < texts.length; ++j) {
        var a = texts[i], b = texts[j];
        var ix = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0), iy = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
        if (ix > 1 && iy > 1)
          overlaps.push('"' + a.text + '" overlaps "' + b.text + '" at ' + Math.round(Math.max(a.x0, b.x0)) + ',' +
                        Math.round(Math.max(a.y0, b.y0)));
      }
    if (small.length)
      out.push(name + ': ' + small.length + ' of ' + texts.length + ' texts below ' + min + 'px (smallest ' + smallest +
               'px), e.g. ' + small.slice(0, 3).join(', '));
    if (overlaps.length)
      out.push(name + ': ' + overlaps.length + ' overlapping pairs of texts: ' + overlaps.slice(0, 8).join('; ') +
               (overlaps.length > 8 ? '; ...' : ''));
  }
  document.querySelectorAll('div[data-name]').forEach(function (d) {
    var svg = d.querySelector('svg'), name = d.getAttribute('data-name');
    var groups = svg.querySelectorAll('[data-step]');
    if (!d.hasAttribute('data-steps') || groups.length === 0) { measure(name, svg); return; }
    // The page's script marks the current round's elements .now (bold labels): measure
    // every label as the widest it is shown.
    svg.querySelectorAll('[data-round]').forEach(function (e) { e.classList.add('now'); });
    var steps = {};
    groups.forEach(function (g) { steps[g.getAttribute('data-step')] = true; });
    Object.keys(steps).forEach(function (s) {
      groups.forEach(function (g) { g.style.display = g.getAttribute('data-step') === s ? '' : 'none'; });
      measure(name + ' (HTML, step ' + s + ')', svg);
    });
  });
  document.getElementById('report').textContent = out.join('\n');
  document.body.setAttribute('data-checked', String(checked));
})();
)";

std::string find_chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (std::filesystem::exists(path)) return path;
  return {};
}

std::string unescape_html(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&') {
      const auto semi = s.find(';', i);
      const std::string_view e = s.substr(i + 1, semi - i - 1);
      const char* rep = e == "amp" ? "&" : e == "lt" ? "<" : e == "gt" ? ">" : e == "quot" ? "\"" : nullptr;
      if (rep != nullptr && semi != std::string_view::npos) {
        out += rep;
        i = semi;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// Loads `html` in headless Chromium and returns the DOM after its scripts ran.
std::string chromium_dom(const std::string& chromium, const std::string& html) {
  namespace fs = std::filesystem;
  std::string dir_template = (fs::temp_directory_path() / "ranklab_draw_chromium_XXXXXX").string();
  if (mkdtemp(dir_template.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  const fs::path dir = dir_template;
  const fs::path page = dir / "page.html", dom = dir / "dom.html", log = dir / "chromium.log";
  std::ofstream(page, std::ios::binary) << html;
  fs::create_directory(dir / "profile");
  const std::string command = fmt::format(
      "timeout 120 '{}' --headless --no-sandbox --disable-gpu --disable-background-networking "
      "--disable-component-update --disable-sync --no-first-run --user-data-dir='{}' --dump-dom 'file://{}' >'{}' "
      "2>'{}'",
      chromium, (dir / "profile").string(), page.string(), dom.string(), log.string());
  const int rc = std::system(command.c_str());
  std::ifstream in(dom, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ifstream log_in(log, std::ios::binary);
  const std::string log_text((std::istreambuf_iterator<char>(log_in)), std::istreambuf_iterator<char>());
  fs::remove_all(dir);
  if (rc != 0 || text.empty())
    throw std::runtime_error(fmt::format("chromium failed (status {}): {}", rc, log_text.substr(0, 2000)));
  return text;
}

}  // namespace

TEST_CASE("in headless Chromium: no two texts of a drawing overlap, none is below 14 px or outside the picture") {
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    MESSAGE("skipped: chromium is not installed (apt-get install chromium): the drawings' text is not measured");
    return;
  }
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"></head><body data-min-font=\"{}\">\n",
      draw_min_font);
  for (const browser_figure& f : browser_figures())
    for (const bool stepping : {false, true})
      html += fmt::format("<div data-name=\"{}{}\"{}>\n{}</div>\n", f.name, stepping ? " (HTML)" : "",
                          stepping ? " data-steps=\"1\"" : "", browser_svg(f, stepping));
  // And every other one-ported algorithm at p = 8, as a static SVG.
  int others = 0;
  for (const algorithm* a : registry::all()) {
    if (!a->one_ported) continue;
    const browser_figure f{fmt::format("{} {} p=8", name(a->coll), a->name), a->coll, std::string(a->name), 8};
    const call cl = draw_call(a->coll, 8, 0);
    if (!meets_preconditions(*a, args_of(cl))) continue;
    const bool listed = std::any_of(browser_figures().begin(), browser_figures().end(), [&](const browser_figure& g) {
      return g.coll == f.coll && g.algo == f.algo && g.p == 8;
    });
    if (listed) continue;
    coll_args args = args_of(has_vector_counts(a->coll) ? cl
                                                        : make_call(a->coll, 8, a->coll == collective::barrier ? 0 : 8,
                                                                    0, datatype_of<std::int32_t>()));
    html +=
        fmt::format("<div data-name=\"{}\">\n{}</div>\n", f.name, draw::figure_svg(draw::make_figure(*a, args), false));
    ++others;
  }
  CHECK(others > 20);
  html += fmt::format("<pre id=\"report\"></pre>\n<script>{}</script>\n</body></html>\n", measure_script);
  const std::string dom = chromium_dom(chromium, html);
  const auto checked = dom.find("data-checked=\"");
  REQUIRE_MESSAGE(checked != std::string::npos, "the measuring script did not run");
  CHECK(std::stoi(dom.substr(checked + 14)) > 1000);
  const auto begin = dom.find("<pre id=\"report\">"), end = dom.find("</pre>", begin);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::istringstream report(unescape_html(dom.substr(begin + 17, end - begin - 17)));
  std::vector<std::string> problems;
  for (std::string line; std::getline(report, line);)
    if (!line.empty()) problems.push_back(line);
  for (const std::string& p : problems) MESSAGE(p);
  CHECK_MESSAGE(problems.empty(), problems.size() << " problems with the drawings' text (listed above)");
}

TEST_CASE("the caption says how many ranks send in each round, from the schedules") {
  struct drawn {
    collective coll;
    const char* algo;
    int p, blocks;
  };
  for (const drawn d : {drawn{collective::bcast, "circulant", 7, 4}, drawn{collective::bcast, "binomial", 7, 0},
                        drawn{collective::allreduce, "ring", 8, 0}, drawn{collective::allreduce, "circulant", 7, 0}}) {
    const std::string algo = d.algo;
    CAPTURE(algo);
    CAPTURE(d.p);
    const algorithm* a = registry::find(d.coll, d.algo);
    REQUIRE(a != nullptr);
    coll_args args = args_of(make_call(d.coll, d.p, 8, 0, datatype_of<std::int32_t>()));
    args.params.blocks = d.blocks;
    const schedule_set schedules = build_all(*a, args);
    std::size_t rounds = 0;
    for (const schedule& s : schedules) rounds = std::max(rounds, s.rounds().size());
    std::vector<int> senders(rounds);
    for (const schedule& s : schedules)
      for (std::size_t i = 0; i < s.rounds().size(); ++i) senders[i] += s.rounds()[i].send_to != no_rank;
    std::vector<std::string> texts;
    const node svg = parse_xml(draw::figure_svg(draw::make_figure(*a, args), false));
    for (const node* t : find_all(svg, "text", "caption")) texts.push_back(t->text);
    const std::string caption = fmt::format("{}", fmt::join(texts, "\n"));
    CAPTURE(caption);
    const bool all = std::all_of(senders.begin(), senders.end(), [&](int n) { return n == d.p; });
    if (all) {
      CHECK(caption.find("every rank sends a message in every round") != std::string::npos);
    } else {
      CHECK(caption.find(fmt::format("ranks sending in rounds 0..{}: {} (of p = {})", rounds - 1,
                                     fmt::join(senders, " "), d.p)) != std::string::npos);
      CHECK(caption.find("every rank sends") == std::string::npos);
    }
  }
  // The circulant broadcast at p = 7 with 4 blocks: the root alone in round 0.
  const algorithm* circulant = registry::find(collective::bcast, "circulant");
  coll_args args = args_of(make_call(collective::bcast, 7, 8, 0, datatype_of<std::int32_t>()));
  args.params.blocks = 4;
  CHECK(draw::make_figure(*circulant, args).round_messages.front() == 1);
}

TEST_CASE("left to the library, a drawing shows a one-ported algorithm with messages, and says why") {
  const call cl = make_call(collective::allreduce, 8, 8, 0, datatype_of<std::int32_t>());
  const coll_args args = args_of(cl);
  const algorithm* slots = registry::find(collective::allreduce, "slots");
  REQUIRE(slots != nullptr);
  CHECK_FALSE(draw::has_messages(*slots, args));
  const draw::drawn_choice c = draw::drawable_algorithm(*slots, "the table", args, cl.type.size);
  REQUIRE(c.drawn != nullptr);
  CHECK(c.library == slots);
  CHECK(c.drawn->one_ported);
  CHECK(draw::has_messages(*c.drawn, args));
  CHECK(c.why.find("'slots'") != std::string::npos);
  CHECK(c.why.find(std::string(c.drawn->name)) != std::string::npos);
  // A one-ported pick with messages is drawn as it is, with nothing to explain.
  const algorithm* ring = registry::find(collective::allreduce, "ring");
  REQUIRE(ring != nullptr);
  const draw::drawn_choice same = draw::drawable_algorithm(*ring, "requested", args, cl.type.size);
  CHECK(same.drawn == ring);
  CHECK(same.why.empty());
  // p = 1: nothing sends; the library's pick stays, and the reason says so.
  const coll_args one = args_of(make_call(collective::allreduce, 1, 8, 0, datatype_of<std::int32_t>()));
  const draw::drawn_choice alone = draw::drawable_algorithm(*slots, "the table", one, cl.type.size);
  CHECK(alone.drawn == slots);
  CHECK(alone.why.find("no one-ported algorithm sends") != std::string::npos);
}
