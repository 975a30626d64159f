// Writing drawings to files: FILE.svg is a static picture (every round and data-flow step
// at once), FILE.html the same drawing stepping through the rounds.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "draw/figure.hpp"

namespace ranklab::tools::draw {

enum class file_format { svg, html };
// By the file name's extension; nullopt for anything but .svg and .html.
std::optional<file_format> format_of(std::string_view path);

// Throw std::runtime_error naming the file when it cannot be written.
void write_figure(const figure& fig, const std::string& path);
void write_circulant(int p, const std::string& path);

}  // namespace ranklab::tools::draw
