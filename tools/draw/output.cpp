// Writing drawings to files (see output.hpp).
#include "draw/output.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

#include "draw/page.hpp"

namespace ranklab::tools::draw {

namespace {

// `make(stepping)` gives the SVG, laid out for stepping (HTML) or not.
template <class Make>
void write_drawing(const std::string& path, const std::string& title, Make make) {
  const auto format = format_of(path);
  if (!format) throw std::runtime_error(fmt::format("{}: not .svg or .html", path));
  std::ofstream out(path, std::ios::binary);
  if (*format == file_format::svg)
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" << make(false);
  else
    out << html_page(title, make(true));
  out.close();
  if (!out) throw std::runtime_error(fmt::format("could not write {}", path));
}

}  // namespace

std::optional<file_format> format_of(std::string_view path) {
  if (path.ends_with(".svg")) return file_format::svg;
  if (path.ends_with(".html") || path.ends_with(".htm")) return file_format::html;
  return std::nullopt;
}

void write_figure(const figure& fig, const std::string& path) {
  write_drawing(path, fig.title, [&](bool stepping) { return figure_svg(fig, stepping); });
}

void write_circulant(int p, const std::string& path) {
  write_drawing(path, fmt::format("Circulant graph, p = {}", p),
                [&](bool stepping) { return circulant_svg(p, stepping); });
}

}  // namespace ranklab::tools::draw
