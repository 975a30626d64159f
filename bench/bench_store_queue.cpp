// What a streaming sender's other stores cost: a one-way stream of one-line messages
// between two ranks on two cores, the sender making `extra` stores to a buffer of its own
// besides each message (a call's bookkeeping, in a real program). The receiver polls the
// line of the next message, so the sender's store to that line waits for it to come back
// from the receiver's core; x86 commits stores in order, so the stores after it wait in the
// store queue, and once they fill it the sender waits a crossing per message. The figures
// show where: the time per message against the stores around it. This is why the runtime's
// repeated small call keeps its stores few (docs/runtime.md, "A repeated small call stores little").
//
//   bench_store_queue [--extra 0,8,16,24,32,40,48,64] [--messages N] [--batches N]
//
// Prints, per count of extra stores, the median (min-max) over batches of ns per message,
// and the same sender alone (its lines read by no one, so that no store waits for a line):
// the difference is what the receiver's polling costs the sender. The counts take turns
// within each batch, so that a change in the machine's speed shows in all of them alike.
// Needs two cores; the ranks are bound one to a core.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "bench/timing.hpp"
#include "ranklab/ranklab.hpp"

namespace {

using namespace ranklab;
using ranklab::tools::bench::clock_type;
using ranklab::tools::bench::seconds_since;
using ranklab::tools::bench::summarize;

constexpr std::uint64_t ring_lines = 128;  // as the express lane
constexpr std::uint64_t told_every = 8;    // the receiver tells its progress as the lane does

struct alignas(64) line {
  std::atomic<std::uint64_t> seq{0};
  std::uint64_t payload[7] = {};
};

struct stream {
  line ring[ring_lines];
  alignas(64) std::atomic<std::uint64_t> taken{0};
};

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Message k (from 1) into its line, the payload first, the sequence number last; waits for
// room only when the ring looks full.
void send(stream& s, std::uint64_t k, std::uint64_t& known_taken) {
  while (k - known_taken > ring_lines - told_every) known_taken = s.taken.load(std::memory_order_acquire);
  line& l = s.ring[k % ring_lines];
  l.payload[0] = k;
  l.seq.store(k, std::memory_order_release);
}

std::uint64_t receive(stream& s, std::uint64_t k) {
  const line& l = s.ring[k % ring_lines];
  while (l.seq.load(std::memory_order_acquire) != k) relax();
  const std::uint64_t v = l.payload[0];
  if (k % told_every == 0) s.taken.store(k, std::memory_order_release);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> extras{0, 8, 16, 24, 32, 40, 48, 64};
  std::uint64_t messages = 200000;
  int batches = 7;
  arguments args(argc, argv, "[--extra 0,8,16,24,32,40,48,64] [--messages N] [--batches N]");
  const bool ok = args.parse([&] {
    if (args.option({"--extra"})) {
      extras.clear();
      for (const std::string& item : args.list()) {
        std::size_t used = 0;
        const int v = std::stoi(item, &used);
        if (used != item.size() || v < 0 || v > 512)
          throw std::invalid_argument("'" + item + "' is not a count of stores in 0..512");
        extras.push_back(v);
      }
    } else if (args.option({"--messages"})) {
      messages = std::stoull(args.value());
    } else if (args.option({"--batches"})) {
      batches = std::stoi(args.value());
    } else {
      return false;
    }
    return true;
  });
  if (!ok || extras.empty() || messages == 0 || batches < 1) return args.usage();

  team_options opts = team_options::from_environment();
  opts.binding = binding_policy::compact;  // rank r on core r
  team t(2, opts);
  auto s = std::make_unique<stream>();
  std::vector<std::vector<double>> ns(extras.size()), alone_ns(extras.size());
  auto alone = std::make_unique<stream>();  // written by the sender alone
  std::uint64_t checksum = 0;
  run(t, [&](comm& cm) {
    std::vector<std::uint64_t> own(512);  // the sender's other stores go here
    volatile std::uint64_t* const sink = own.data();
    std::uint64_t next = 1, known_taken = 0, sum = 0;
    for (int b = -1; b < batches; ++b)  // batch -1 warms up: not counted
      for (std::size_t e = 0; e < extras.size(); ++e) {
        const int extra = extras[e];
        cm.barrier();
        const auto t0 = clock_type::now();
        for (std::uint64_t k = next; k < next + messages; ++k) {
          if (cm.rank() == 0) {
            for (int i = 0; i < extra; ++i) sink[i] = k;
            send(*s, k, known_taken);
          } else {
            sum += receive(*s, k);
          }
        }
        cm.barrier();
        if (cm.rank() == 0 && b >= 0) ns[e].push_back(seconds_since(t0) * 1e9 / static_cast<double>(messages));
        next += messages;
        if (cm.rank() == 0) {  // alone: its own ring, always with room
          const auto t1 = clock_type::now();
          for (std::uint64_t k = 1; k <= messages; ++k) {
            for (int i = 0; i < extra; ++i) sink[i] = k;
            std::uint64_t all_taken = k;
            send(*alone, k, all_taken);
          }
          if (b >= 0) alone_ns[e].push_back(seconds_since(t1) * 1e9 / static_cast<double>(messages));
        }
      }
    if (cm.rank() == 1) checksum = sum;
  });
  fmt::print("ns per message, median (min-max) of {} batches of {} messages\n", batches, messages);
  fmt::print("{:>6} {:>22} {:>22}\n", "extra", "stream", "sender alone");
  for (std::size_t e = 0; e < extras.size(); ++e) {
    const auto st = summarize(ns[e]), al = summarize(alone_ns[e]);
    fmt::print("{:>6} {:>8.1f} ({:>5.1f}-{:>5.1f}) {:>8.1f} ({:>5.1f}-{:>5.1f})\n", extras[e], st.median, st.min,
               st.max, al.median, al.min, al.max);
  }
  // Every message arrived once, in order: the receiver's sum of the payloads is 1 + ... + n.
  const std::uint64_t n = static_cast<std::uint64_t>(batches + 1) * extras.size() * messages;
  if (checksum != n * (n + 1) / 2) {
    fmt::print(stderr, "bench_store_queue: the receiver's sum {} is not {}\n", checksum, n * (n + 1) / 2);
    return 1;
  }
  return 0;
}
