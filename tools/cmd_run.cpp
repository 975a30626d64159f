// `ranklab run`: one collective with one algorithm on generated data, checked against the
// sequential reference; prints rounds, messages, bytes, verified and time per operation.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>

#include "ranklab/check.hpp"
#include "ranklab/collective.hpp"

namespace ranklab::tools {

namespace {

struct run_options {
  std::string coll = "bcast";
  std::string algo = "auto";
  int p = 4;
  std::uint64_t count = 1024;
  std::vector<std::uint64_t> counts;
  std::string distribution = "regular";
  int root = 0;
  std::string type = "int32";
  std::string op = "sum";
  std::string executor = "threads";
  int iters = 1;
  bool json = false;
  bool explain = false;
  algo_params params;
};

// Counts for v-collectives when none are given: every rank `count` (regular), ranks with
// counts cycling 0, count/2, count, 2*count (irregular), or the root alone with p*count
// (degenerate: one rank has everything, the others nothing).
std::vector<std::uint64_t> generated_counts(const run_options& o, collective c) {
  const auto p = static_cast<std::size_t>(o.p);
  auto per_rank = [&](std::size_t j) -> std::uint64_t {
    if (o.distribution == "regular") return o.count;
    if (o.distribution == "irregular") {
      const std::uint64_t f[] = {0, o.count / 2, o.count, 2 * o.count};
      return f[j % 4];
    }
    if (o.distribution == "degenerate") return j == static_cast<std::size_t>(o.root) ? o.count * p : 0;
    throw CLI::ValidationError("--distribution", "regular, irregular or degenerate");
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

int run_command(const run_options& o) {
  const auto coll = collective_from_name(o.coll);
  if (!coll) throw CLI::ValidationError("--coll", "unknown collective '" + o.coll + "'");
  if (o.executor != "threads" && o.executor != "sequential")
    throw CLI::ValidationError("--executor", "threads or sequential");
  call c;
  c.args.coll = *coll;
  c.args.p = o.p;
  c.args.root = o.root;
  c.args.params = o.params;
  if (o.op == "matmul2x2") {  // the non-commutative test operator on 16-byte elements
    c.type = datatype_of<matrix2x2>();
    c.reduction = matrix2x2_product();
  } else {
    c.type = datatype_from_name(o.type);
    c.reduction = op_from_name(o.op);
  }
  c.choice.name = o.algo;
  if (has_vector_counts(*coll)) c.args.counts = o.counts.empty() ? generated_counts(o, *coll) : o.counts;
  else c.args.count = o.count;
  const check_result r = run_check(c, o.executor == "threads" ? executor_kind::threads : executor_kind::sequential,
                                   o.iters);
  const double time_us = r.seconds_per_op * 1e6;
  const std::uint64_t bytes = r.report.elements * c.type.size;
  if (o.json) {
    nlohmann::json j{{"coll", o.coll},       {"algo", r.algo->name},        {"p", o.p},
                     {"count", o.count},     {"root", o.root},              {"rounds", r.report.rounds},
                     {"messages", r.report.messages}, {"bytes", bytes},     {"verified", r.verified},
                     {"time_us", time_us}};
    std::cout << j.dump() << "\n";
  } else {
    fmt::print("coll      {}\nalgo      {}\np         {}\ncount     {}\nroot      {}\nrounds    {}\n"
               "messages  {}\nbytes     {}\nverified  {}\ntime_us   {:.2f}  ({} executor, {} iteration(s))\n",
               o.coll, r.algo->name, o.p, has_vector_counts(*coll) ? "(vector)" : std::to_string(o.count), o.root,
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
  cmd->add_option("--coll", o.coll, "Collective (bcast, allreduce, ...)")->required();
  cmd->add_option("--algo", o.algo, "Algorithm name or auto")->capture_default_str();
  cmd->add_option("-p", o.p, "Number of ranks")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  cmd->add_option("--count", o.count, "Elements, with the meaning MPI gives the collective's count")
      ->capture_default_str();
  cmd->add_option("--counts", o.counts, "v-collectives: explicit counts (p entries; p*p for alltoallv)")
      ->delimiter(',');
  cmd->add_option("--distribution", o.distribution, "v-collectives without --counts: regular, irregular, degenerate")
      ->capture_default_str();
  cmd->add_option("--root", o.root, "Root rank")->capture_default_str();
  cmd->add_option("--type", o.type, "int8..int64, uint8..uint64, float32, float64")->capture_default_str();
  cmd->add_option("--op", o.op, "sum, prod, min, max, band, bor, bxor, land, lor, matmul2x2 (non-commutative)")->capture_default_str();
  cmd->add_option("--executor", o.executor, "threads or sequential")->capture_default_str();
  cmd->add_option("--iters", o.iters, "Calls to time")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--blocks", o.params.blocks, "circulant: number of blocks n (0: cost model)");
  cmd->add_option("--radix", o.params.radix, "k-nomial: radix");
  cmd->add_option("--removed-steps", o.params.removed_steps, "generalized allreduce: r");
  cmd->add_option("--segment", o.params.segment, "pipelined algorithms: elements per segment");
  cmd->add_flag("--json", o.json, "One JSON object");
  cmd->add_flag("--explain", o.explain, "Say why the algorithm was chosen");
  cmd->callback([] {
    const int rc = run_command(o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace ranklab::tools
