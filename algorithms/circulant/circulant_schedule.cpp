// The schedule core: circulant-graph broadcast schedules after J. L. Träff, "Optimal
// Broadcast Schedules in Logarithmic Time with Applications to Broadcast, All-Broadcast,
// Reduction and All-Reduction" ("the paper" below).
//
// Computes the skips, the baseblock (O(log p)), the receive schedule by the depth-first
// search with unlinking of accepted skip indices (O(log p)), the send schedule with at most
// four "violations" (O(log p)), the O(log^2 p) reference send schedule, and whole-graph
// checks of the four correctness conditions and of Algorithm 1 (O(p (n + q)) per p).
#include "ranklab/circulant.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ranklab::circulant {

skips::skips(std::int64_t p_) : p(p_) {
  if (p_ < 1 || p_ > max_p)
    throw std::invalid_argument("circulant: p must be in 1.." + std::to_string(max_p) + ", got " + std::to_string(p_));
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
// Counts in a local copy (not through the caller's pointer, which the compiler would have
// to assume aliases the schedule being written).
struct counting_stats {
  schedule_stats counts;
  void step() { ++counts.search_steps; }
  void call(int depth) {
    ++counts.recursive_calls;
    counts.recursion_depth = std::max(counts.recursion_depth, depth);
  }
  void violation() { ++counts.violations; }
};

// The receive-schedule search (Algorithm 4 of the paper) for rank r: finds the
// intermediate ranks c_0 < c_1 < ... towards target = p + r (searching upwards from 0
// avoids modular arithmetic); the skip index e of the last hop to c_k gives recv[k] (the
// baseblock b when e == q, else block e - q). Stops once recv[0..limit-1] are known:
// entries are only ever appended, so a prefix is final as soon as it is filled.
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
void recv_search(const skips& s, std::int64_t r, int b, int* recv, int limit, Stats& stats) {
  const int q = s.q;
  if (limit == 0) return;
  const std::int64_t target = s.p + r;

  // The list of remaining skip indices 0..q, kept shifted up by one: bit e + 1 stands for
  // index e and bit 0 is a sentinel for "past the end" (-1), so a scan never sees 0.
  // The baseblock's index is removed: the path to r itself is not an intermediate.
  std::uint64_t remaining = ((std::uint64_t{4} << q) - 1) & ~(std::uint64_t{2} << b);
  auto next_below = [&remaining](int e) {  // next smaller remaining index, -1 at the end
    // The highest set bit h among bits 0..e stands for index h - 1. The sentinel keeps
    // the argument non-zero, so the bare count-leading-zeros instruction does.
    return 62 - __builtin_clzll(remaining & ((std::uint64_t{2} << e) - 1));
  };

  // Pending frames of the paper's recursion search(at, bound, e). A frame's `at` is fixed
  // (the caller's at + skip[e]), so only the caller's bound and e need saving.
  struct frame {
    std::int64_t bound;
    int e;
  };
  std::array<frame, max_q + 1> pending;
  int depth = 0;

  int found = 0;                                          // entries of recv filled so far
  std::int64_t lo = target - s[1];                        // an intermediate for round `found` must be > lo ...
  std::int64_t at = 0;                                    // the current frame's intermediate rank
  std::int64_t bound = 2 * s.p;                           // intermediates found must stay below bound ...
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
      if (depth == 0) return;
      const frame& f = pending[static_cast<std::size_t>(--depth)];
      e = f.e;
      at -= s[e];
      bound = f.bound;
    }
    bound = at + s[e];
    // Algorithm 5's final step, done on acceptance: the accepted index q (skip[q] = p, the
    // path all the way round) marks the round in which r receives its baseblock b; every
    // other index e becomes the negative block e - q, so that b is the only non-negative
    // entry (Condition 3).
    recv[found++] = e == q ? b : e - q;
    if (found == limit) return;
    remaining &= ~(std::uint64_t{2} << e);
    lim = std::min(lo, bound - 1);
    lo = target - s[found + 1];
    e = next_below(e);
  }
}

template <class Stats>
void recv_schedule_impl(const skips& s, std::int64_t r, int b, int* recv, Stats& stats) {
  recv_search(s, r, b, recv, s.q, stats);
}

template <class Stats>
int violation_block(const skips& s, std::int64_t r, int k, Stats& stats) {
  // What the to-rank receives in round k is, by Condition 2, what r must send. Its entry k
  // is final once k + 1 entries are found, so the search stops there.
  std::array<int, max_q> to_recv;
  stats.violation();
  const std::int64_t to = s.to(r, k);
  recv_search(s, to, baseblock(s, to), to_recv.data(), k + 1, stats);
  return to_recv[static_cast<std::size_t>(k)];
}

template <class Stats>
void send_schedule_impl(const skips& s, std::int64_t r, int b, int* send, Stats& stats) {
  const int q = s.q;
  if (q == 0) return;
  if (r == 0) {  // the root sends block k in round k
    for (int k = 0; k < q; ++k) send[k] = k;
    return;
  }
  std::int64_t v = r;    // virtual rank
  std::int64_t e = s.p;  // invariant: v < e
  int c = b;             // block to send while v stays in the lower part
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
  no_stats none;
  recv_schedule_impl(s, r, baseblock(s, r), recv.data(), none);
}

void recv_schedule(const skips& s, std::int64_t r, std::span<int> recv, schedule_stats* stats) {
  require_size(s, recv, "recv_schedule");
  if (stats == nullptr) return recv_schedule(s, r, recv);
  counting_stats counting;
  recv_schedule_impl(s, r, baseblock(s, r), recv.data(), counting);
  *stats = counting.counts;
}

void send_schedule(const skips& s, std::int64_t r, std::span<int> send) {
  require_size(s, send, "send_schedule");
  no_stats none;
  send_schedule_impl(s, r, baseblock(s, r), send.data(), none);
}

void send_schedule(const skips& s, std::int64_t r, std::span<int> send, schedule_stats* stats) {
  require_size(s, send, "send_schedule");
  if (stats == nullptr) return send_schedule(s, r, send);
  counting_stats counting;
  send_schedule_impl(s, r, baseblock(s, r), send.data(), counting);
  *stats = counting.counts;
}

int schedules(const skips& s, std::int64_t r, std::span<int> recv, std::span<int> send, schedule_stats* stats) {
  require_size(s, recv, "schedules");
  require_size(s, send, "schedules");
  const int b = baseblock(s, r);
  if (stats == nullptr) {
    no_stats none;
    recv_schedule_impl(s, r, b, recv.data(), none);
    send_schedule_impl(s, r, b, send.data(), none);
    return b;
  }
  // Recursion counters of r's own receive schedule; violations of its send schedule (the
  // receive schedules run for violations are other ranks' and not counted here).
  counting_stats own;
  recv_schedule_impl(s, r, b, recv.data(), own);
  counting_stats violations;
  send_schedule_impl(s, r, b, send.data(), violations);
  *stats = own.counts;
  stats->violations = violations.counts.violations;
  return b;
}

void send_schedule_reference(const skips& s, std::int64_t r, std::span<int> send) {
  require_size(s, send, "send_schedule_reference");
  std::array<int, max_q> to_recv;
  no_stats none;
  for (int k = 0; k < s.q; ++k) {
    const std::int64_t to = s.to(r, k);
    recv_schedule_impl(s, to, baseblock(s, to), to_recv.data(), none);
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

std::string where(const skips& s, std::int64_t r) { return "p=" + std::to_string(s.p) + " rank " + std::to_string(r); }

check_result fail(std::string what) { return {false, std::move(what), 0}; }

// Blocks of one phase as bits: entry v in [-q, q-1] is bit v + q (2q <= 62 bits).
std::uint64_t block_bit(int v, int q) { return std::uint64_t{1} << (v + q); }

}  // namespace

void compute_schedule_table(const skips& s, schedule_table& out) {
  const int q = s.q;
  out.p = s.p;
  out.q = q;
  out.baseblock.resize(static_cast<std::size_t>(s.p));
  out.recv.resize(static_cast<std::size_t>(s.p) * static_cast<std::size_t>(q));
  out.send.resize(out.recv.size());
  out.max_stats = {};
  out.max_violations_rank = -1;
  std::array<int, max_q> recv, send;
  for (std::int64_t r = 0; r < s.p; ++r) {
    schedule_stats st;
    const int b = schedules(s, r, recv, send, &st);
    if (st.violations > out.max_stats.violations || out.max_violations_rank < 0) out.max_violations_rank = r;
    raise_max(out.max_stats, st);
    out.baseblock[static_cast<std::size_t>(r)] = static_cast<std::int8_t>(b);
    for (int k = 0; k < q; ++k) {
      out.recv[out.index(r, k)] = static_cast<std::int8_t>(recv[static_cast<std::size_t>(k)]);
      out.send[out.index(r, k)] = static_cast<std::int8_t>(send[static_cast<std::size_t>(k)]);
    }
  }
}

namespace {

// Conditions 1 and 2 for all ranks at once: in round k every rank r receives what rank
// (r - skip[k]) mod p sends, i.e. row k of recv equals row k of send rotated by skip[k].
// (Condition 2 is the same set of equalities seen from the sender.) Two memcmp per row.
check_result check_rounds_agree(const skips& s, const schedule_table& t) {
  for (int k = 0; k < s.q; ++k) {
    const std::int8_t* recv = t.recv.data() + t.index(0, k);
    const std::int8_t* send = t.send.data() + t.index(0, k);
    const auto shift = static_cast<std::size_t>(s[k]), rest = static_cast<std::size_t>(s.p - s[k]);
    // ranks r >= skip[k] receive from r - skip[k]; ranks r < skip[k] from r - skip[k] + p
    if (std::memcmp(recv + shift, send, rest) == 0 && std::memcmp(recv, send + rest, shift) == 0) continue;
    for (std::int64_t r = 0; r < s.p; ++r) {
      const std::int64_t from = s.from(r, k);
      if (t.recv_at(r, k) != t.send_at(from, k))
        return fail(where(s, r) + ", round " + std::to_string(k) + ": conditions 1/2 (rank " + std::to_string(r) +
                    " receives " + std::to_string(t.recv_at(r, k)) + " but rank " + std::to_string(from) + " sends " +
                    std::to_string(t.send_at(from, k)) + ")");
    }
  }
  return {};
}

// Row pointers of the table, to gather one rank's column without multiplications.
struct table_rows {
  std::array<const std::int8_t*, max_q> recv, send;
  explicit table_rows(const schedule_table& t) {
    for (int k = 0; k < t.q; ++k) {
      recv[static_cast<std::size_t>(k)] = t.recv.data() + t.index(0, k);
      send[static_cast<std::size_t>(k)] = t.send.data() + t.index(0, k);
    }
  }
};

}  // namespace

check_result check_conditions(const skips& s, const schedule_table& t) {
  if (t.p != s.p || t.q != s.q) return fail("schedule table does not belong to p=" + std::to_string(s.p));
  if (auto agree = check_rounds_agree(s, t); !agree) return agree;
  const int q = s.q;
  const table_rows rows(t);
  const std::uint64_t negative_blocks = (std::uint64_t{1} << q) - 1;  // -q..-1
  for (std::int64_t r = 0; r < s.p; ++r) {
    const int b = t.baseblock[static_cast<std::size_t>(r)];
    // Condition 3: the phase's receive blocks are {b} u {-q..-1} \ {b - q} (root: {-q..-1}).
    // Condition 4: every block sent is held: received in an earlier round of this phase, or
    // the previous phase's baseblock b - q (the root holds everything and sends block k).
    std::uint64_t received = 0, sent_unheld = 0;
    std::uint64_t held = r == 0 ? 0 : block_bit(b - q, q);
    bool in_range = true;
    for (int k = 0; k < q; ++k) {
      const int rv = rows.recv[static_cast<std::size_t>(k)][r], sv = rows.send[static_cast<std::size_t>(k)][r];
      in_range &= rv >= -q && rv < q && sv >= -q && sv < q;
      if (!in_range) break;
      sent_unheld |= r == 0 ? (sv != k) : (held & block_bit(sv, q)) == 0;
      received |= block_bit(rv, q);
      held |= block_bit(rv, q);
    }
    if (!in_range) return fail(where(s, r) + ": schedule entry out of range [-q, q-1]");
    const std::uint64_t expected =
        r == 0 ? negative_blocks : (negative_blocks & ~block_bit(b - q, q)) | block_bit(b, q);
    if (received != expected) return fail(where(s, r) + ": condition 3 (recv entries are not {b} u {-q..-1} \\ {b-q})");
    if (sent_unheld != 0) {
      held = r == 0 ? 0 : block_bit(b - q, q);
      for (int k = 0; k < q; ++k) {
        const int sv = t.send_at(r, k);
        if (r == 0 ? sv != k : (held & block_bit(sv, q)) == 0)
          return fail(where(s, r) + ", round " + std::to_string(k) + ": condition 4 (sends block " +
                      std::to_string(sv) + " not received before)");
        held |= block_bit(t.recv_at(r, k), q);
      }
    }
  }
  return {};
}

namespace {

// One broadcast to check: n blocks, x leading virtual rounds, n - 1 + q real rounds, and
// the block slot of every value an entry can take once a phase offset is added:
// slot[v + base] = min(v, n - 1) for v >= 0 and n ("no block") for v < 0.
struct broadcast_case {
  int n, x, rounds, base;
  std::vector<int> slot;

  // Entries lie in [not_sent, q-1], offsets in [-x, rounds].
  broadcast_case(int n_, int q, int not_sent)
      : n(n_), x((q - (n_ - 1) % q) % q), rounds(n_ - 1 + q), base(x - not_sent) {
    slot.resize(static_cast<std::size_t>(base + q + rounds + 1));
    for (int i = 0; i < static_cast<int>(slot.size()); ++i)
      slot[static_cast<std::size_t>(i)] = i - base < 0 ? n : std::min(i - base, n - 1);
  }
};

// Marks, in a rank's local copy of its send entries, the round in which it would send to
// the root: stays negative after every phase offset of n <= max_n blocks, so nothing is sent.
int not_sent_value(int max_n, int q) { return -(max_n + 3 * q); }

// Algorithm 1 for one non-root rank with its schedule column recv/send (sends to the root
// already replaced by not_sent_value()), fast path: no branches that depend on the data.
// scratch[b] = real round in which block b arrived, -1 before; scratch has n + 1 slots and
// slot n absorbs "no block" (it always holds a value >= 0). Returns false if anything is
// wrong; the slow path then says what.
bool rank_broadcast_ok(int q, const broadcast_case& bc, const int* recv, const int* send, int* scratch) {
  const int n = bc.n;
  std::fill(scratch, scratch + n, -1);
  scratch[n] = 0;
  unsigned bad = 0;
  int received = 0;
  int i = 0;  // real round
  for (int offset = -bc.x, first_k = bc.x; i < bc.rounds; offset += q, first_k = 0) {
    const int* slot = bc.slot.data() + bc.base + offset;  // slot[v]: block of entry v
    const int end_k = std::min(q, first_k + bc.rounds - i);
    for (int k = first_k; k < end_k; ++k, ++i) {
      const int give = slot[send[k]], got = slot[recv[k]];
      bad |= static_cast<unsigned>(scratch[give]) >> 31;  // sends a block not held yet
      const int real = got < n;
      bad |= (static_cast<unsigned>(~scratch[got]) >> 31) & real;  // arrived before: twice
      scratch[got] = i;
      received += real;
    }
  }
  // n different blocks received, none twice: all of 0..n-1 arrived.
  return bad == 0 && received == n;
}

// The same simulation with branches, to describe the first problem of a failing rank.
check_result describe_rank_broadcast(const skips& s, std::int64_t r, const broadcast_case& bc, const int* recv,
                                     const int* send, std::vector<int>& scratch) {
  const int q = s.q;
  const int n = bc.n, x = bc.x, rounds = bc.rounds;
  auto failure = [&](int round, int k, const std::string& what) {
    return fail(where(s, r) + ", n=" + std::to_string(n) + ", round " + std::to_string(round) +
                " (k=" + std::to_string(k) + "): " + what);
  };
  std::fill(scratch.begin(), scratch.begin() + n, -1);
  int k = x, offset = -x;
  for (int i = 0; i < rounds; ++i) {
    const int give = capped_block(send[k], offset, n);  // -1 for not_sent: to the root
    if (give >= 0 && scratch[static_cast<std::size_t>(give)] < 0)
      return failure(i, k, "sends block " + std::to_string(give) + " before receiving it");
    const int got = capped_block(recv[k], offset, n);
    if (got >= 0) {
      auto& arrived = scratch[static_cast<std::size_t>(got)];
      if (arrived >= 0)
        return failure(
            i, k, "receives block " + std::to_string(got) + " again (first in round " + std::to_string(arrived) + ")");
      arrived = i;
    }
    if (++k == q) {
      k = 0;
      offset += q;
    }
  }
  const auto missing = std::find(scratch.begin(), scratch.begin() + n, -1);
  if (missing != scratch.begin() + n)
    return fail(where(s, r) + ", n=" + std::to_string(n) + ": never receives block " +
                std::to_string(missing - scratch.begin()) + " in " + std::to_string(rounds) + " rounds");
  return fail(where(s, r) + ", n=" + std::to_string(n) + ": broadcast check failed");
}

}  // namespace

check_result check_broadcast(const skips& s, const schedule_table& t, std::span<const int> block_counts,
                             std::vector<int>& scratch) {
  if (t.p != s.p || t.q != s.q) return fail("schedule table does not belong to p=" + std::to_string(s.p));
  const int q = s.q;
  check_result result;
  int max_n = 0;
  for (int n : block_counts) {
    if (n < 1) return fail("check_broadcast: n must be >= 1, got " + std::to_string(n));
    max_n = std::max(max_n, n);
    result.rounds = std::max(result.rounds, broadcast_rounds(s, n));
  }
  if (s.p == 1) return result;  // the root alone: nothing to send
  const int not_sent = not_sent_value(max_n, q);
  std::vector<broadcast_case> cases;
  for (int n : block_counts) cases.emplace_back(n, q, not_sent);
  scratch.resize(static_cast<std::size_t>(max_n) + 1);
  // Sender and receiver agree in every round: both apply the same offset and cap to the
  // same entry (and the from-rank of a non-root sends to it, not to the root).
  if (auto agree = check_rounds_agree(s, t); !agree) return agree;
  const table_rows rows(t);
  std::array<int, max_q> recv, send;
  for (std::int64_t r = 1; r < s.p; ++r) {  // the root receives nothing and holds everything
    bool in_range = true;                   // the block slot tables cover entries in [-q, q-1]
    for (int k = 0; k < q; ++k) {
      const auto uk = static_cast<std::size_t>(k);
      recv[uk] = rows.recv[uk][r];
      send[uk] = rows.send[uk][r];
      in_range &= recv[uk] >= -q && recv[uk] < q && send[uk] >= -q && send[uk] < q;
      if (s[k] == s.p - r) send[uk] = not_sent;  // nothing goes to the root
    }
    if (!in_range) return fail(where(s, r) + ": schedule entry out of range [-q, q-1]");
    for (const auto& bc : cases)
      if (!rank_broadcast_ok(q, bc, recv.data(), send.data(), scratch.data()))
        return describe_rank_broadcast(s, r, bc, recv.data(), send.data(), scratch);
  }
  return result;
}

check_result check_broadcast(const skips& s, const schedule_table& t, int n, std::vector<int>& scratch) {
  const int counts[] = {n};
  return check_broadcast(s, t, counts, scratch);
}

}  // namespace ranklab::circulant
