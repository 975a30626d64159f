// The command line of a benchmark program: `--name VALUE` options and flags in any order,
// lists comma separated, sizes and lists of p as `ranklab bench` reads them
// (tools/cli/option_parse.hpp), so that every program takes one syntax. A malformed value
// throws std::invalid_argument (or std::out_of_range); the programs answer with their usage.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "cli/option_parse.hpp"

class arguments {
 public:
  // `synopsis`: the options, as the usage line shows them after the program's name.
  arguments(int argc, char** argv, std::string_view synopsis) : argc_(argc), argv_(argv), synopsis_(synopsis) {}

  // Reads every argument with `read_one` (true: it knew the current argument and took its
  // value); false at an unknown argument or a malformed value (then answer with usage()).
  template <class ReadOne>
  bool parse(ReadOne&& read_one) {
    try {
      while (next())
        if (!read_one()) return false;
    } catch (const std::exception& e) {
      error_ = e.what();
      return false;
    }
    return true;
  }

  // Prints the usage (after what was wrong with a value) on stderr; returns 2, the exit
  // status of a misuse.
  int usage() const {
    if (!error_.empty()) fmt::print(stderr, "error: {}\n", error_);
    fmt::print(stderr, "usage: {} {}\n", argv_[0], synopsis_);
    return 2;
  }

  // Moves to the next argument; false after the last.
  bool next() { return ++at_ < argc_; }
  // Whether the current argument is one of `names`.
  bool is(std::initializer_list<std::string_view> names) const {
    for (std::string_view n : names)
      if (n == argv_[at_]) return true;
    return false;
  }
  // Whether the current argument is one of `names` with a value after it (read by value()).
  bool option(std::initializer_list<std::string_view> names) const { return at_ + 1 < argc_ && is(names); }

  std::string value() { return argv_[++at_]; }
  std::vector<std::string> list() { return ranklab::tools::split_list(value()); }
  std::vector<std::uint64_t> sizes() { return ranklab::tools::parse_size_list(value()); }
  std::vector<int> ints() { return ranklab::tools::parse_int_list(value()); }

 private:
  int argc_;
  char** argv_;
  std::string_view synopsis_;
  std::string error_;
  int at_ = 0;
};
