// Hand-written SVG of `ranklab bench` results (see plot.hpp).
#include "bench/plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "cli/option_parse.hpp"
#include "xml_escape.hpp"

namespace ranklab::tools::bench {

double log_scale::operator()(double v) const {
  const double a = std::log(lo), b = std::log(hi);
  if (b <= a) return 0.5 * (px_lo + px_hi);
  return px_lo + (std::log(v) - a) / (b - a) * (px_hi - px_lo);
}

std::pair<double, double> decade_bounds(double lo, double hi) {
  if (!(lo > 0)) lo = 1e-3;
  if (!(hi >= lo)) hi = lo;
  double a = std::pow(10.0, std::floor(std::log10(lo) + 1e-9));
  double b = std::pow(10.0, std::ceil(std::log10(hi) - 1e-9));
  if (b <= a) b = a * 10;
  return {a, b};
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  if (!(lo > 0) || !(hi >= lo)) return out;
  const bool fine = std::log10(hi / lo) <= 2.0 + 1e-9;
  for (int k = static_cast<int>(std::floor(std::log10(lo))) - 1; k <= static_cast<int>(std::ceil(std::log10(hi)));
       ++k) {
    const double d = std::pow(10.0, k);
    for (double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !fine) continue;
      const double t = m * d;
      if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) out.push_back(t);
    }
  }
  return out;
}

std::vector<std::uint64_t> size_ticks(std::uint64_t lo, std::uint64_t hi, int max_ticks) {
  std::vector<std::uint64_t> all;
  for (int k = 0; k < 63; ++k) {
    const std::uint64_t v = std::uint64_t{1} << k;
    if (v >= lo && v <= hi) all.push_back(v);
  }
  if (all.empty() || max_ticks < 1) return all;
  std::size_t stride = 1;
  while ((all.size() + stride - 1) / stride > static_cast<std::size_t>(max_ticks)) ++stride;
  // Every stride-th power from the smallest, so that the first size is labelled.
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < all.size(); i += stride) out.push_back(all[i]);
  return out;
}

namespace {

std::string series_key(const result_row& row) { return row.impl == "ranklab" ? row.algo : row.impl; }

std::string series_label(const std::string& key) {
  if (key == "openmpi") return "Open MPI";
  if (key == "mpich") return "MPICH";
  if (key == "tbb") return "oneTBB";
  if (key == "openmp") return "OpenMP";
  if (key == "memcpy") return "memcpy (1 thread)";
  if (key == "memcpy2") return "memcpy (2 threads)";
  if (key == "auto") return "ranklab auto";
  return key;
}

struct style {
  std::string color;
  double width = 1.6;
  std::string dash;  // stroke-dasharray, empty: solid
};

style style_for(const std::string& key, std::size_t index) {
  static const char* palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                  "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#ad494a",
                                  "#637939", "#843c39", "#5254a3", "#6b6ecf"};
  if (key == "auto") return {"#000000", 2.8, ""};
  if (key == "openmpi") return {"#c00000", 2.2, "7,4"};
  if (key == "mpich") return {"#006000", 2.2, "7,4"};
  if (key == "tbb") return {"#8000a0", 2.2, "2,3"};
  if (key == "openmp") return {"#d08000", 2.2, "2,3"};
  if (key == "memcpy") return {"#a0a0a0", 1.6, "4,3"};
  if (key == "memcpy2") return {"#606060", 1.6, "4,3"};
  return {palette[index % std::size(palette)], 1.6, ""};
}

std::string size_tick_label(std::uint64_t v) { return size_label(v); }

std::string usec_tick_label(double v) {
  if (v >= 1e6) return fmt::format("{:g}s", v / 1e6);
  if (v >= 1e3) return fmt::format("{:g}ms", v / 1e3);
  return fmt::format("{:g}", v);
}

}  // namespace

std::string render_svg(const bench_results& r) {
  // Series in order of first appearance (ranklab algorithms first, then the others).
  std::vector<std::string> keys;
  for (int pass = 0; pass < 2; ++pass)
    for (const result_row& row : r.rows) {
      if ((row.impl == "ranklab") != (pass == 0)) continue;
      const std::string k = series_key(row);
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
  std::map<std::string, style> styles;
  std::size_t ranklab_index = 0;
  for (const std::string& k : keys) {
    const bool plain =
        k != "auto" && k != "openmpi" && k != "mpich" && k != "tbb" && k != "openmp" && k != "memcpy" && k != "memcpy2";
    styles[k] = style_for(k, plain ? ranklab_index++ : 0);
  }

  // Panels: (coll, p) with at least one plottable point (bytes > 0, a time).
  struct panel {
    std::string coll;
    int p;
  };
  std::vector<panel> panels;
  for (const result_row& row : r.rows) {
    if (row.bytes == 0 || row.status != "ok" || !row.usec_median) continue;
    bool seen = false;
    for (const panel& q : panels) seen = seen || (q.coll == row.coll && q.p == row.p);
    if (!seen) panels.push_back({row.coll, row.p});
  }

  const int pw = 470, ph = 330;                  // panel size
  const int ml = 62, mr = 16, mt = 30, mb = 46;  // margins inside a panel
  const int ncol = std::max(1, std::min(3, static_cast<int>(panels.size())));
  const int nrow = std::max(1, static_cast<int>((panels.size() + ncol - 1) / ncol));
  const int legend_per_row = std::max(1, ncol * pw / 170);
  const int legend_rows = static_cast<int>((keys.size() + legend_per_row - 1) / legend_per_row);
  const int top = 44 + 20 * legend_rows;
  const int width = ncol * pw + 20, height = top + nrow * ph + 16;

  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height, width, height);
  s += fmt::format(
      "<text x=\"{}\" y=\"22\" font-size=\"16\" font-weight=\"bold\">ranklab bench: time per call "
      "against bytes per rank (log-log, median of {} batches)</text>\n",
      10, r.request.batches);
  // Legend.
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const int lx = 10 + static_cast<int>(i % legend_per_row) * 170;
    const int ly = 40 + static_cast<int>(i / legend_per_row) * 20;
    const style& st = styles[keys[i]];
    s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n", lx, ly,
                     lx + 28, ly, st.color, st.width,
                     st.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", st.dash));
    s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2.6\" fill=\"{}\"/>\n", lx + 14, ly, st.color);
    s += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", lx + 34, ly + 4, xml_escape(series_label(keys[i])));
  }
  if (panels.empty())
    s += fmt::format("<text x=\"10\" y=\"{}\">nothing to plot (no timed sizes above 0 bytes)</text>\n", top + 20);

  for (std::size_t pi = 0; pi < panels.size(); ++pi) {
    const panel& pn = panels[pi];
    const int ox = 10 + static_cast<int>(pi % ncol) * pw, oy = top + static_cast<int>(pi / ncol) * ph;
    const int x0 = ox + ml, x1 = ox + pw - mr, y0 = oy + ph - mb, y1 = oy + mt;
    // Data of this panel per series.
    std::map<std::string, std::vector<std::pair<double, double>>> pts;
    double bmin = 0, bmax = 0, tmin = 0, tmax = 0;
    bool first = true;
    for (const result_row& row : r.rows) {
      if (row.coll != pn.coll || row.p != pn.p || row.bytes == 0 || row.status != "ok" || !row.usec_median) continue;
      const double b = static_cast<double>(row.bytes), t = std::max(*row.usec_median, 1e-3);
      pts[series_key(row)].emplace_back(b, t);
      if (first) bmin = bmax = b, tmin = tmax = t, first = false;
      bmin = std::min(bmin, b), bmax = std::max(bmax, b), tmin = std::min(tmin, t), tmax = std::max(tmax, t);
    }
    if (bmax <= bmin) bmin /= 2, bmax *= 2;
    const auto [ylo, yhi] = decade_bounds(tmin, tmax);
    const log_scale xs{bmin, bmax, static_cast<double>(x0), static_cast<double>(x1)};
    const log_scale ys{ylo, yhi, static_cast<double>(y0), static_cast<double>(y1)};

    s += fmt::format(
        "<g>\n<text x=\"{}\" y=\"{}\" font-size=\"13\" font-weight=\"bold\" text-anchor=\"middle\">{}, p = {}</text>\n",
        (x0 + x1) / 2, oy + 18, xml_escape(pn.coll), pn.p);
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", x0, y1,
                     x1 - x0, y0 - y1);
    for (std::uint64_t t :
         size_ticks(static_cast<std::uint64_t>(std::ceil(bmin)), static_cast<std::uint64_t>(std::floor(bmax)), 7)) {
      const double x = xs(static_cast<double>(t));
      s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n", x, y1, y0);
      s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#333\"/>\n", x, y0, y0 + 4);
      s +=
          fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, y0 + 17, size_tick_label(t));
    }
    for (double t : log_ticks(ylo, yhi)) {
      const double y = ys(t);
      s += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e4e4e4\"/>\n", x0, y, x1);
      s += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#333\"/>\n", x0 - 4, y, x0);
      s +=
          fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", x0 - 7, y + 4, usec_tick_label(t));
    }
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">bytes per rank</text>\n", (x0 + x1) / 2, y0 + 36);
    s += fmt::format(
        "<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" transform=\"rotate(-90 {0} {1})\">µs per call</text>\n",
        ox + 14, (y0 + y1) / 2);
    for (const std::string& k : keys) {
      auto it = pts.find(k);
      if (it == pts.end()) continue;
      auto& v = it->second;
      std::sort(v.begin(), v.end());
      const style& st = styles[k];
      std::string path;
      for (const auto& [b, t] : v) path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", xs(b), ys(t));
      s += fmt::format(
          "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{} points=\"{}\"><title>{}</title></polyline>\n",
          st.color, st.width, st.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", st.dash), path,
          xml_escape(series_label(k)));
      for (const auto& [b, t] : v)
        s += fmt::format(
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.6\" fill=\"{}\"><title>{} {}: {} us</title></circle>\n", xs(b),
            ys(t), st.color, xml_escape(series_label(k)), size_label(static_cast<std::uint64_t>(b)), format_usec(t));
    }
    s += "</g>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace ranklab::tools::bench
