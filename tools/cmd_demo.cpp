// `ranklab demo`: a first look. Starts a team of pinned rank threads, runs a ring of
// one-ported rounds, a broadcast and an allreduce checked against a sequential reference,
// and shows how the broadcast moves data, round by round.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <numeric>

#include "ranklab/check.hpp"
#include "ranklab/ranklab.hpp"

namespace ranklab::tools {

namespace {

struct demo_options {
  int p = 4;
  bool verbose = false;
  std::uint64_t count = 1 << 16;
};

void show_rounds(const coll_args& args) {
  const algorithm& a = select_algorithm(args, sizeof(int), "auto");
  const schedule_set plans = build_all(a, args);
  const verify_report rep = verify(plans);
  fmt::print("\nHow {} moves data (algorithm '{}', {} rounds, {} messages):\n", describe(args), a.name, rep.rounds,
             rep.messages);
  for (std::size_t i = 0; i < rep.rounds; ++i) {
    std::string line;
    for (const schedule& s : plans)
      if (i < s.rounds().size() && s.rounds()[i].send_to != no_rank)
        line += fmt::format(" {}->{}", s.rank(), s.rounds()[i].send_to);
    fmt::print("  round {:2}:{}\n", i, line.empty() ? " (idle)" : line);
  }
}

int demo(const demo_options& o) {
  const machine_info m = machine();
  fmt::print("ranklab demo: {} ranks as threads on {}\n", o.p, m.description);
  team t(o.p);
  constexpr int ring_rounds = 1000;
  std::vector<double> ring_us(o.p), bcast_us(o.p), allreduce_us(o.p);
  std::atomic<bool> ok{true};
  std::string bcast_algo, allreduce_algo;
  run(t, [&](comm& c) {
    const int r = c.rank(), p = c.size();
    // A ring: every round, send to the right neighbour and receive from the left one.
    int token = r, got = -1;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < ring_rounds; ++i) {
      c.sendrecv((r + 1) % p, std::span(&token, 1), (r + p - 1) % p, std::span(&got, 1));
      if (got != (r + p - 1 - i % p + p) % p) ok = false;
      token = got;
    }
    ring_us[r] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / ring_rounds;
    // Broadcast from the last rank.
    std::vector<int> data(o.count);
    if (r == p - 1) std::iota(data.begin(), data.end(), 7);
    c.barrier();
    t0 = std::chrono::steady_clock::now();
    c.bcast(data, p - 1);
    bcast_us[r] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    for (std::size_t i = 0; i < data.size(); ++i)
      if (data[i] != static_cast<int>(i) + 7) ok = false;
    if (r == 0) bcast_algo = std::string(c.last_algorithm()->name) + " (" + std::string(c.last_selection_reason()) + ")";
    // Allreduce of every rank's vector: element i sums to p*i + p(p-1)/2.
    std::vector<long> in(o.count), out(o.count);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<long>(i) + r;
    c.barrier();
    t0 = std::chrono::steady_clock::now();
    c.allreduce(in, out, ops::sum);
    allreduce_us[r] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    for (std::size_t i = 0; i < out.size(); ++i)
      if (out[i] != static_cast<long>(p * i) + p * (p - 1) / 2) ok = false;
    if (r == 0) allreduce_algo = std::string(c.last_algorithm()->name) + " (" + std::string(c.last_selection_reason()) + ")";
  });
  if (o.verbose) {
    fmt::print("\nThread placement (policy {}):\n", name(t.options().binding));
    for (const binding_info& b : t.bindings())
      fmt::print("  rank {:3}: {:8} core {:3} cpuset {:6} {}\n", b.rank, name(b.policy), b.core,
                 b.cpuset.empty() ? "-" : b.cpuset, b.note);
  }
  auto worst = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
  fmt::print("\n  ring      {} rounds of sendrecv        {:8.2f} us per round\n", ring_rounds, worst(ring_us));
  fmt::print("  bcast     {} ints from rank {:<3}   {:8.1f} us   algorithm {}\n", o.count, o.p - 1, worst(bcast_us),
             bcast_algo);
  fmt::print("  allreduce {} longs, sum            {:8.1f} us   algorithm {}\n", o.count, worst(allreduce_us),
             allreduce_algo);
  fmt::print("  results   {}\n", ok ? "all checked against the sequential reference: correct" : "WRONG");
  coll_args bc;
  bc.coll = collective::bcast;
  bc.p = o.p;
  bc.root = o.p - 1;
  bc.count = o.count;
  show_rounds(bc);
  fmt::print("\nNext: `ranklab list`, `ranklab run --coll allreduce -p 7 --count 1000 --explain`\n");
  return ok ? 0 : 1;
}

}  // namespace

void add_demo_command(CLI::App& app) {
  static demo_options o;
  auto* cmd = app.add_subcommand("demo", "Run a short demonstration on this machine");
  cmd->add_option("-p", o.p, "Number of ranks")->check(CLI::Range(1, 4096))->capture_default_str();
  cmd->add_option("--count", o.count, "Elements per collective")->capture_default_str();
  cmd->add_flag("-v,--verbose", o.verbose, "Show where every rank thread runs");
  cmd->callback([] {
    if (int rc = demo(o); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace ranklab::tools
