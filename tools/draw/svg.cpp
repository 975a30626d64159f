// The SVG writer (see svg.hpp).
#include "draw/svg.hpp"

#include <fmt/format.h>

#include <cmath>

namespace ranklab::tools::draw {

std::string num(double x) { return fmt::format("{:.5g}", x); }

double text_width(std::string_view s, double px, bool bold) {
  double ems = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xc0) == 0x80) continue;  // a UTF-8 continuation byte: counted with its lead
    if (c >= 0x80)
      ems += 0.85;  // ⊕, →, …: symbols are wide
    else if (c == ' ' || c == '[' || c == ']' || c == '(' || c == ')' || c == ',' || c == '.' || c == ':' || c == ';' ||
             c == '\'' || c == 'i' || c == 'j' || c == 'l' || c == 'r' || c == 'f' || c == 't' || c == '-')
      ems += 0.42;
    else if ((c >= 'A' && c <= 'Z') || c == 'm' || c == 'w')
      ems += 0.8;
    else if (c >= '0' && c <= '9')
      ems += 0.66;
    else
      ems += 0.62;
  }
  return ems * px * (bold ? 1.1 : 1.0);
}

void svg_writer::start(std::string_view tag, std::initializer_list<attr> attrs) {
  out_ += '<';
  out_ += tag;
  for (const attr& a : attrs) out_ += fmt::format(" {}=\"{}\"", a.name, xml_escape(a.value));
}

void svg_writer::open(std::string_view tag, std::initializer_list<attr> attrs) {
  start(tag, attrs);
  out_ += ">\n";
}

void svg_writer::close(std::string_view tag) { out_ += fmt::format("</{}>\n", tag); }

void svg_writer::leaf(std::string_view tag, std::initializer_list<attr> attrs, std::string_view text) {
  start(tag, attrs);
  if (text.empty()) {
    out_ += "/>\n";
    return;
  }
  out_ += fmt::format(">{}</{}>\n", xml_escape(text), tag);
}

std::string rank_colour(int rank) {
  // Golden-angle steps keep neighbouring ranks apart in hue for any p.
  const double hue = std::fmod(rank * 137.508, 360.0);
  return fmt::format("hsl({},65%,45%)", num(hue));
}

}  // namespace ranklab::tools::draw
