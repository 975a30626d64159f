// Circulant-graph broadcast schedules (J. L. Träff, seed 000; docs/algorithms.md 1.1-1.5).
//
// Computes the skips, the baseblock (O(log p)), the receive schedule by the depth-first
// search with unlinking of accepted skip indices (O(log p)), the send schedule with at most
// four "violations" (O(log p)), the O(log^2 p) reference send schedule, and whole-graph
// checks of the four correctness conditions and of Algorithm 1 (O(p (n + q)) per p).
#include "ranklab/circulant.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace ranklab::circulant {

skips::skips(std::int64_t p_) : p(p_) {
  if (p_ < 1 || p_ > max_p)
    throw std::invalid_argument("circulant: p must be in 1.." + std::to_string(max_p) +
                                ", got " + std::to_string(p_));
  q = 0;
  while ((std::int64_t{1} << q) < p) ++q;
  skip[static_cast<std::size_t>(q)] = p;
  for (int k = q - 1; k >= 0; --k) {
    const auto next = skip[static_cast<std::size_t>(k + 1)];
    skip[static_cast<std::size_t>(k)] = next - next / 2;  // ceil(next / 2)
  }
}

int baseblock(const skips& s, std::int64_t r) {
  // Greedy decomposition of r into distinct skips from the largest down; the last skip
  // that completes the sum is the smallest one of the canonical skip sequence.
  std::int64_t t = 0;
  for (int k = s.q - 1; k >= 0; --k) {
    const std::int64_t c = t + s[k];
    if (c == r) return k;
    if (c < r) t = c;
  }
  return s.q;  // only r == 0 (the root)
}

namespace {

// No-op counters for the plain overloads, so the instrumented code compiles away.
struct no_stats {
  void step() {}
  void call(int) {}
  void violation() {}
};
struct counting_stats {
  schedule_stats* out;
  void step() { ++out->search_steps; }
  void call(int depth) {
    ++out->recursive_calls;
    out->recursion_depth = std::max(out->recursion_depth, depth);
  }
  void violation() { ++out->violations; }
};

// The receive-schedule search (Algorithm 4 of the paper, algorithms.md 1.3) for rank r:
// finds the intermediate ranks c_0 < c_1 < ... towards target = p + r (searching upwards
// from 0 avoids modular arithmetic); the skip index e of the last hop to c_k gives recv[k]
// (the baseblock when e == q, else block e - q). Returns r's baseblock. Stops once
// recv[0..limit-1] are known: entries are only ever appended, so a prefix is final as soon
// as it is filled.
//
// Two representation choices keep it fast without changing what it computes:
//  * The paper keeps the remaining skip indices in a doubly linked list in decreasing order
//    and unlinks an accepted index (what makes the search O(log p)). Here the list is a bit
//    mask: "next smaller remaining index" is a bit scan and unlinking clears a bit, both
//    O(1), and setting the list up is O(1) instead of O(q).
//  * The paper's search is recursive: search(at, bound, e) may call search(c, bound, e)
//    before accepting c. Here the pending frames live on a small explicit stack (depth < q)
//    so that the state stays in registers.
// tests/test_circulant_schedule.cpp checks both against a literal transcription.
template <class Stats>
int recv_search(const skips& s, std::int64_t r, int* recv, int limit, Stats stats) {
  const int q = s.q;
  const int b = baseblock(s, r);
  if (limit == 0) return b;
  const std::int64_t target = s.p + r;

  // The list of remaining skip indices 0..q, kept shifted up by one: bit e + 1 stands for
  // index e and bit 0 is a sentinel for "past the end" (-1), so a scan never sees 0.
  // The baseblock's index is removed: the path to r itself is not an intermediate.
  std::uint64_t remaining = ((std::uint64_t{4} << q) - 1) & ~(std::uint64_t{2} << b);
  auto next_below = [&remaining](int e) {  // next smaller remaining index, -1 at the end
    // the highest set bit h among bits 0..e stands for index h - 1
    return 62 - std::countl_zero(remaining & ((std::uint64_t{2} << e) - 1));
  };

  // Pending frames of the paper's recursion search(at, bound, e). A frame's `at` is fixed
  // (the caller's at + skip[e]), so only the caller's bound and e need saving.
  struct frame {
    std::int64_t bound;
    int e;
  };
  std::array<frame, max_q + 1> pending;
  int depth = 0;

  int found = 0;                  // entries of recv filled so far
  std::int64_t lo = target - s[1];  // an intermediate for round `found` must be > lo ...
  std::int64_t at = 0;            // the current frame's intermediate rank
  std::int64_t bound = 2 * s.p;   // intermediates found must stay below bound ...
  std::int64_t lim = std::min(target - s[0], bound - 1);  // ... and <= target - skip[found]
  int e = q;
  for (;;) {
    // Scan the list down from e for the largest hop from `at` that stays <= lim.
    while (e >= 0) {
      stats.step();
      if (at + s[e] <= lim) break;
      e = next_below(e);
    }
    if (e >= 0 && at + s[e] <= lo) {  // recurse: look for an intermediate closer to target
      pending[static_cast<std::size_t>(depth++)] = {bound, e};
      stats.call(depth);
      at += s[e];
      continue;
    }
    // Accept c = at + skip[e] for round `found`, unless this frame is done or its interval
    // is already filled (at > lo): then return to the caller, which tries its own c.
    while (e < 0 || at > lo) {
      if (depth == 0) return b;
      const frame& f = pending[static_cast<std::size_t>(--depth)];
      e = f.e;
      at -= s[e];
      bound = f.bound;
    }
    bound = at + s[e];
    // Only the baseblock stays non-negative (Condition 3): the hop of index q (round
    // `found` receives r's own baseblock from the root's direction); every other accepted
    // index e becomes block e - q of the previous phase.
    recv[found++] = e == q ? b : e - q;
    if (found == limit) return b;
    remaining &= ~(std::uint64_t{2} << e);
    lim = std::min(lo, bound - 1);
    lo = target - s[found + 1];
    e = next_below(e);
  }
}

template <class Stats>
void recv_schedule_impl(const skips& s, std::int64_t r, int* recv, Stats stats) {
  recv_search(s, r, recv, s.q, stats);
}

template <class Stats>
int violation_block(const skips& s, std::int64_t r, int k, Stats stats) {
  // What the to-rank receives in round k is, by Condition 2, what r must send. Its entry k
  // is final once k + 1 entries are found, so the search stops there.
  std::array<int, max_q> to_recv;
  stats.violation();
  recv_search(s, s.to(r, k), to_recv.data(), k + 1, stats);
  return to_recv[static_cast<std::size_t>(k)];
}

template <class Stats>
void send_schedule_impl(const skips& s, std::int64_t r, int* send, Stats stats) {
  const int q = s.q;
  if (q == 0) return;
  if (r == 0) {  // the root sends block k in round k
    for (int k = 0; k < q; ++k) send[k] = k;
    return;
  }
  const int b = baseblock(s, r);
  std::int64_t v = r;  // virtual rank
  std::int64_t e = s.p;  // invariant: v < e
  int c = b;  // block to send while v stays in the lower part
  for (int k = q - 1; k >= 1; --k) {
    if (v < s[k]) {  // lower part: send again what was sent in round k+1 ...
      if (v + s[k] < e || e < s[k - 1] || (k == 1 && b > 0))
        send[k] = c;
      else  // ... unless the to-rank might already have it
        send[k] = violation_block(s, r, k, stats);
      if (e > s[k]) e = s[k];
    } else {  // upper part: send block k - q (Observation 6)
      c = k - q;
      e -= s[k];
      if (v > s[k] || v <= e || k == 1 || e < s[k - 1])
        send[k] = c;
      else
        send[k] = violation_block(s, r, k, stats);
      v -= s[k];
    }
  }
  send[0] = b - q;
}

void require_size(const skips& s, std::span<int> a, const char* what) {
  if (a.size() < static_cast<std::size_t>(s.q))
    throw std::invalid_argument(std::string("circulant: ") + what + " needs q entries");
}

}  // namespace

void recv_schedule(const skips& s, std::int64_t r, std::span<int> recv) {
  require_size(s, recv, "recv_schedule");
  recv_schedule_impl(s, r, recv.data(), no_stats{});
}

void recv_schedule(const skips& s, std::int64_t r, std::span<int> recv, schedule_stats* stats) {
  require_size(s, recv, "recv_schedule");
  if (stats == nullptr) return recv_schedule_impl(s, r, recv.data(), no_stats{});
  *stats = {};
  recv_schedule_impl(s, r, recv.data(), counting_stats{stats});
}

void send_schedule(const skips& s, std::int64_t r, std::span<int> send) {
  require_size(s, send, "send_schedule");
  send_schedule_impl(s, r, send.data(), no_stats{});
}

void send_schedule(const skips& s, std::int64_t r, std::span<int> send, schedule_stats* stats) {
  require_size(s, send, "send_schedule");
  if (stats == nullptr) return send_schedule_impl(s, r, send.data(), no_stats{});
  *stats = {};
  send_schedule_impl(s, r, send.data(), counting_stats{stats});
}

void send_schedule_reference(const skips& s, std::int64_t r, std::span<int> send) {
  require_size(s, send, "send_schedule_reference");
  std::array<int, max_q> to_recv;
  for (int k = 0; k < s.q; ++k) {
    recv_schedule_impl(s, s.to(r, k), to_recv.data(), no_stats{});
    send[static_cast<std::size_t>(k)] = to_recv[static_cast<std::size_t>(k)];
  }
}

int broadcast_rounds(const skips& s, int n) {
  if (s.p == 1 || n < 1) return 0;
  return n - 1 + s.q;
}

// ---- verification -------------------------------------------------------------------

namespace {

void raise_max(schedule_stats& m, const schedule_stats& x) {
  m.violations = std::max(m.violations, x.violations);
  m.recursion_depth = std::max(m.recursion_depth, x.recursion_depth);
  m.recursive_calls = std::max(m.recursive_calls, x.recursive_calls);
  m.search_steps = std::max(m.search_steps, x.search_steps);
}

std::string where(const skips& s, std::int64_t r) {
  return "p=" + std::to_string(s.p) + " rank " + std::to_string(r);
}

check_result fail(std::string what) { return {false, std::move(what), 0}; }

// Condition 3 for one rank: the q receive entries are {b} u {-q..-1} \ {b - q}.
bool receives_distinct_blocks(const schedule_table& t, std::int64_t r, int b) {
  const int q = t.q;
  std::uint64_t seen = 0;  // bit v + q for entry v in [-q, q-1]; 2q <= 62 bits
  for (int k = 0; k < q; ++k) {
    const int v = t.recv_at(r, k);
    if (v < -q || v >= q) return false;
    seen |= std::uint64_t{1} << (v + q);
  }
  std::uint64_t expected = ((std::uint64_t{1} << q) - 1);  // -q..-1
  if (r != 0) expected = (expected & ~(std::uint64_t{1} << b)) | (std::uint64_t{1} << (b + q));
  return seen == expected;
}

// Condition 4 for one non-root rank and round k.
bool sends_held_block(const schedule_table& t, std::int64_t r, int b, int k) {
  const int v = t.send_at(r, k);
  if (v == b - t.q) return true;
  for (int j = 0; j < k; ++j)
    if (t.recv_at(r, j) == v) return true;
  return false;
}

}  // namespace

void compute_schedule_table(const skips& s, schedule_table& out) {
  const int q = s.q;
  const auto cells = static_cast<std::size_t>(s.p) * static_cast<std::size_t>(q);
  out.p = s.p;
  out.q = q;
  out.baseblock.resize(static_cast<std::size_t>(s.p));
  out.recv.resize(cells);
  out.send.resize(cells);
  out.max_stats = {};
  out.max_violations_rank = -1;
  std::array<int, max_q> recv, send;
  for (std::int64_t r = 0; r < s.p; ++r) {
    schedule_stats rs, ss;
    recv_schedule(s, r, recv, &rs);
    send_schedule(s, r, send, &ss);
    // Recursion counters come from this rank's own receive schedule; those of the
    // receive schedules run for send violations belong to other ranks' rows.
    rs.violations = ss.violations;
    if (ss.violations > out.max_stats.violations || out.max_violations_rank < 0)
      out.max_violations_rank = r;
    raise_max(out.max_stats, rs);
    out.baseblock[static_cast<std::size_t>(r)] = static_cast<std::int8_t>(baseblock(s, r));
    auto* rrow = out.recv.data() + r * q;
    auto* srow = out.send.data() + r * q;
    for (int k = 0; k < q; ++k) {
      rrow[k] = static_cast<std::int8_t>(recv[static_cast<std::size_t>(k)]);
      srow[k] = static_cast<std::int8_t>(send[static_cast<std::size_t>(k)]);
    }
  }
}

check_result check_conditions(const skips& s, const schedule_table& t) {
  if (t.p != s.p || t.q != s.q) return fail("schedule table does not belong to p=" + std::to_string(s.p));
  const int q = s.q;
  for (std::int64_t r = 0; r < s.p; ++r) {
    const int b = t.baseblock[static_cast<std::size_t>(r)];
    if (b != baseblock(s, r)) return fail(where(s, r) + ": wrong baseblock " + std::to_string(b));
    if (!receives_distinct_blocks(t, r, b))
      return fail(where(s, r) + ": condition 3 (recv entries are not {b} u {-q..-1} \\ {b-q})");
    for (int k = 0; k < q; ++k) {
      const std::int64_t from = s.from(r, k), to = s.to(r, k);
      if (t.recv_at(r, k) != t.send_at(from, k))
        return fail(where(s, r) + ", round " + std::to_string(k) + ": condition 1 (recv " +
                    std::to_string(t.recv_at(r, k)) + " but rank " + std::to_string(from) +
                    " sends " + std::to_string(t.send_at(from, k)) + ")");
      if (t.send_at(r, k) != t.recv_at(to, k))
        return fail(where(s, r) + ", round " + std::to_string(k) + ": condition 2 (send " +
                    std::to_string(t.send_at(r, k)) + " but rank " + std::to_string(to) +
                    " receives " + std::to_string(t.recv_at(to, k)) + ")");
      if (r == 0 ? t.send_at(r, k) != k : !sends_held_block(t, r, b, k))
        return fail(where(s, r) + ", round " + std::to_string(k) + ": condition 4 (sends block " +
                    std::to_string(t.send_at(r, k)) + " not received before)");
    }
  }
  return {};
}

check_result check_broadcast(const skips& s, const schedule_table& t, int n,
                             std::vector<int>& scratch) {
  if (n < 1) return fail("check_broadcast: n must be >= 1");
  const int q = s.q;
  const int rounds = broadcast_rounds(s, n);
  // scratch[b] = real round in which block b arrived at the current rank, -1 before.
  scratch.resize(static_cast<std::size_t>(n));
  std::array<int, max_q> recv, send;
  check_result result;
  result.rounds = rounds;
  for (std::int64_t r = 0; r < s.p && result.ok; ++r) {
    for (int k = 0; k < q; ++k) {
      recv[static_cast<std::size_t>(k)] = t.recv_at(r, k);
      send[static_cast<std::size_t>(k)] = t.send_at(r, k);
    }
    std::fill(scratch.begin(), scratch.end(), -1);
    int seen_rounds = 0;
    auto report = [&](const round_plan& pl, const std::string& what) {
      if (!result.ok) return;
      result.ok = false;
      result.failure = where(s, r) + ", n=" + std::to_string(n) + ", round " +
                       std::to_string(pl.round) + " (k=" + std::to_string(pl.k) + "): " + what;
    };
    for_each_round(s, n, recv, send, r, [&](const round_plan& pl) {
      ++seen_rounds;
      // The sender's view of this round must match ours (it may not send to the root).
      const int sent_to_us = r == 0 ? -1 : capped_block(t.send_at(pl.from, pl.k), pl.offset, n);
      if (sent_to_us != pl.recv_block)
        report(pl, "receives block " + std::to_string(pl.recv_block) + " but rank " +
                       std::to_string(pl.from) + " sends " + std::to_string(sent_to_us));
      if (pl.send_block >= 0 && r != 0 && scratch[static_cast<std::size_t>(pl.send_block)] < 0)
        report(pl, "sends block " + std::to_string(pl.send_block) + " before receiving it");
      if (pl.recv_block >= 0) {
        auto& arrived = scratch[static_cast<std::size_t>(pl.recv_block)];
        if (arrived >= 0)
          report(pl, "receives block " + std::to_string(pl.recv_block) + " again (first in round " +
                         std::to_string(arrived) + ")");
        arrived = pl.round;
      }
    });
    if (!result.ok) break;
    if (seen_rounds != rounds)
      return fail(where(s, r) + ": " + std::to_string(seen_rounds) + " rounds, expected " +
                  std::to_string(rounds));
    if (r != 0) {
      const auto missing = std::find(scratch.begin(), scratch.end(), -1);
      if (missing != scratch.end())
        return fail(where(s, r) + ", n=" + std::to_string(n) + ": never receives block " +
                    std::to_string(missing - scratch.begin()));
    }
  }
  return result;
}

}  // namespace ranklab::circulant
