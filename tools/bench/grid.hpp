// A table as a grid of strings, rendered aligned for the terminal or as Markdown: the one
// table form of `ranklab bench` (report.cpp, for the thread backend, and mpi_report.cpp).
// Header-only, so that what links report.cpp alone (test_bench_output) needs nothing more.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace ranklab::tools::bench {

struct grid {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::set<std::size_t> left;  // columns of names, aligned left
};

inline std::string render_text(const grid& g) {
  std::vector<std::size_t> width(g.header.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  };
  measure(g.header);
  for (const auto& row : g.rows) measure(row);
  auto line = [&](const std::vector<std::string>& row, bool header) {
    std::string s = header ? "#" : " ";
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string sep = i == 0 ? " " : "  ";
      s += g.left.count(i) ? fmt::format("{}{:<{}}", sep, row[i], width[i])
                           : fmt::format("{}{:>{}}", sep, row[i], width[i]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = "# " + g.title + "\n" + line(g.header, true);
  for (const auto& row : g.rows) out += line(row, false);
  return out;
}

inline std::string render_markdown(const grid& g) {
  std::string out = "**" + g.title + "**\n\n|";
  for (const auto& h : g.header) out += " " + h + " |";
  out += "\n|";
  for (std::size_t i = 0; i < g.header.size(); ++i) out += g.left.count(i) ? " --- |" : " ---: |";
  out += "\n";
  for (const auto& row : g.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + cell + " |";
    out += "\n";
  }
  return out + "\n";
}

}  // namespace ranklab::tools::bench
