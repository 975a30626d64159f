// Validation shared by every subcommand (see checks.hpp).
#include "cli/checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "cli/option_parse.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::tools {

namespace {

// Levenshtein distance: small names only, so the plain O(|a| |b|) table is fine.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The library's names of builtin types and operators (datatype.hpp), for messages.
std::vector<std::string> type_names() {
  std::vector<std::string> out;
  for (int k = 0; k < static_cast<int>(type_kind::bytes); ++k) out.emplace_back(name(static_cast<type_kind>(k)));
  return out;
}
std::vector<std::string> op_names() {
  std::vector<std::string> out;
  for (int k = 0; k < static_cast<int>(op_kind::user); ++k) out.emplace_back(name(static_cast<op_kind>(k)));
  return out;
}

}  // namespace

void usage_failure(const std::string& message) { throw CLI::ValidationError(message); }

namespace {

// "--type float16: unknown type (did you mean float32?); valid: int8, ...".
[[noreturn]] void unknown_name(std::string_view option, std::string_view text, std::string_view what,
                               const std::vector<std::string>& names) {
  usage_failure(fmt::format("{} {}: unknown {}{}; valid: {}", option, text, what, did_you_mean(text, names),
                            fmt::join(names, ", ")));
}

}  // namespace

void check_range(std::string_view option, std::int64_t value, std::int64_t lo, std::int64_t hi, std::string_view why) {
  if (value >= lo && value <= hi) return;
  const std::string range = hi == no_upper_bound ? fmt::format(">= {}", lo) : fmt::format("in {}..{}", lo, hi);
  usage_failure(fmt::format("{} {}: must be {}{}", option, value, range, why.empty() ? "" : fmt::format(" ({})", why)));
}

void check_real_range(std::string_view option, double value, double lo, double hi, std::string_view why,
                      bool lo_inclusive) {
  if ((lo_inclusive ? value >= lo : value > lo) && value <= hi) return;
  usage_failure(fmt::format("{} {}: must be {} {} and <= {}{}", option, value, lo_inclusive ? ">=" : ">", lo, hi,
                            why.empty() ? "" : fmt::format(" ({})", why)));
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& names) {
  // The fewest edits; on a tie, a name containing the word ("xor" -> bxor, not bor).
  auto rank = [&](const std::string& n) {
    return std::pair{edit_distance(word, n), n.find(word) == std::string::npos};
  };
  const std::string* best = nullptr;
  for (const std::string& n : names)
    if (best == nullptr || rank(n) < rank(*best)) best = &n;
  // Up to a third of the word wrong (at least one edit): "bcst" -> bcast, "xyz" -> nothing.
  if (best == nullptr || rank(*best).first > std::max<std::size_t>(1, word.size() / 3)) return "";
  return fmt::format(" (did you mean {}?)", *best);
}

std::vector<std::string> collective_names() {
  std::vector<std::string> out;
  for (int i = 0; i < collective_count; ++i) out.emplace_back(name(static_cast<collective>(i)));
  return out;
}

collective parse_collective(std::string_view option, std::string_view text) {
  if (const auto c = collective_from_name(text)) return *c;
  unknown_name(option, text, "collective", collective_names());
}

std::vector<collective> parse_collective_list(std::string_view option, std::string_view text) {
  std::vector<collective> out;
  for (const std::string& item : split_list(text)) {
    if (item == "all") {
      for (int i = 0; i < collective_count; ++i)
        if (std::find(out.begin(), out.end(), static_cast<collective>(i)) == out.end())
          out.push_back(static_cast<collective>(i));
      continue;
    }
    const collective c = parse_collective(option, item);
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  if (out.empty()) usage_failure(fmt::format("{}: no collective given (names, comma separated, or all)", option));
  return out;
}

void check_algorithm(std::string_view option, collective c, std::string_view algo, std::string_view wildcard) {
  if (algo == wildcard || registry::find(c, algo) != nullptr) return;
  std::vector<std::string> names{std::string(wildcard)};
  for (const algorithm* a : registry::for_collective(c)) names.emplace_back(a->name);
  usage_failure(fmt::format("{} {}: not an algorithm of {}{}; valid: {}", option, algo, name(c),
                            did_you_mean(algo, names), fmt::join(names, ", ")));
}

p_range parse_p_range(std::string_view option, const std::string& text, std::int64_t max_p) {
  const auto dots = text.find("..");
  auto read = [](std::string_view s, std::int64_t& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && ec == std::errc{} && end == s.data() + s.size();
  };
  p_range r;
  const bool ok = dots == std::string::npos ? read(text, r.first) && (r.last = r.first, true)
                                            : read(std::string_view(text).substr(0, dots), r.first) &&
                                                  read(std::string_view(text).substr(dots + 2), r.last);
  if (!ok || r.first < 1 || r.last < r.first || r.last > max_p)
    usage_failure(fmt::format("{} {}: must be A..B (or one P) with 1 <= A <= B <= {}", option, text, max_p));
  return r;
}

datatype parse_type(std::string_view option, std::string_view text) {
  try {
    return datatype_from_name(text);
  } catch (const usage_error&) {
    unknown_name(option, text, "type", type_names());
  }
}

op parse_op(std::string_view option, std::string_view text) {
  try {
    return op_from_name(text);
  } catch (const usage_error&) {
    unknown_name(option, text, "operator", op_names());
  }
}

void check_op_applies(const op& o, const datatype& t) {
  try {
    (void)kernel_for(o, t);  // the library's rule, the same the executors apply
  } catch (const usage_error&) {
    const bool bitwise = o.kind == op_kind::band || o.kind == op_kind::bor || o.kind == op_kind::bxor;
    usage_failure(fmt::format("--op {} does not apply to --type {}{}", name(o.kind), name(t.kind),
                              bitwise ? " (bitwise operators need an integer type)" : ""));
  }
}

std::vector<std::uint64_t> parse_sizes(std::string_view option, std::string_view text, std::uint64_t max_bytes,
                                       std::string_view why) {
  std::vector<std::uint64_t> sizes;
  try {
    sizes = parse_size_list(text);
  } catch (const std::invalid_argument& e) {
    usage_failure(fmt::format("{} {}: {}", option, text, e.what()));
  }
  for (std::uint64_t s : sizes)
    if (s > max_bytes)
      usage_failure(fmt::format("{} {}: every size must be in 0..{} bytes{}", option, size_label(s),
                                size_label(max_bytes), why.empty() ? "" : fmt::format(" ({})", why)));
  return sizes;
}

CLI::Validator writable_path() {
  return CLI::Validator(
      [](const std::string& path) -> std::string {
        if (path.empty() || path == "-") return {};
        const std::filesystem::path dir = std::filesystem::path(path).parent_path();
        if (std::filesystem::is_directory(path)) return "cannot write " + path + ": a directory, not a file";
        if (!dir.empty() && !std::filesystem::is_directory(dir))
          return "cannot write " + path + ": directory " + dir.string() + " does not exist";
        return {};
      },
      "");  // no description: the option's type name already says FILE
}

void check_integer_texts(CLI::App& app) {
  const CLI::Validator integer(
      [](const std::string& text) -> std::string {
        std::int64_t value = 0;
        if (std::from_chars(text.data(), text.data() + text.size(), value).ec == std::errc::result_out_of_range)
          return text + " is out of range for a 64-bit integer";
        return {};  // anything else is CLI11's to convert or reject
      },
      "");
  for (CLI::App* sub : app.get_subcommands({}))
    for (CLI::Option* o : sub->get_options())
      if (o->get_type_name() == "INT") o->check(integer);
}

void add_output_options(CLI::App* cmd, output_options& o, const std::string& json_contents) {
  cmd->add_flag("-q,--quiet", o.quiet, "No progress or notes on stderr (errors still)");
  cmd->add_option_function<std::string>(
         "--json", [&o](const std::string& file) { o.json = true, o.json_file = file; },
         "JSON (" + json_contents +
             ") to FILE, in addition to the text on stdout; without FILE (or -) "
             "on stdout instead of the text")
      ->expected(0, 1)
      ->check(writable_path())
      ->type_name("[FILE]");
}

void write_json(const output_options& o, const std::string& text) {
  if (o.json_to_stdout()) {
    std::cout << text << "\n" << std::flush;
    return;
  }
  std::ofstream out(o.json_file);
  out << text << "\n";
  if (!out.flush()) throw std::runtime_error("--json " + o.json_file + ": cannot write the file");
}

}  // namespace ranklab::tools
