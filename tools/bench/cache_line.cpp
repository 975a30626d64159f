// The cache-line round trip between two cores (see cache_line.hpp).
#include "bench/cache_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>

#include "bench/peers.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/team.hpp"

namespace ranklab::tools::bench {

namespace {

// The line bounced between the cores, alone in its 64 bytes.
struct alignas(64) bounced_line {
  std::atomic<std::uint64_t> value{0};
};

constexpr std::uint64_t stop = ~std::uint64_t{0};

// Asks for the line at `p` in a state this core may write: PREFETCHW on x86 (this file is
// built with -mprfchw, CMakeLists.txt), as the runtime issues it (mailbox/futex.hpp).
inline void prefetch_for_write(const void* p) { __builtin_prefetch(p, 1); }

// The second thread: answers every odd value v with v + 1 until told to stop, doing
// `between` first (the pull's copy; nothing for the round trip). It spins without pausing,
// as the floor is what the two cores can do.
template <class Between>
void echo(bounced_line& line, Between between) {
  std::uint64_t seen = 0;
  for (;;) {
    std::uint64_t v;
    while ((v = line.value.load(std::memory_order_acquire)) == seen || (v % 2 == 0 && v != stop)) {
    }
    if (v == stop) return;
    between();
    seen = v + 1;
    line.value.store(seen, std::memory_order_release);
  }
}

// The first thread's side: `iters` round trips on `line`, from `v` (even) on; the time of one.
double bounce(bounced_line& line, std::uint64_t& v, std::int64_t iters) {
  const auto t0 = clock_type::now();
  for (std::int64_t i = 0; i < iters; ++i) {
    line.value.store(v + 1, std::memory_order_release);
    while (line.value.load(std::memory_order_acquire) != v + 2) {
    }
    v += 2;
  }
  return seconds_since(t0) / static_cast<double>(iters);
}

// One thread's side of the flag exchange: its flag line and, for an exchange carrying data,
// outboxes used in turn (the other thread copies step k's while this one writes step
// k + 1's) and an inbox. The flag has its 128-byte pair of lines to itself and each
// outbox a page, so that neither thread's hardware prefetchers, which fetch a line's pair
// and run ahead within a page, take lines the other is writing (1 KiB exchanges: ~490 ->
// ~440 ns), as the runtime keeps its fence lines apart from the wide payloads, and
// successive calls' wide payloads a page apart.
constexpr std::size_t exchange_bytes_max = 1024;
constexpr std::size_t exchange_outboxes = 3;
struct exchange_side {
  alignas(128) bounced_line flag;
  alignas(4096) std::byte out[exchange_outboxes][4096];
  alignas(64) std::byte in[exchange_bytes_max];
};

// Step k of the exchange: write this side's data, announce k, wait for the other's k, copy
// its data. Returns false when the other side said stop.
bool exchange_step(exchange_side& mine, const exchange_side& theirs, std::uint64_t k, std::size_t bytes) {
  if (bytes > 0) std::memset(mine.out[k % exchange_outboxes], static_cast<int>(k), bytes);
  mine.flag.value.store(k, std::memory_order_release);
  // The next step's outbox taken for writing while this thread waits, as the runtime does
  // with its next fence payload, so that the floor is what the two cores can do, not what
  // a naive exchange does. The other thread read that outbox two steps ago and has
  // finished, having announced the step after.
  for (std::size_t at = 0; at < bytes; at += 64) prefetch_for_write(mine.out[(k + 1) % exchange_outboxes] + at);
  std::uint64_t v;
  while ((v = theirs.flag.value.load(std::memory_order_acquire)) < k) {
  }
  if (v == stop) return false;
  if (bytes > 0) {
    const std::byte* from = theirs.out[k % exchange_outboxes];
    // Every line requested at once, as in the stream below.
    for (std::size_t at = 64; at < bytes; at += 64) __builtin_prefetch(from + at);
    std::memcpy(mine.in, from, bytes);
  }
  return true;
}

// The one-way stream: a ring of slots, each a message's sequence number and data on whole
// lines of their own, as many as fit the runtime's express lane (8 KiB); the receiver's
// progress on a line of its own, read by the sender only when the ring looks full; and a
// stop flag, read-only while the stream runs.
constexpr std::size_t stream_ring_bytes = 8192;
struct stream_ring {
  std::atomic<bool> stop{false};
  alignas(64) std::atomic<std::uint64_t> taken{0};
  alignas(64) std::byte slots[stream_ring_bytes] = {};
  std::size_t slot_bytes = 64, count = 1;

  explicit stream_ring(std::size_t bytes)
      : slot_bytes((sizeof(std::uint64_t) + bytes + 63) / 64 * 64), count(stream_ring_bytes / slot_bytes) {}
  std::atomic<std::uint64_t>& seq(std::uint64_t k) {
    return *std::launder(reinterpret_cast<std::atomic<std::uint64_t>*>(slots + (k % count) * slot_bytes));
  }
  std::byte* data(std::uint64_t k) { return slots + (k % count) * slot_bytes + sizeof(std::uint64_t); }
};

// Message k of the stream, sent: wait for its slot only if the ring looks full, write the
// data, then the sequence number.
void stream_send(stream_ring& ring, std::uint64_t k, std::uint64_t& known_taken, const std::byte* src,
                 std::size_t bytes) {
  while (k - known_taken > ring.count) known_taken = ring.taken.load(std::memory_order_acquire);
  // The further lines first, then the line the receiver polls in one burst with the
  // number: a store to it between the others would let the poller take it back each time.
  const std::size_t head = std::min(bytes, 64 - sizeof(std::uint64_t));
  if (bytes > head) std::memcpy(ring.data(k) + head, src + head, bytes - head);
  std::memcpy(ring.data(k), src, head);
  ring.seq(k).store(k, std::memory_order_release);
}

// The receiving thread: takes messages 1, 2, ... into `dst` until the stop flag is set.
void stream_receive(stream_ring& ring, std::byte* dst, std::size_t bytes) {
  for (std::uint64_t k = 1;; ++k) {
    while (ring.seq(k).load(std::memory_order_acquire) != k)
      if (ring.stop.load(std::memory_order_relaxed)) return;
    // Every line of the message requested at once: a copy that meets them one by one waits
    // a crossing for each.
    for (std::size_t at = 64; at < sizeof(std::uint64_t) + bytes; at += 64) __builtin_prefetch(ring.data(k) + at);
    std::memcpy(dst, ring.data(k), bytes);
    ring.taken.store(k, std::memory_order_release);
  }
}

// The pull, the floor of a rooted call whose receiver copies straight from the sender's
// buffer (a rendezvous) rather than the sender copying into shared lines (the stream): the
// sender announces message k and may not go on before the receiver's answer (its buffer
// must not change while it is read); the receiver waits for k, copies the 1 KiB and
// answers. Both on one line, on a page of its own, as the round trip above: a line for
// each way took twice as long here (about 300 against 130 ns without the copy), so the
// floor is the round trip and the copy. The loop leaves the sender's buffer unchanged, as
// a benchmark that sends the same data again does, so after the first message its lines
// stay in the receiver's cache too.
struct pull_pair {
  alignas(4096) bounced_line line;  // bounced as the round trip's: odd announces, even answers
  alignas(4096) std::byte src[exchange_bytes_max] = {};
  alignas(4096) std::byte dst[exchange_bytes_max];
};

// What the pull's receiver does between the sender's two flags.
void pull_copy(pull_pair& pp) {
  for (std::size_t at = 64; at < exchange_bytes_max; at += 64) __builtin_prefetch(pp.src + at);
  std::memcpy(pp.dst, pp.src, exchange_bytes_max);
}

}  // namespace

cache_line_figures measure_cache_line(const timing_options& o) {
  cache_line_figures f;
  if (available_cores() < 2 || machine().cores < 2) {
    f.note = "one core: no second core to bounce a line to";
    return f;
  }
  team_options opts = team_options::from_environment();
  opts.binding = binding_policy::compact;  // rank r on core r, first hardware thread of each
  opts.deadlock_timeout = std::max(opts.deadlock_timeout, std::chrono::milliseconds(60000));
  team t(2, opts);
  bounced_line line;
  // The flag exchanges, without data and with 1 KiB, one after the other on fresh sides.
  const std::size_t carried[2] = {0, exchange_bytes_max};
  auto sides = std::make_unique<exchange_side[]>(4);
  // The streams, of 8 bytes and of 1 KiB, from rank 0 to rank 1.
  const std::size_t streamed[2] = {8, exchange_bytes_max};
  std::unique_ptr<stream_ring> rings[2] = {std::make_unique<stream_ring>(streamed[0]),
                                           std::make_unique<stream_ring>(streamed[1])};
  alignas(64) std::byte stream_src[exchange_bytes_max] = {}, stream_dst[exchange_bytes_max];
  auto pull = std::make_unique<pull_pair>();
  measurement m, x[2], s[2], pl;
  run(t, [&](comm& cm) {
    if (cm.rank() == 1) {
      echo(line, [] {});
      for (int e = 0; e < 2; ++e)
        for (std::uint64_t k = 1; exchange_step(sides[2 * e + 1], sides[2 * e], k, carried[e]); ++k) {
        }
      for (int e = 0; e < 2; ++e) stream_receive(*rings[e], stream_dst, streamed[e]);
      echo(pull->line, [&] { pull_copy(*pull); });
      return;
    }
    std::uint64_t v = 0;
    auto time_batch = [&](std::int64_t iters) { return bounce(line, v, iters); };
    auto stop_exchange = [&](int e) { sides[2 * e].flag.value.store(stop, std::memory_order_release); };
    auto stop_stream = [&](int e) { rings[e]->stop.store(true, std::memory_order_release); };
    auto stop_pull = [&] { pull->line.value.store(stop, std::memory_order_release); };
    int stage = -1;  // -1: the round trip, then exchange e, then stream e - 2, then the pull
    try {
      m = measure_batches(time_batch, o);
      line.value.store(stop, std::memory_order_release);
      for (stage = 0; stage < 2; ++stage) {
        std::uint64_t k = 0;
        x[stage] = measure_batches(
            [&](std::int64_t iters) {
              const auto t0 = clock_type::now();
              for (std::int64_t i = 0; i < iters; ++i)
                exchange_step(sides[2 * stage], sides[2 * stage + 1], ++k, carried[stage]);
              return seconds_since(t0) / static_cast<double>(iters);
            },
            o);
        stop_exchange(stage);
      }
      for (; stage < 4; ++stage) {
        const int e = stage - 2;
        std::uint64_t k = 0, known_taken = 0;
        s[e] = measure_batches(
            [&](std::int64_t iters) {
              const auto t0 = clock_type::now();
              for (std::int64_t i = 0; i < iters; ++i)
                stream_send(*rings[e], ++k, known_taken, stream_src, streamed[e]);
              return seconds_since(t0) / static_cast<double>(iters);
            },
            o);
        stop_stream(e);
      }
      std::uint64_t pv = 0;
      pl = measure_batches([&](std::int64_t iters) { return bounce(pull->line, pv, iters); }, o);
      stop_pull();
    } catch (...) {
      if (stage < 0) line.value.store(stop, std::memory_order_release);
      for (int e = std::max(stage, 0); e < 2; ++e) stop_exchange(e);
      for (int e = std::max(stage - 2, 0); e < 2; ++e) stop_stream(e);
      stop_pull();
      throw;
    }
  });
  const std::vector<binding_info> b = t.bindings();
  if (b.size() == 2 && b[0].core >= 0 && b[1].core >= 0 && b[0].core != b[1].core)
    f.placement = fmt::format("cores {} and {} (cpusets {} and {})", b[0].core, b[1].core, b[0].cpuset, b[1].cpuset);
  else
    f.placement =
        fmt::format("not pinned to two cores ({})", b.empty() || b[0].note.empty() ? "binding failed" : b[0].note);
  f.measured = true;
  f.round_trip_ns = m.usec.median * 1e3;
  f.crossing_ns = f.round_trip_ns / 2;
  f.min_ns = m.usec.min * 1e3;
  f.max_ns = m.usec.max * 1e3;
  f.batches = static_cast<int>(m.batch_seconds.size());
  f.exchange_ns = x[0].usec.median * 1e3;
  f.exchange_1kib_ns = x[1].usec.median * 1e3;
  f.stream_ns = s[0].usec.median * 1e3;
  f.stream_1kib_ns = s[1].usec.median * 1e3;
  f.pull_1kib_ns = pl.usec.median * 1e3;
  return f;
}

void add_cache_line(nlohmann::ordered_json& machine, const cache_line_figures& f) {
  auto ns = [&](double v) {
    return f.measured ? nlohmann::ordered_json(std::round(v * 10) / 10) : nlohmann::ordered_json(nullptr);
  };
  machine["cache_line_round_trip_ns"] = ns(f.round_trip_ns);
  machine["cache_line_crossing_ns"] = ns(f.crossing_ns);
  machine["flag_exchange_ns"] = ns(f.exchange_ns);
  machine["flag_exchange_1KiB_ns"] = ns(f.exchange_1kib_ns);
  machine["line_stream_ns"] = ns(f.stream_ns);
  machine["line_stream_1KiB_ns"] = ns(f.stream_1kib_ns);
  machine["line_pull_1KiB_ns"] = ns(f.pull_1kib_ns);
  if (f.measured)
    machine["cache_line_placement"] = f.placement;
  else
    machine["cache_line_note"] = f.note;
}

std::string describe(const cache_line_figures& f) {
  if (!f.measured) return "cache-line round trip: not measured (" + f.note + ")";
  return fmt::format(
      "cache-line round trip {:.1f} ns (one crossing {:.1f} ns; min {:.1f}, max {:.1f} over {} batches), flag "
      "exchange {:.1f} ns (with 1 KiB each way {:.1f} ns), one-way stream {:.1f} ns per 8 B message ({:.1f} ns "
      "per 1 KiB), 1 KiB pulled by the receiver {:.1f} ns, {}",
      f.round_trip_ns, f.crossing_ns, f.min_ns, f.max_ns, f.batches, f.exchange_ns, f.exchange_1kib_ns, f.stream_ns,
      f.stream_1kib_ns, f.pull_1kib_ns, f.placement);
}

}  // namespace ranklab::tools::bench
