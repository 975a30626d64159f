// The check of a drawing's file name on the command line (`draw --out`, `demo --draw`).
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "draw/output.hpp"

namespace ranklab::tools::draw {

inline CLI::Validator drawing_path() {
  return CLI::Validator(
      [](const std::string& path) {
        return format_of(path) ? std::string() : std::string("must end in .svg or .html");
      },
      "FILE.svg|FILE.html");
}

}  // namespace ranklab::tools::draw
