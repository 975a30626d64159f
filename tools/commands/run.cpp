// `ranklab run`: one collective with one algorithm on generated data, checked against the
// sequential reference; prints rounds, messages, bytes, verified and time per operation.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <bit>
#include <fstream>

#include "cli/checks.hpp"
#include "cli/option_parse.hpp"
#include "commands/commands.hpp"
#include "ranklab/call.hpp"
#include "ranklab/check.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/team.hpp"

namespace ranklab::tools {

namespace {

struct run_options {
  std::string coll;
  std::string algo = "auto";
  // Signed, so that a negative value is reported as such instead of wrapping around.
  std::int64_t p = 4;
  std::int64_t count = 1024;
  std::vector<std::int64_t> counts;
  std::string distribution = "regular";
  std::int64_t root = 0;
  std::string type = "int32";
  bool type_given = false;
  std::string op = "sum";
  std::string executor = "threads";
  std::int64_t iters = 1;
  std::int64_t blocks = 0, radix = 0, removed_steps = -1, segment = 0;
  bool explain = false;
  std::string trace_file;  // --trace: a Chrome trace of one more call
  output_options out;
};

constexpr std::int64_t max_iters = 1'000'000;
constexpr std::int64_t max_blocks = 1 << 20;
constexpr std::int64_t max_radix = 1 << 20;

// Counts for v-collectives when none are given: every rank `count` (regular), ranks with
// counts cycling 0, count/2, count, 2*count (irregular), or the root alone with p*count
// (degenerate: one rank has everything, the others nothing).
std::vector<std::uint64_t> generated_counts(const run_options& o, collective c, std::uint64_t count) {
  const auto p = static_cast<std::size_t>(o.p);
  auto per_rank = [&](std::size_t j) -> std::uint64_t {
    if (o.distribution == "irregular") {
      const std::uint64_t f[] = {0, count / 2, count, 2 * count};
      return f[j % 4];
    }
    if (o.distribution == "degenerate") return j == static_cast<std::size_t>(o.root) ? count * p : 0;
    return count;  // regular
  };
  std::vector<std::uint64_t> out;
  if (c == collective::alltoallv) {
    for (std::size_t i = 0; i < p; ++i)
      for (std::size_t j = 0; j < p; ++j) out.push_back(per_rank((i + j) % p));
  } else {
    for (std::size_t j = 0; j < p; ++j) out.push_back(per_rank(j));
  }
  return out;
}

// Sets the call's count (or, for v-collectives, the counts generated from it).
void set_count(const run_options& o, call& c, std::uint64_t count) {
  if (has_vector_counts(c.args.coll))
    c.args.counts = generated_counts(o, c.args.coll, count);
  else
    c.args.count = count;
}

// Bytes the check harness holds for the call: every rank's input, output and expected output.
std::uint64_t checked_bytes(const call& c) {
  std::uint64_t elements = 0;
  for (int r = 0; r < c.args.p; ++r) {
    const buffer_extent e = buffer_extents(c.args, r);
    elements += e.in + 2 * e.out;
  }
  return elements * c.type.size;
}

// Sets the count (or counts) of the call, bounded by the bytes the buffers may take.
void set_checked_counts(const run_options& o, call& c) {
  const collective coll = c.args.coll;
  const std::string budget = fmt::format("all ranks' buffers must fit in {}", size_label(max_buffer_bytes));
  if (o.counts.empty()) {
    // The bytes grow linearly with the count (generated v-counts too, for even counts), so
    // two elements give the bound.
    set_count(o, c, 2);
    const std::uint64_t per_element = checked_bytes(c) / 2;
    const auto max_count = static_cast<std::int64_t>(max_buffer_bytes / std::max<std::uint64_t>(per_element, 1));
    check_range("--count", o.count, 0, max_count,
                fmt::format("{} with -p {} and {}-byte elements: {}", o.coll, o.p, c.type.size, budget));
    set_count(o, c, static_cast<std::uint64_t>(o.count));
    return;
  }
  if (!has_vector_counts(coll))
    usage_failure(fmt::format("--counts: only for the v-collectives; {} takes --count", o.coll));
  const auto want = static_cast<std::size_t>(coll == collective::alltoallv ? o.p * o.p : o.p);
  if (o.counts.size() != want)
    usage_failure(fmt::format("--counts {}: {} entries; {} with -p {} needs {} ({})", fmt::join(o.counts, ","),
                              o.counts.size(), o.coll, o.p, want, coll == collective::alltoallv ? "p*p" : "p"));
  c.args.counts.clear();
  for (const std::int64_t n : o.counts) {
    check_range("--counts", n, 0);
    // An element is at least a byte: no larger entry fits, and the sums below cannot overflow.
    check_range("--counts", n, 0, static_cast<std::int64_t>(max_buffer_bytes), budget);
    c.args.counts.push_back(static_cast<std::uint64_t>(n));
  }
  if (const std::uint64_t bytes = checked_bytes(c); bytes > max_buffer_bytes)
    usage_failure(fmt::format("--counts {}: {} with -p {} needs {} bytes of buffers; {}", fmt::join(o.counts, ","),
                              o.coll, o.p, bytes, budget));
}

// The call the options describe, every value checked first: a misuse is a usage error
// naming the option and the valid range before anything is allocated or run.
call checked_call(const run_options& o) {
  const collective coll = parse_collective("--coll", o.coll);
  check_algorithm("--algo", coll, o.algo);
  if (o.executor != "threads" && o.executor != "sequential")
    usage_failure("--executor " + o.executor + ": must be threads or sequential");
  if (o.distribution != "regular" && o.distribution != "irregular" && o.distribution != "degenerate")
    usage_failure("--distribution " + o.distribution + ": must be regular, irregular or degenerate");
  check_range("-p", o.p, 1, max_ranks, "ranks are threads");
  check_range("--root", o.root, 0, o.p - 1, fmt::format("a rank of -p {}", o.p));
  check_range("--iters", o.iters, 1, max_iters);
  check_range("--count", o.count, 0);
  check_range("--blocks", o.blocks, 0, max_blocks, "0: the cost model chooses");
  if (o.radix != 0) check_range("--radix", o.radix, 2, max_radix, "or 0: the algorithm's default");
  const int levels = std::bit_width(static_cast<std::uint64_t>(o.p - 1));  // ceil(log2 p)
  if (o.removed_steps != -1)
    check_range("--removed-steps", o.removed_steps, 0, levels, "ceil(log2 p); or -1: the cost model chooses");
  check_range("--segment", o.segment, 0, no_upper_bound, "0: the algorithm chooses");

  datatype type;
  op reduction;
  if (o.op == "matmul2x2") {  // the non-commutative test operator on 16-byte elements
    if (o.type_given)
      usage_failure("--op matmul2x2 multiplies 2x2 matrices of uint32 (its own type): leave out --type");
    type = datatype_of<matrix2x2>();
    reduction = matrix2x2_product();
  } else {
    type = parse_type("--type", o.type);
    reduction = parse_op("--op", o.op);
    if (is_reduction(coll)) check_op_applies(reduction, type);
  }
  const algo_params params{static_cast<int>(o.blocks), static_cast<int>(o.radix), static_cast<int>(o.removed_steps),
                           static_cast<std::uint64_t>(o.segment)};
  // The count (or the v-collective's counts) follows, bounded by the buffers' budget.
  call c = make_call(coll, static_cast<int>(o.p), 0, static_cast<int>(o.root), type, reduction, algo{o.algo, params});
  set_checked_counts(o, c);
  if (o.algo != "auto") {  // the algorithm's preconditions (power-of-two p, commutative op)
    try {
      check_preconditions(*registry::find(coll, o.algo), c.args);
    } catch (const usage_error& e) {
      usage_failure("--algo " + o.algo + ": " + e.cause());
    }
  }
  return c;
}

// One more call on a team that records every round, written in the Chrome trace-event
// format; the timed calls run untraced, since recording costs time.
void write_trace(call c, const algorithm& a, const std::string& path) {
  c.choice.name = a.name;  // the registry's name: static storage
  team_options options = team_options::from_environment();
  options.trace = true;
  team t(c.args.p, options);
  test_data d = make_test_data(c, 1);
  const auto buffers = d.buffers();
  run(t, [&](comm& cm) { cm.run_collective(c, buffers[cm.rank()].in, buffers[cm.rank()].out); });
  std::ofstream out(path);
  t.write_trace_chrome(out,
                       [&a](const trace_event& e) { return e.coll == "p2p" ? std::string() : std::string(a.name); });
  out.close();
  if (!out) throw CLI::RuntimeError(fmt::format("ranklab run: could not write {}", path), 1);
}

int run_command(const run_options& o) {
  const call c = checked_call(o);
  if (!o.trace_file.empty() && o.executor != "threads")
    usage_failure("--trace: records the thread executor's rounds; leave out --executor " + o.executor);
  const check_result r = run_check(c, o.executor == "threads" ? executor_kind::threads : executor_kind::sequential,
                                   static_cast<int>(o.iters));
  if (!o.trace_file.empty()) write_trace(c, *r.algo, o.trace_file);
  const double time_us = r.seconds_per_op * 1e6;
  const std::uint64_t bytes = r.report.elements * c.type.size;
  if (o.out.json) {
    nlohmann::json j{{"coll", o.coll},
                     {"algo", r.algo->name},
                     {"p", o.p},
                     {"count", o.count},
                     {"root", o.root},
                     {"rounds", r.report.rounds},
                     {"messages", r.report.messages},
                     {"bytes", bytes},
                     {"verified", r.verified},
                     {"time_us", time_us}};
    write_json(o.out, j.dump());
  }
  if (o.out.text()) {
    fmt::print(
        "coll      {}\nalgo      {}\np         {}\ncount     {}\nroot      {}\nrounds    {}\n"
        "messages  {}\nbytes     {}\nverified  {}\ntime_us   {:.2f}  ({} executor, {} iteration(s))\n",
        o.coll, r.algo->name, o.p, has_vector_counts(c.args.coll) ? "(vector)" : std::to_string(o.count), o.root,
        r.report.rounds, r.report.messages, bytes, r.verified, time_us, o.executor, o.iters);
    if (o.explain) fmt::print("why       {}: {}\n", r.reason, r.algo->summary);
  }
  if (!r.verified) {
    fmt::print(stderr, "ranklab run: result differs from the sequential reference: {}\n", r.difference);
    return 1;
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app) {
  static run_options o;
  auto* cmd = app.add_subcommand("run", "Run one collective, check it against the sequential reference");
  cmd->add_option("--coll", o.coll, fmt::format("Collective: {}", fmt::join(collective_names(), ", ")))->required();
  cmd->add_option("--algo", o.algo, "Algorithm name or auto (`ranklab list --coll C` shows the names)")
      ->capture_default_str();
  cmd->add_option("-p", o.p, fmt::format("Number of ranks, 1..{}", max_ranks))->capture_default_str();
  cmd->add_option("--count", o.count,
                  fmt::format("Elements, with the meaning MPI gives the collective's count; all ranks' buffers "
                              "must fit in {}",
                              size_label(max_buffer_bytes)))
      ->capture_default_str();
  cmd->add_option("--counts", o.counts, "v-collectives: explicit counts (p entries; p*p for alltoallv)")
      ->delimiter(',');
  cmd->add_option("--distribution", o.distribution, "v-collectives without --counts: regular, irregular, degenerate")
      ->capture_default_str();
  cmd->add_option("--root", o.root, "Root rank, 0..p-1")->capture_default_str();
  cmd->add_option("--type", o.type, "int8..int64, uint8..uint64, float32, float64")
      ->capture_default_str()
      ->each([](const std::string&) { o.type_given = true; });
  cmd->add_option("--op", o.op,
                  "sum, prod, min, max, band, bor, bxor (integer types), land, lor, matmul2x2 (non-commutative)")
      ->capture_default_str();
  cmd->add_option("--executor", o.executor, "threads or sequential")->capture_default_str();
  cmd->add_option("--iters", o.iters, fmt::format("Calls to time, 1..{}", max_iters))->capture_default_str();
  cmd->add_option("--blocks", o.blocks, fmt::format("circulant: number of blocks n, 1..{} (0: cost model)", max_blocks))
      ->capture_default_str();
  cmd->add_option("--radix", o.radix, "k-nomial: radix >= 2 (0: the algorithm's default)")->capture_default_str();
  cmd->add_option("--removed-steps", o.removed_steps, "generalized allreduce: r, 0..ceil(log2 p) (-1: cost model)")
      ->capture_default_str();
  cmd->add_option("--segment", o.segment, "pipelined algorithms: elements per segment (0: the algorithm chooses)")
      ->capture_default_str();
  add_output_options(cmd, o.out, "{coll, algo, p, count, root, rounds, messages, bytes, verified, time_us}");
  cmd->add_flag("--explain", o.explain, "Say why the algorithm was chosen");
  cmd->add_option("--trace", o.trace_file,
                  "Also run one traced call and write its rounds and messages to FILE.json in the Chrome "
                  "trace-event format (chrome://tracing, Perfetto)")
      ->check(writable_path());
  cmd->callback([] {
    const int rc = run_command(o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace ranklab::tools
