// A small SVG writer: elements with attributes, text escaped for XML, numbers printed
// short. Enough for the drawings of `ranklab draw`, which must parse as XML.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>

#include "xml_escape.hpp"

namespace ranklab::tools::draw {

struct attr {
  std::string_view name;
  std::string value;
};

using tools::xml_escape;
std::string num(double x);  // "12", "12.5"

// The drawings' text sizes in pixels (page.cpp's styles): nothing below text_px, which is
// legible when a drawing is projected.
inline constexpr double text_px = 14;
inline constexpr double title_px = 18;
// A generous estimate of the width of `s` in DejaVu Sans (or Arial) at `px` pixels, for
// layout: wide enough for digits and capitals (about 0.64 em each), bold a little wider.
double text_width(std::string_view s, double px = text_px, bool bold = false);

class svg_writer {
 public:
  void open(std::string_view tag, std::initializer_list<attr> attrs = {});
  void close(std::string_view tag);
  // <tag attrs>text</tag>, or <tag attrs/> when text is empty.
  void leaf(std::string_view tag, std::initializer_list<attr> attrs, std::string_view text = {});
  void raw(std::string_view markup) { out_ += markup; }
  const std::string& str() const { return out_; }

 private:
  void start(std::string_view tag, std::initializer_list<attr> attrs);
  std::string out_;
};

// A distinct, readable colour per rank (hue around the circle).
std::string rank_colour(int rank);

}  // namespace ranklab::tools::draw
