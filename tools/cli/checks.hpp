// Validation shared by every subcommand: option values are checked before anything runs,
// and a misuse is a CLI::ValidationError whose message names the option, the value and
// what is valid ("--count -5: must be >= 0"). main() prints it and exits with
// usage_exit_code. Also the output flags every subcommand has (-q/--quiet, --json [FILE]).
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "ranklab/collective.hpp"
#include "ranklab/datatype.hpp"

namespace ranklab::tools {

// The exit status of every misuse of the command line (CLI11's own codes differ per error).
inline constexpr int usage_exit_code = 2;
// The most rank threads a subcommand starts (run, demo, bench, tune): beyond that a team is
// mostly thread-switching, and each rank thread reserves its own stack.
inline constexpr std::int64_t max_ranks = 4096;
// All ranks' buffers of one checked call (inputs, outputs and the expected results) must
// fit in this, so that an absurd count fails with a message instead of bad_alloc.
inline constexpr std::uint64_t max_buffer_bytes = std::uint64_t{4} << 30;
inline constexpr std::int64_t no_upper_bound = std::numeric_limits<std::int64_t>::max();

// Throws the usage error `message` (a CLI::ValidationError).
[[noreturn]] void usage_failure(const std::string& message);

// "--count -5: must be >= 0", "-p 9000: must be in 1..4096 (why)" unless lo <= value <= hi.
void check_range(std::string_view option, std::int64_t value, std::int64_t lo, std::int64_t hi = no_upper_bound,
                 std::string_view why = {});

// "--time -1: must be > 0 and <= 60": lo is excluded unless lo_inclusive (then ">= lo").
void check_real_range(std::string_view option, double value, double lo, double hi, std::string_view why = {},
                      bool lo_inclusive = false);

// " (did you mean bcast?)" when a name is close to `word` (edit distance), else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& names);

// Every collective's name, in enum order.
std::vector<std::string> collective_names();
// A collective by name; otherwise a usage error listing the valid names.
collective parse_collective(std::string_view option, std::string_view text);
// "C[,C...]" or "all" (every collective with a registered algorithm); no duplicates.
std::vector<collective> parse_collective_list(std::string_view option, std::string_view text);
// `algo` must be `wildcard` ("auto", or "all" where every algorithm is meant) or a registered
// algorithm of c; otherwise a usage error listing them.
void check_algorithm(std::string_view option, collective c, std::string_view algo, std::string_view wildcard = "auto");

// "A..B" or one "P" (then A = B = P) with 1 <= A <= B <= max_p; otherwise a usage error.
struct p_range {
  std::int64_t first = 1, last = 1;
};
p_range parse_p_range(std::string_view option, const std::string& text, std::int64_t max_p);

datatype parse_type(std::string_view option, std::string_view text);
op parse_op(std::string_view option, std::string_view text);
// Whether the library has a kernel for (o, t) (ranklab::kernel_for decides); if not, a usage
// error such as "--op band does not apply to --type float32 (bitwise operators need an
// integer type)".
void check_op_applies(const op& o, const datatype& t);

// Sizes ("8,1Ki,64Ki,1Mi" or "lo:hi[:factor]", cli/option_parse.hpp), each at most max_bytes
// (`why` says where that bound comes from).
std::vector<std::uint64_t> parse_sizes(std::string_view option, std::string_view text, std::uint64_t max_bytes,
                                       std::string_view why = {});

// A CLI11 check for output files: the directory must exist, so that a run of minutes does
// not fail only when it writes its results ("-" and "" mean stdout).
CLI::Validator writable_path();

// Adds to every integer option of every subcommand a check of the text as typed: CLI11
// would silently saturate 99999999999999999999 to 2^63 - 1 and report that number instead.
void check_integer_texts(CLI::App& app);

// -q/--quiet and --json [FILE]: the same in every subcommand.
struct output_options {
  bool quiet = false;     // nothing on stderr but errors
  bool json = false;      // --json given
  std::string json_file;  // empty or "-": JSON on stdout instead of the text
  bool json_to_stdout() const { return json && (json_file.empty() || json_file == "-"); }
  bool text() const { return !json_to_stdout(); }  // whether to print the text output
};
void add_output_options(CLI::App* cmd, output_options& o, const std::string& json_contents);
// Writes `text` (one JSON document) where --json said; a file that cannot be written is an
// error naming it.
void write_json(const output_options& o, const std::string& text);

}  // namespace ranklab::tools
