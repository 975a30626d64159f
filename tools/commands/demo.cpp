// `ranklab demo`: a first look. Starts a team of pinned rank threads, runs a ring of
// one-ported rounds, a broadcast and an allreduce checked against a sequential reference,
// and shows how the broadcast moves data, round by round, and in a drawing (an HTML page,
// `ranklab draw`) of a one-ported broadcast algorithm.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "cli/checks.hpp"
#include "cli/option_parse.hpp"
#include "commands/commands.hpp"
#include "draw/output.hpp"
#include "draw/path_option.hpp"
#include "ranklab/check.hpp"
#include "ranklab/ranklab.hpp"

namespace ranklab::tools {

namespace {

struct demo_options {
  std::int64_t p = 4;
  bool verbose = false;
  std::int64_t count = 1 << 16;
  std::string draw_file;  // empty: a file in the temporary directory
  output_options out;
};

// Per rank and element: the broadcast's int and the allreduce's two longs.
constexpr std::uint64_t demo_bytes_per_element = sizeof(int) + 2 * sizeof(long);

// The broadcast to show: the one that ran, or, when that was a shared-memory algorithm
// outside the one-ported model (`direct`: no messages to show), the one-ported algorithm the
// cost model predicts fastest for the call.
const algorithm& shown_bcast(const coll_args& args, std::string_view ran) {
  if (const algorithm* a = registry::find(collective::bcast, ran); a != nullptr && a->one_ported) return *a;
  const algorithm* best = nullptr;
  double best_time = 0;
  for (const algorithm* a : registry::for_collective(collective::bcast)) {
    if (!a->one_ported || !meets_preconditions(*a, args)) continue;
    const double t = a->cost ? a->cost(args, sizeof(int), cost_model{}) : std::numeric_limits<double>::max();
    if (best == nullptr || t < best_time) best = a, best_time = t;
  }
  return *best;
}

void show_rounds(const coll_args& args, const algorithm& a, std::string_view ran) {
  const schedule_set plans = build_all(a, args);
  const verify_report rep = verify(plans);
  if (a.name != ran)
    fmt::print(
        "\nThe broadcast ran '{}', which copies through shared memory (no messages); the one-ported '{}' "
        "instead:",
        ran, a.name);
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

// A drawing of the broadcast (draw/figure.hpp): the same call, so the same blocks and rounds.
void draw_bcast(const coll_args& args, const algorithm& a, const std::string& file) {
  const std::string path =
      file.empty()
          ? (std::filesystem::temp_directory_path() / fmt::format("ranklab_demo_bcast_p{}.html", args.p)).string()
          : file;
  try {
    draw::write_figure(draw::make_figure(a, args), path);
  } catch (const std::runtime_error& e) {
    fmt::print("\n(no drawing: {})\n", e.what());
    return;
  }
  fmt::print("\nA drawing of it: {}\n  (open it in a browser; the arrow keys step through the rounds)\n", path);
}

int demo(const demo_options& o) {
  check_range("-p", o.p, 1, max_ranks, "ranks are threads");
  check_range("--count", o.count, 0);
  check_range("--count", o.count, 0,
              static_cast<std::int64_t>(max_buffer_bytes / demo_bytes_per_element / static_cast<std::uint64_t>(o.p)),
              fmt::format("{} bytes per element and rank, all ranks within {}", demo_bytes_per_element,
                          size_label(max_buffer_bytes)));
  const machine_info m = machine();
  if (o.out.text()) fmt::print("ranklab demo: {} ranks as threads on {}\n", o.p, m.description);
  team t(static_cast<int>(o.p));
  constexpr int ring_rounds = 1000;
  std::vector<double> ring_us(o.p), bcast_us(o.p), allreduce_us(o.p);
  std::atomic<bool> ok{true};
  std::string bcast_algo, bcast_name, allreduce_algo;
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
    if (r == 0) {
      bcast_name = std::string(c.last_algorithm()->name);
      bcast_algo = bcast_name + " (" + std::string(c.last_selection_reason()) + ")";
    }
    // Allreduce of every rank's vector: element i sums to p*i + p(p-1)/2.
    std::vector<long> in(o.count), out(o.count);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<long>(i) + r;
    c.barrier();
    t0 = std::chrono::steady_clock::now();
    c.allreduce(in, out, ops::sum);
    allreduce_us[r] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    for (std::size_t i = 0; i < out.size(); ++i)
      if (out[i] != static_cast<long>(p * i) + p * (p - 1) / 2) ok = false;
    if (r == 0)
      allreduce_algo = std::string(c.last_algorithm()->name) + " (" + std::string(c.last_selection_reason()) + ")";
  });
  auto worst = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
  if (o.out.json) {
    const nlohmann::json j{{"p", o.p},
                           {"count", o.count},
                           {"machine", m.description},
                           {"ring_us_per_round", worst(ring_us)},
                           {"bcast_us", worst(bcast_us)},
                           {"bcast_algorithm", bcast_algo},
                           {"allreduce_us", worst(allreduce_us)},
                           {"allreduce_algorithm", allreduce_algo},
                           {"correct", ok.load()}};
    write_json(o.out, j.dump());
  }
  if (!o.out.text()) return ok ? 0 : 1;
  if (o.verbose) {
    fmt::print("\nThread placement (policy {}):\n", name(t.options().binding));
    for (const binding_info& b : t.bindings())
      fmt::print("  rank {:3}: {:8} core {:3} cpuset {:6} {}\n", b.rank, name(b.policy), b.core,
                 b.cpuset.empty() ? "-" : b.cpuset, b.note);
  }
  fmt::print("\n  ring      {} rounds of sendrecv        {:8.2f} us per round\n", ring_rounds, worst(ring_us));
  fmt::print("  bcast     {} ints from rank {:<3}   {:8.1f} us   algorithm {}\n", o.count, o.p - 1, worst(bcast_us),
             bcast_algo);
  fmt::print("  allreduce {} longs, sum            {:8.1f} us   algorithm {}\n", o.count, worst(allreduce_us),
             allreduce_algo);
  fmt::print("  results   {}\n", ok ? "all checked against the sequential reference: correct" : "WRONG");
  if (o.out.quiet) return ok ? 0 : 1;  // the commentary below is for a first look
  coll_args bc;
  bc.coll = collective::bcast;
  bc.p = static_cast<int>(o.p);
  bc.root = bc.p - 1;
  bc.count = static_cast<std::uint64_t>(o.count);
  const algorithm& shown = shown_bcast(bc, bcast_name);
  show_rounds(bc, shown, bcast_name);
  draw_bcast(bc, shown, o.draw_file);
  fmt::print("\nNext: `ranklab list`, `ranklab run --coll allreduce -p 7 --count 1000 --explain`\n");
  return ok ? 0 : 1;
}

}  // namespace

void add_demo_command(CLI::App& app) {
  static demo_options o;
  auto* cmd = app.add_subcommand("demo", "Run a short demonstration on this machine");
  cmd->add_option("-p", o.p, fmt::format("Number of ranks, 1..{}", max_ranks))->capture_default_str();
  cmd->add_option(
         "--count", o.count,
         fmt::format("Elements per collective, >= 0 (all ranks' buffers within {})", size_label(max_buffer_bytes)))
      ->capture_default_str();
  cmd->add_flag("-v,--verbose", o.verbose, "Show where every rank thread runs");
  cmd->add_option("--draw", o.draw_file,
                  "Where to write the drawing of the broadcast, FILE.html or FILE.svg (default: "
                  "ranklab_demo_bcast_p<P>.html in the temporary directory)")
      ->check(writable_path())
      ->check(draw::drawing_path());
  add_output_options(cmd, o.out, "{p, count, machine, ring_us_per_round, bcast_us, allreduce_us, algorithms, correct}");
  cmd->get_option("--quiet")->description("Only the results: no round-by-round picture, no hints");
  cmd->callback([] {
    if (int rc = demo(o); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace ranklab::tools
