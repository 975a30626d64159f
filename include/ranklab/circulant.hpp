// Round-optimal circulant-graph broadcast schedules.
//
// Source: J. L. Träff, "Optimal Broadcast Schedules in Logarithmic Time with Applications
// to Broadcast, All-Broadcast, Reduction and All-Reduction" ("the paper" below; see also
// docs/algorithms.md, "Circulant schedules"). For p ranks with q = ceil(log2 p) every rank
// computes, alone and without communication, a receive schedule and a send schedule of q
// entries each in O(log p) steps. With them, Algorithm 1 broadcasts n blocks from root 0
// in the optimal n - 1 + q rounds on the circulant graph with skips skip[0..q]
// (skip[q] == p); reduce, allgather(v), reduce-scatter and allreduce reuse the same
// schedules (run backwards and/or for all roots at once).
//
// Everything here is pure computation: no runtime, no threads, no heap allocation in the
// per-rank schedule functions (the verification helpers at the end do allocate).
//
// Ranks are always relative to the root: a collective with root `root` uses
// relative rank r' = (r - root + p) mod p. Block indices in a schedule lie in [-q, q-1]
// (the root's recv entries are all negative and its baseblock is q): negative entries are
// "virtual" blocks of earlier phases that become real blocks once the phase offset of
// Algorithm 1 is added (see for_each_round).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ranklab::circulant {

// Largest q supported. p <= 2^31 - 1 needs q <= 31.
inline constexpr int max_q = 32;
inline constexpr std::int64_t max_p = (std::int64_t{1} << 31) - 1;

// The circulant graph: q = ceil(log2 p), skip[q] = p and
// skip[k] = ceil(skip[k+1] / 2), so skip[0] = 1. In round i (k = i mod q) every rank r
// sends to (r + skip[k]) mod p and receives from (r - skip[k]) mod p.
struct skips {
  std::int64_t p = 1;
  int q = 0;
  std::array<std::int64_t, max_q + 1> skip{};  // entries above q are unused (zero)

  // Throws std::invalid_argument for p < 1 or p > 2^31 - 1.
  explicit skips(std::int64_t p);

  std::int64_t operator[](int k) const { return skip[static_cast<std::size_t>(k)]; }
  // (r + skip[k]) mod p and (r - skip[k]) mod p for 0 <= r < p, without a division.
  std::int64_t to(std::int64_t r, int k) const {
    const std::int64_t t = r + skip[static_cast<std::size_t>(k)];
    return t >= p ? t - p : t;
  }
  std::int64_t from(std::int64_t r, int k) const {
    const std::int64_t f = r - skip[static_cast<std::size_t>(k)];
    return f < 0 ? f + p : f;
  }
};

// Counters of one schedule computation (instrumentation for tests and `ranklab verify`;
// the bounds are at the end of this header). Always available through the overloads with
// a stats pointer; the plain overloads are compiled without the counting code, so they
// cost nothing (RANKLAB_INSTRUMENT is not needed for this).
struct schedule_stats {
  int violations = 0;       // send schedule: rounds that needed a receive schedule of
                            // the to-rank (Theorem 3: at most 4)
  int recursion_depth = 0;  // deepest nesting of the receive-schedule search (root call = 0)
  int recursive_calls = 0;  // recursive search calls (Lemma 5: at most q; measured q - 1)
  int search_steps = 0;     // iterations of the search loop (Lemma 6: O(q))
};

// The smallest skip index in the canonical (greedy) decomposition of r into distinct skips,
// i.e. the first real block that reaches rank r. baseblock(0) == q.
// O(log p). Requires 0 <= r < p.
int baseblock(const skips& s, std::int64_t r);

// Receive schedule of rank r (Algorithms 4 and 5 of the paper):
// recv[k] is the block r receives in round k of a phase from (r - skip[k]) mod p.
// Exactly one entry is non-negative (the baseblock), except at the root (all negative).
// recv.size() must be >= q; only recv[0..q-1] is written. O(log p), no heap allocation.
void recv_schedule(const skips& s, std::int64_t r, std::span<int> recv);
void recv_schedule(const skips& s, std::int64_t r, std::span<int> recv, schedule_stats* stats);

// Send schedule of rank r (Algorithm 6 of the paper): send[k] is the block r sends in
// round k of a phase to (r + skip[k]) mod p; it equals the recv[k] entry of that to-rank.
// O(log p) (at most 4 "violations" each cost one receive schedule), no heap
// allocation. With stats, violations counts those rounds and the recursion/search counters
// accumulate over the receive schedules computed for them (depth: maximum, others: sum).
void send_schedule(const skips& s, std::int64_t r, std::span<int> send);
void send_schedule(const skips& s, std::int64_t r, std::span<int> send, schedule_stats* stats);

// Both schedules of rank r with one baseblock computation (what a collective needs);
// returns the baseblock. With stats: the recursion/search counters of r's own receive
// schedule and the violations of its send schedule.
int schedules(const skips& s, std::int64_t r, std::span<int> recv, std::span<int> send,
              schedule_stats* stats = nullptr);

// The straightforward O(log^2 p) send schedule: send[k] = recv schedule of
// (r + skip[k]) mod p, entry k. The reference for tests and the benchmark.
void send_schedule_reference(const skips& s, std::int64_t r, std::span<int> send);

// ---- Algorithm 1: the rounds of an n-block broadcast ---------------------------------

// Number of real communication rounds of an n-block broadcast: n - 1 + q (0 when p == 1
// or n < 1: nothing to send).
int broadcast_rounds(const skips& s, int n);

// Real block index of schedule entry `entry` in the phase with offset `offset` for a
// broadcast of n blocks: -1 when negative (nothing to do), otherwise capped at n - 1.
inline int capped_block(int entry, int offset, int n) {
  const int b = entry + offset;
  return b < 0 ? -1 : (b > n - 1 ? n - 1 : b);
}

// What rank r (relative to the root) does in one real round of Algorithm 1.
struct round_plan {
  int round = 0;          // 0 .. n-2+q, the real round index
  int k = 0;              // skip index of the round: (round + x) mod q
  int offset = 0;         // phase offset added to schedule entries in this round
  std::int64_t to = 0;    // (r + skip[k]) mod p
  std::int64_t from = 0;  // (r - skip[k]) mod p
  int send_block = -1;    // block to send to `to`, or -1 (negative, or `to` is the root)
  int recv_block = -1;    // block to receive from `from`, or -1 (negative, or r is the root)
};

// The plan of real round `round` (0 <= round < broadcast_rounds(s, n)) of Algorithm 1 for
// rank r (0 <= r < p, relative to the root) with its schedules recv/send (q entries each),
// in O(1). The x = (q - (n-1) mod q) mod q leading virtual rounds are skipped, entries are
// shifted by the phase offset, capped at n - 1 and reported as -1 when negative; nothing is
// sent to the root and the root receives nothing. Send and receive of one round happen at
// once (one send-receive); a block received in round i can be sent from round i + 1 on.
// The reduction collectives run the same plans in reverse order with the roles swapped.
inline round_plan plan_round(const skips& s, int n, std::span<const int> recv, std::span<const int> send,
                             std::int64_t r, int round) {
  const int q = s.q;
  const int x = (q - (n - 1) % q) % q;
  const int virtual_round = round + x;
  round_plan plan;
  plan.round = round;
  plan.k = virtual_round % q;
  plan.offset = virtual_round / q * q - x;
  plan.to = s.to(r, plan.k);
  plan.from = s.from(r, plan.k);
  const auto uk = static_cast<std::size_t>(plan.k);
  plan.send_block = plan.to == 0 ? -1 : capped_block(send[uk], plan.offset, n);
  plan.recv_block = r == 0 ? -1 : capped_block(recv[uk], plan.offset, n);
  return plan;
}

// Calls fn(const round_plan&) for each of the n - 1 + q real rounds of Algorithm 1 in order:
// the same plans as plan_round for round = 0, 1, ..., computed incrementally. Nothing for
// p == 1 or n < 1.
template <class Fn>
void for_each_round(const skips& s, int n, std::span<const int> recv, std::span<const int> send, std::int64_t r,
                    Fn&& fn) {
  if (s.p == 1 || n < 1) return;
  const int q = s.q;
  const int x = (q - (n - 1) % q) % q;
  const int rounds = n - 1 + q;
  round_plan plan;
  plan.offset = -x;
  int k = x;  // x < q, so the first round is in phase 0
  for (int i = 0; i < rounds; ++i) {
    plan.round = i;
    plan.k = k;
    plan.to = s.to(r, k);
    plan.from = s.from(r, k);
    const auto uk = static_cast<std::size_t>(k);
    plan.send_block = plan.to == 0 ? -1 : capped_block(send[uk], plan.offset, n);
    plan.recv_block = r == 0 ? -1 : capped_block(recv[uk], plan.offset, n);
    fn(static_cast<const round_plan&>(plan));
    if (++k == q) {
      k = 0;
      plan.offset += q;
    }
  }
}

// ---- Verification (tests, `ranklab verify`) ------------------------------------------

// Outcome of a check: ok, or the first failure found, described for a human.
struct check_result {
  bool ok = true;
  std::string failure;  // empty when ok
  int rounds = 0;       // broadcast checks: number of real rounds simulated
  explicit operator bool() const { return ok; }
};

// The schedules of all p ranks of one circulant graph, for whole-graph checks. Laid out
// like the paper's tables: one row per round k, one column per rank, so that the
// neighbours (r +- skip[k]) mod p of consecutive ranks are consecutive too. Entries lie in
// [-q, q], so they are stored as bytes: p * (2q + 1) bytes.
struct schedule_table {
  std::int64_t p = 0;
  int q = 0;
  std::vector<std::int8_t> baseblock;     // [r], computed by baseblock()
  std::vector<std::int8_t> recv;          // [index(r, k)]
  std::vector<std::int8_t> send;          // [index(r, k)]
  schedule_stats max_stats;               // maximum of every counter over all ranks
  std::int64_t max_violations_rank = -1;  // the first rank reaching max_stats.violations

  std::size_t index(std::int64_t r, int k) const { return static_cast<std::size_t>(k * p + r); }
  int recv_at(std::int64_t r, int k) const { return recv[index(r, k)]; }
  int send_at(std::int64_t r, int k) const { return send[index(r, k)]; }
};

// Computes the table of all ranks with the O(log p) algorithms. Reuses out's storage.
void compute_schedule_table(const skips& s, schedule_table& out);

// The paper's four correctness conditions, for every rank of the table:
//  1. recv[k] of r == send[k] of (r - skip[k]) mod p  (receiver gets what the sender sends)
//  2. send[k] of r == recv[k] of (r + skip[k]) mod p  (sender sends what the receiver expects)
//  3. {recv[0..q-1]} of r == {b} u {-q..-1} \ {b - q} with b = baseblock(r): q different
//     blocks per phase, the baseblock the only non-negative one (root: {-q..-1})
//  4. send[k] of r != 0 is a block already held: recv[j] for some j < k, or b - q (the
//     baseblock of the previous phase); the root sends send[k] == k.
// The table's baseblocks are taken as given (compute_schedule_table uses baseblock()).
// O(p q).
check_result check_conditions(const skips& s, const schedule_table& t);

// Simulates Algorithm 1 with n blocks for all ranks of the table, without data, round by
// round as for_each_round lays them out: every non-root receives each block 0..n-1 exactly
// once within the n - 1 + q rounds, sender and receiver agree on the block in every round
// (and on whether there is one), and every block sent was received in an earlier round
// (or the sender is the root). O(p (n + q)); scratch is reused between calls.
// result.rounds is n - 1 + q (0 for p == 1).
check_result check_broadcast(const skips& s, const schedule_table& t, int n, std::vector<int>& scratch);
// The same for several n in one pass over the ranks (result.rounds: the largest).
check_result check_broadcast(const skips& s, const schedule_table& t, std::span<const int> block_counts,
                             std::vector<int>& scratch);

// Bounds, checked by tests/test_circulant_schedule.cpp and `ranklab verify` for every rank
// of every p in 1..65536 and for sampled ranks of p up to 2^31 - 1.
inline constexpr int max_violations = 4;  // Theorem 3 (4 first reached at p = 2049)
// Recursive calls of one receive-schedule search: Lemma 5 says at most q; the measured
// maximum is q - 1 (reached for every q from 2 on), so that is what is checked. The
// recursion depth is at most the number of calls.
inline constexpr int recursive_calls_bound(int q) { return q > 0 ? q - 1 : 0; }
inline constexpr int recursion_depth_bound(int q) { return recursive_calls_bound(q); }
// Iterations of the search loop of one receive schedule: Lemma 6 gives O(q) (every index
// scanned once, plus rescans after backtracking). Measured at most 3q + 7; 4q is checked.
inline constexpr int search_steps_bound(int q) { return q > 0 ? 4 * q : 1; }

}  // namespace ranklab::circulant
