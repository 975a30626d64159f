// The machine's own floor for anything that synchronises two threads, measured in the same
// run as the figures it explains: one 64-byte-aligned cache line holding an atomic counter
// bounced between two threads pinned to two different cores (the ranks' compact binding).
// The first thread writes an odd value and spins until the second, spinning on the same
// line, answers with the next even one: a round trip is two transfers of the line between
// the cores, one crossing is half of it. Timed with the ranks' statistics (timing.hpp: a
// calibrated batch of round trips, the median over batches).
// Then the flag exchange, the floor of a two-rank barrier (or of any call in which each of
// two ranks needs the other's few bytes): each thread owns a line, writes its k-th value
// there and spins until the other's line shows k too; both go at once, so a step costs
// the store reaching the other core and the other's store arriving, overlapped. Measured
// again with 1 KiB: each thread writes 1 KiB before its flag and copies the other's after
// (two buffers per thread, used by alternate steps): the floor of a 1 KiB exchange.
// Then the one-way stream, the floor of a run of rooted calls at p = 2 (a root's bcasts,
// the non-root's gathers): one thread writes message after message (8 bytes, then 1 KiB)
// into a ring of slots of 8 KiB in all, each slot the message's data and then its sequence
// number, and looks at the other's progress only when the ring looks full; the other polls
// the next slot, copies the data out and records its progress. The time per message at the
// sender, whose lead the ring bounds.
// Last the pull, the floor of the other way to make such a call: the receiver copies 1 KiB
// straight from the sender's unchanged buffer between two flags, and the sender waits for
// the second (cache_line.cpp, pull_pair).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "bench/timing.hpp"

namespace ranklab::tools::bench {

struct cache_line_figures {
  bool measured = false;
  double round_trip_ns = 0;  // median over batches
  double crossing_ns = 0;    // round_trip_ns / 2
  double min_ns = 0, max_ns = 0;
  int batches = 0;
  double exchange_ns = 0;       // one step of the flag exchange, median over batches
  double exchange_1kib_ns = 0;  // the same, each thread also copying the other's 1 KiB
  double stream_ns = 0;         // one 8-byte message of the one-way stream, median over batches
  double stream_1kib_ns = 0;    // one 1 KiB message of it
  double pull_1kib_ns = 0;      // one 1 KiB message pulled by the receiver, flags both ways
  std::string placement;        // "cores 0 and 1 (cpusets 0 and 1)", or why the threads are not pinned
  std::string note;             // why not measured
};

cache_line_figures measure_cache_line(const timing_options& o);

// Into a machine table: cache_line_round_trip_ns, cache_line_crossing_ns,
// flag_exchange_ns, flag_exchange_1KiB_ns, line_stream_ns, line_stream_1KiB_ns,
// line_pull_1KiB_ns (0.1 ns; null when not measured) and cache_line_placement (or
// cache_line_note).
void add_cache_line(nlohmann::ordered_json& machine, const cache_line_figures& f);

// "cache-line round trip 120 ns (one crossing 60 ns), cores 0 and 1" or why there is none.
std::string describe(const cache_line_figures& f);

}  // namespace ranklab::tools::bench
