// `ranklab demo`: a first look. Starts a team of ranks (pinned threads, or fibers when there
// are more ranks than cores: team::execution), times one message between two ranks, a ring
// of one-ported rounds, and warm broadcasts and allreduces against that message, every
// result checked against a sequential reference, and shows how the broadcast moves data,
// round by round, and in a drawing (an HTML page, `ranklab draw`) of a one-ported algorithm.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/checks.hpp"
#include "cli/option_parse.hpp"
#include "commands/commands.hpp"
#include "draw/choice.hpp"
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
// Every collective is called once cold (the first call of the team: its schedule is built
// and its buffers touched) and then warm_calls times; the figures are medians of the warm
// calls, each call's time that of its slowest rank. One-way message times: half the median
// round trip between ranks 0 and 1.
constexpr int warm_calls = 20;
constexpr int small_trips = 200, large_trips = 20;
constexpr int ring_rounds = 1000;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double since_us(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

// One collective's times: [call][rank], call 0 the cold one.
struct call_times {
  std::vector<std::vector<double>> us;
  call_times(int calls, int p)
      : us(static_cast<std::size_t>(calls), std::vector<double>(static_cast<std::size_t>(p))) {}
  double slowest(std::size_t call) const { return *std::max_element(us[call].begin(), us[call].end()); }
  double cold() const { return slowest(0); }
  double warm() const {
    std::vector<double> v;
    for (std::size_t i = 1; i < us.size(); ++i) v.push_back(slowest(i));
    return median(std::move(v));
  }
};

// The first wrong result, for the report (the demo fails loudly on it).
struct result_check {
  std::atomic<bool> ok{true};
  std::mutex m;
  std::string first;
  void wrong(std::string what) {
    std::lock_guard lock(m);
    if (ok.exchange(false)) first = std::move(what);
  }
};

// How the ranks ran, in the words of the team: threads or fibers (team::execution), and
// on how many workers (the fibers' placement notes, "fiber on worker 1").
std::string execution_words(const team& t, const machine_info& m) {
  const auto bindings = t.bindings();
  const int p = static_cast<int>(bindings.size());
  if (t.execution() == execution_mode::threads)
    return fmt::format("{} rank{} as threads (one OS thread each, binding {})", p, p == 1 ? "" : "s",
                       name(t.options().binding));
  std::set<std::string> workers;
  for (const binding_info& b : bindings)
    if (const auto at = b.note.find("worker "); at != std::string::npos)
      workers.insert(b.note.substr(at + 7, b.note.find_first_not_of("0123456789", at + 7) - at - 7));
  const std::string on = workers.empty()
                             ? std::string("worker threads")
                             : fmt::format("{} worker thread{}", workers.size(), workers.size() == 1 ? "" : "s");
  return fmt::format("{} rank{} as fibers on {}{}", p, p == 1 ? "" : "s", on,
                     p > m.cores ? fmt::format(" (more ranks than the {} cores)", m.cores) : std::string());
}

struct one_way {
  std::uint64_t bytes = 0;
  int trips = 0;
  double us = 0;  // half the median round trip
  double gbps() const { return us > 0 ? static_cast<double>(bytes) / (us * 1e3) : 0; }
};

// Round trips of `bytes` between ranks 0 and 1 (one warm-up trip first); rank 1 checks the
// last message it received, rank 0 the last echo.
void ping_pong(comm& c, one_way& w, result_check& check) {
  const int r = c.rank();
  if (r > 1) return;
  std::vector<std::uint8_t> buf(w.bytes);
  std::vector<double> trips;
  for (int i = 0; i <= w.trips; ++i) {
    if (r == 0) {
      for (std::size_t j = 0; j < buf.size(); j += 4096) buf[j] = static_cast<std::uint8_t>(i + j);
      const auto t0 = std::chrono::steady_clock::now();
      c.send(1, buf);
      c.recv(1, buf);
      if (i > 0) trips.push_back(since_us(t0) / 2);
    } else {
      c.recv(0, buf);
      c.send(0, buf);
    }
    if (i == w.trips)
      for (std::size_t j = 0; j < buf.size(); j += 4096)
        if (buf[j] != static_cast<std::uint8_t>(i + j))
          check.wrong(fmt::format("message of {} bytes, rank {}: byte {} is {}", w.bytes, r, j, buf[j]));
  }
  if (r == 0) w.us = median(std::move(trips));
}

std::string bytes_label(std::uint64_t b) {
  if (b >= (1u << 20) && b % (1u << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

// "= 1.7 x one message of 256KiB": what the collective costs against one message of its size.
std::string against(double us, const one_way& w) {
  if (w.us <= 0) return {};
  return fmt::format("= {:4.1f} x one message of {}", us / w.us, bytes_label(w.bytes));
}

void show_rounds(const coll_args& args, const draw::drawn_choice& choice) {
  const algorithm& a = *choice.drawn;
  const schedule_set plans = build_all(a, args);
  const verify_report rep = verify(plans);
  if (!choice.why.empty()) fmt::print("\nFor the broadcast {}:", choice.why);
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
void draw_bcast(const coll_args& args, const draw::drawn_choice& choice, const std::string& file) {
  const std::string path =
      file.empty()
          ? (std::filesystem::temp_directory_path() / fmt::format("ranklab_demo_bcast_p{}.html", args.p)).string()
          : file;
  try {
    draw::figure fig = draw::make_figure(*choice.drawn, args);
    fig.choice = choice.why;
    draw::write_figure(fig, path);
  } catch (const std::runtime_error& e) {
    fmt::print("\n(no drawing: {})\n", e.what());
    return;
  }
  fmt::print("\nA drawing of it: {}\n  (open it in a browser; the arrow keys step through the rounds)\n", path);
}

int demo(const demo_options& o) {
  check_range("-p", o.p, 1, max_ranks, "ranks are threads or fibers");
  check_range("--count", o.count, 0);
  check_range("--count", o.count, 0,
              static_cast<std::int64_t>(max_buffer_bytes / demo_bytes_per_element / static_cast<std::uint64_t>(o.p)),
              fmt::format("{} bytes per element and rank, all ranks within {}", demo_bytes_per_element,
                          size_label(max_buffer_bytes)));
  const machine_info m = machine();
  team t(static_cast<int>(o.p));
  const auto count = static_cast<std::size_t>(o.count);
  std::vector<double> ring_us(o.p);
  call_times bcast(warm_calls + 1, static_cast<int>(o.p)), allreduce(warm_calls + 1, static_cast<int>(o.p));
  one_way small{sizeof(int), small_trips}, bcast_msg{count * sizeof(int), large_trips},
      allreduce_msg{count * sizeof(long), large_trips};
  result_check check;
  std::string bcast_name, bcast_reason, allreduce_algo;
  run(t, [&](comm& c) {
    const int r = c.rank(), p = c.size();
    // One message each way between ranks 0 and 1: what a collective's rounds are made of.
    if (p > 1)
      for (one_way* w : {&small, &bcast_msg, &allreduce_msg}) {
        c.barrier();
        ping_pong(c, *w, check);
      }
    // A ring: every round, send to the right neighbour and receive from the left one.
    c.barrier();
    int token = r, got = -1;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < ring_rounds; ++i) {
      c.sendrecv((r + 1) % p, std::span(&token, 1), (r + p - 1) % p, std::span(&got, 1));
      if (got != (r + p - 1 - i % p + p) % p) check.wrong(fmt::format("ring round {}, rank {}: got {}", i, r, got));
      token = got;
    }
    ring_us[r] = since_us(t0) / ring_rounds;
    // Broadcast from the last rank; the receivers' buffers are cleared before every call.
    std::vector<int> data(count);
    for (std::size_t k = 0; k < bcast.us.size(); ++k) {
      if (r == p - 1)
        std::iota(data.begin(), data.end(), 7);
      else
        std::fill(data.begin(), data.end(), -1);
      c.barrier();
      t0 = std::chrono::steady_clock::now();
      c.bcast(data, p - 1);
      bcast.us[k][r] = since_us(t0);
      for (std::size_t i = 0; i < data.size(); ++i)
        if (data[i] != static_cast<int>(i) + 7) {
          check.wrong(fmt::format("bcast call {}, rank {}: element {} is {}, not {}", k, r, i, data[i], i + 7));
          break;
        }
    }
    if (r == 0) {
      bcast_name = std::string(c.last_algorithm()->name);
      bcast_reason = std::string(c.last_selection_reason());
    }
    // Allreduce of every rank's vector: element i sums to p*i + p(p-1)/2.
    std::vector<long> in(count), out(count);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<long>(i) + r;
    for (std::size_t k = 0; k < allreduce.us.size(); ++k) {
      std::fill(out.begin(), out.end(), -1);
      c.barrier();
      t0 = std::chrono::steady_clock::now();
      c.allreduce(in, out, ops::sum);
      allreduce.us[k][r] = since_us(t0);
      for (std::size_t i = 0; i < out.size(); ++i)
        if (const long want = static_cast<long>(p * i) + p * (p - 1) / 2; out[i] != want) {
          check.wrong(fmt::format("allreduce call {}, rank {}: element {} is {}, not {}", k, r, i, out[i], want));
          break;
        }
    }
    if (r == 0)
      allreduce_algo = std::string(c.last_algorithm()->name) + " (" + std::string(c.last_selection_reason()) + ")";
  });
  // After the run: the bindings are those applied, the fibers' workers known.
  const std::string how = execution_words(t, m);
  if (o.out.text()) fmt::print("ranklab demo: {} on {}\n", how, m.description);
  const bool ok = check.ok.load();
  const double ring = *std::max_element(ring_us.begin(), ring_us.end());
  if (!ok) fmt::print(stderr, "ranklab demo: WRONG RESULT: {}\n", check.first);
  if (o.out.json) {
    const auto message = [](const one_way& w) {
      return nlohmann::json{{"bytes", w.bytes}, {"one_way_us", w.us}, {"round_trips", w.trips}};
    };
    nlohmann::json j{{"p", o.p},
                     {"count", o.count},
                     {"machine", m.description},
                     {"execution", std::string(name(t.execution()))},
                     {"warm_calls", warm_calls},
                     {"ring_us_per_round", ring},
                     {"bcast_us", bcast.warm()},
                     {"bcast_first_call_us", bcast.cold()},
                     {"bcast_algorithm", bcast_name + " (" + bcast_reason + ")"},
                     {"allreduce_us", allreduce.warm()},
                     {"allreduce_first_call_us", allreduce.cold()},
                     {"allreduce_algorithm", allreduce_algo},
                     {"correct", ok}};
    if (o.p > 1) j["messages"] = nlohmann::json::array({message(small), message(bcast_msg), message(allreduce_msg)});
    if (!ok) j["wrong"] = check.first;
    write_json(o.out, j.dump());
  }
  if (!o.out.text()) return ok ? 0 : 1;
  if (o.verbose) {
    fmt::print("\nPlacement ({}; binding policy {}):\n", how, name(t.options().binding));
    for (const binding_info& b : t.bindings())
      fmt::print("  rank {:3}: {:8} core {:3} cpuset {:6} {}\n", b.rank, name(b.policy), b.core,
                 b.cpuset.empty() ? "-" : b.cpuset, b.note);
  }
  fmt::print("\n");
  if (o.p > 1) {
    for (const one_way* w : {&small, &bcast_msg, &allreduce_msg})
      fmt::print("  message   rank 0 -> rank 1, {:>9}     {:8.2f} us one-way{}\n", bytes_label(w->bytes), w->us,
                 w->bytes >= 1024 ? fmt::format(", {:.2f} GB/s", w->gbps()) : std::string());
    fmt::print("            (half the median of {} round trips, {} for the large ones)\n", small_trips, large_trips);
  }
  fmt::print("  ring      {} rounds of sendrecv, every rank  {:8.2f} us per round\n", ring_rounds, ring);
  fmt::print("  bcast     {} ints from rank {:<4}         {:8.1f} us {}\n", o.count, o.p - 1, bcast.warm(),
             against(bcast.warm(), bcast_msg));
  fmt::print("            algorithm {} ({})\n", bcast_name, bcast_reason);
  fmt::print("  allreduce {} longs, sum                {:8.1f} us {}\n", o.count, allreduce.warm(),
             against(allreduce.warm(), allreduce_msg));
  fmt::print("            algorithm {}\n", allreduce_algo);
  fmt::print(
      "            (median of {} warm calls, each the slowest rank's time; the first, cold call of each: bcast {:.1f} "
      "us, allreduce {:.1f} us)\n",
      warm_calls, bcast.cold(), allreduce.cold());
  fmt::print("  results   {}\n",
             ok ? fmt::format("all {} calls of each checked against the sequential reference: correct", warm_calls + 1)
                : "WRONG: " + check.first);
  if (o.out.quiet) return ok ? 0 : 1;  // the commentary below is for a first look
  coll_args bc;
  bc.coll = collective::bcast;
  bc.p = static_cast<int>(o.p);
  bc.root = bc.p - 1;
  bc.count = static_cast<std::uint64_t>(o.count);
  bc.elem_size = sizeof(int);
  const algorithm* ran = registry::find(collective::bcast, bcast_name);
  if (ran != nullptr) {
    const draw::drawn_choice choice = draw::drawable_algorithm(*ran, bcast_reason, bc, sizeof(int));
    show_rounds(bc, choice);
    draw_bcast(bc, choice, o.draw_file);
  }
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
  cmd->add_flag("-v,--verbose", o.verbose, "Show where every rank runs (its thread, or its fiber's worker)");
  cmd->add_option("--draw", o.draw_file,
                  "Where to write the drawing of the broadcast, FILE.html or FILE.svg (default: "
                  "ranklab_demo_bcast_p<P>.html in the temporary directory)")
      ->check(writable_path())
      ->check(draw::drawing_path());
  add_output_options(cmd, o.out,
                     "{p, count, machine, execution, warm_calls, messages, ring_us_per_round, bcast_us, "
                     "bcast_first_call_us, allreduce_us, allreduce_first_call_us, algorithms, correct}");
  cmd->get_option("--quiet")->description("Only the results: no round-by-round picture, no hints");
  cmd->callback([] {
    if (int rc = demo(o); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace ranklab::tools
