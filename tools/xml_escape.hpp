// Text and attribute values in the SVG and HTML the tools write (bench plots, drawings).
#pragma once
#include <string>
#include <string_view>

namespace ranklab::tools {

inline std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

}  // namespace ranklab::tools
