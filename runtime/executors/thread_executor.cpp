// The thread executor's round interpreter (see executors/thread_executor.hpp). A round
// is: pre steps, the fence if it has one, post the send, take the receive, wait until the
// receiver has released a send it reads from our memory, post steps. Each stage is
// remembered in the operation, so advance() can stop at any of them and resume there.
#include "executors/thread_executor.hpp"

#include <fmt/format.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>

#include "executors/progress_thread.hpp"
#include "executors/schedule_cache.hpp"
#include "mailbox/futex.hpp"
#include "mailbox/protocol.hpp"
#include "ranklab/errors.hpp"

namespace ranklab::detail {

namespace {

// Another rank's buffers for a direct read in call `call` (published when its operation
// started; the schedule's fence guarantees that happened before we read).
struct remote_context {
  team_state* t;
  int me;
  const operation* op;
};
constexpr const char* in_another_call =
    "is in a different call of that number (other collective, root, counts, type, operator or algorithm)";

// The error of a call whose peer is not in the same call: names both ranks, raised by `me`.
// `theirs`, the peer's call signature when known: one that differs from ours in the root
// alone (signature_with_root) is reported as a root mismatch (team_state::root_mismatch).
[[noreturn]] void throw_peer_mismatch(const remote_context& c, int peer, const char* why,
                                      std::optional<std::uint64_t> theirs = std::nullopt) {
  const operation& op = *c.op;
  c.t->check_failure(c.me, op.name);  // the peer withdrew after a failure: report that one
  const auto coll = static_cast<collective>(op.tag.coll);
  if (theirs && op.entry && op.tag.coll != point_to_point && is_rooted(coll))
    for (int root = 0; root < c.t->p; ++root)
      if (root != op.tag.root && signature_with_root(*op.entry, root) == *theirs)
        throw mismatch_error(c.me, op.name,
                             c.t->root_mismatch(coll, op.tag.call, {{c.me, op.tag.root}, {peer, root}}) +
                                 fmt::format(" ({} read {}'s call signature)", c.t->rank_text(c.me),
                                             c.t->rank_text(peer)));
  throw mismatch_error(c.me, op.name,
                       fmt::format("collective mismatch{}: {} is in collective #{}{}, but {} {}", c.t->comm_text(),
                                   c.t->rank_text(c.me), op.tag.call, op.entry ? " [" + op.entry->text + "]" : "",
                                   c.t->rank_text(peer), why));
}
using published_buffers = rank_slot::published_buffers;

// Entries that others read while their owner may rewrite them for a later call (published
// buffers, fence lines) are sequence locks over `call`: the owner sets it to 0, writes the
// rest, then sets it to the call's number. Invalidating first keeps a reader of the slot's
// previous call from pairing that call's number with the next call's contents.
template <class Entry, class Write>
void write_for_call(Entry& entry, std::uint32_t call, Write&& write) {
  entry.call.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  write(entry);
  entry.call.store(call, std::memory_order_release);
}

// The signature `entry` holds for call `call`, or nothing when its owner is not in that
// call: it withdrew, or it has moved on to a later call of the same slot and may already
// have written that call's signature.
template <class Entry>
std::optional<std::uint64_t> signature_for_call(const Entry& entry, std::uint32_t call) {
  if (entry.call.load(std::memory_order_acquire) != call) return std::nullopt;
  const std::uint64_t signature = entry.signature.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (entry.call.load(std::memory_order_relaxed) != call) return std::nullopt;
  return signature;
}

// Makes this rank's buffers of `op` readable by the others (shared-memory direct
// algorithms) and its signature checkable.
void publish(published_buffers& entry, const operation& op) {
  write_for_call(entry, op.tag.call, [&](published_buffers& e) {
    e.table.store(&op.buffers, std::memory_order_relaxed);
    e.signature.store(op.tag.signature, std::memory_order_relaxed);
  });
}

const buffer_table* remote_buffers(const void* context, int rank) {
  const auto& c = *static_cast<const remote_context*>(context);
  const std::uint32_t call = c.op->tag.call;
  const auto& entry = c.t->slots[rank].published[call % call_slots];
  // The fence before every direct read guarantees the owner published them, unless it has
  // left the call since: it met a mismatch or an error of its own and withdrew them.
  const std::optional<std::uint64_t> signature = signature_for_call(entry, call);
  if (!signature)
    throw_peer_mismatch(c, rank,
                        "is no longer in that call (it withdrew its buffers after an error, or is in "
                        "another collective)");
  if (*signature != c.op->tag.signature) throw_peer_mismatch(c, rank, in_another_call, signature);
  return entry.table.load(std::memory_order_acquire);
}

// Where rank `rank` keeps the payload of fence `number` of the operation's call slot
// (schedule::fence_payload): in the fence line, or wide beside it.
std::byte* fence_payload_at(engine& e, const operation& op, int rank, std::uint64_t number) {
  const std::size_t slot = op.tag.call % call_slots;
  if (op.plan->payload_wide()) return e.t.wide_payload(rank, slot, number);
  return e.t.slots[rank].fence_lines[slot][number % 2].payload;
}

void run_steps(engine& e, operation& op, std::span<const local_step> steps) {
  if (steps.empty()) return;
  const remote_context context{&e.t, e.me, &op};
  // While we may read other ranks' buffers, say so: a rank that unwinds from a failed call
  // waits for readers before its buffers go away (withdraw_buffers).
  struct reading_guard {
    std::atomic<bool>* flag = nullptr;
    ~reading_guard() {
      if (flag) flag->store(false, std::memory_order_release);
    }
  } guard;
  if (op.plan && op.plan->touches_remote_buffers()) {
    guard.flag = &e.t.slots[e.me].reading_remote;
    guard.flag->store(true, std::memory_order_seq_cst);
  }
  const buffer_id payload = op.plan ? op.plan->payload_buffer() : no_buffer;
  for (const local_step& st : steps) {
    op.need_kernel(st.how);
    if (st.src_rank != no_rank && st.src.buffer == payload)
      transfer(fence_payload_at(e, op, st.src_rank, op.fence_number) + st.src.offset * op.type.size,
               op.buffers.address(st.dst), st.src.count * op.type.size, st.how, op.red);
    else
      run_step(st, op.buffers, op.red, &remote_buffers, &context);
  }
}

// Throws mismatch_error if rank `peer`, past the fence just passed, shows another call's
// signature. In a flag-fence team its fence line, just read to pass the fence, carries the
// signature; larger teams read its published entry. A peer not in this call (any more)
// passes: it has withdrawn (after a failure) or moved on (or, after a fence that does not
// wait for it, has not arrived yet).
void check_signature_of(engine& e, const operation& op, int peer) {
  const rank_slot& s = e.t.slots[peer];
  const std::size_t slot = op.tag.call % call_slots;
  const std::optional<std::uint64_t> signature =
      e.t.p <= flag_fence_ranks ? signature_for_call(s.fence_lines[slot][op.fence_number % 2], op.tag.call)
                                : signature_for_call(s.published[slot], op.tag.call);
  if (!signature || *signature == op.tag.signature) return;
  const remote_context context{&e.t, e.me, &op};
  throw_peer_mismatch(context, peer, in_another_call, signature);
}

// Fences carry no data, so ranks in different calls could pass one together unnoticed (a
// direct gather where no rank believes it is the root reads nothing). Past a fence every
// rank has published its call's signature; comparing with the next rank around the ring
// finds any disagreement, since unequal signatures differ somewhere between neighbours.
// After a fence that waits for one rank, that rank is the one to compare with. The root of
// a rooted call waits for every rank while the others may wait for nobody
// (schedule::fence_for): no neighbour checks those, so the root compares with them all.
void check_fence_partner(engine& e, const operation& op) {
  if (op.fence_waits_for == no_rank) return;
  if (op.fence_waits_for != every_rank) {
    if (op.fence_waits_for != e.me) check_signature_of(e, op, op.fence_waits_for);
    return;
  }
  const bool rooted = op.tag.coll != point_to_point && is_rooted(static_cast<collective>(op.tag.coll));
  if (rooted && op.plan->payload_buffer() != no_buffer) {
    for (int k = 0; k < e.t.p; ++k)
      if (k != e.me) check_signature_of(e, op, k);
    return;
  }
  if (e.t.p > 1) check_signature_of(e, op, (e.me + 1) % e.t.p);
}

// A fence (schedule::fence). Every rank meets the same fences of a call slot in the same
// order, so the j-th fence of a slot is passed once every rank has met j fences there: by
// flags (each rank's fence line of j's parity shows j) in small teams, by the slot's
// counter reaching j * p in large ones. Who wakes the sleepers: see arrive_at_fence.
// Whether rank `rank`'s fence line shows that it has met fence `number` of call slot `slot`.
bool has_met(const engine& e, int rank, std::size_t slot, std::uint64_t number) {
  return e.t.slots[rank].fence_lines[slot][number % 2].met.load(std::memory_order_acquire) >= number;
}

bool fence_passed(engine& e, operation& op) {
  const std::size_t slot = op.tag.call % call_slots;
  if (op.fence_waits_for == no_rank) return true;
  if (op.fence_waits_for != every_rank) return has_met(e, op.fence_waits_for, slot, op.fence_number);
  if (e.t.p > flag_fence_ranks) return e.t.fences[slot].arrived.load(std::memory_order_acquire) >= op.fence_target;
  // Ranks seen arrived stay arrived for this fence: resume at the first one not seen yet.
  for (int& k = op.fence_next_seen; k < e.t.p; ++k)
    if (k != e.me && !has_met(e, k, slot, op.fence_number)) return false;
  return true;
}

// Whether every rank has met fence `number` of call slot `slot`.
bool fence_met_by_all(const engine& e, std::size_t slot, std::uint64_t number) {
  if (e.t.p > flag_fence_ranks)
    return e.t.fences[slot].arrived.load(std::memory_order_acquire) >= number * static_cast<std::uint64_t>(e.t.p);
  for (int k = 0; k < e.t.p; ++k)
    if (!has_met(e, k, slot, number)) return false;
  return true;
}

// Takes for writing, while this rank waits at a fence, the wide payload buffer of the next
// call (call number + 1), as much of it as this call's payload fills: a repeated call
// writes the same again. The others read that buffer last, so each of its lines held a
// crossing when the next call's payload was written into it; that write now finds them
// owned here. (1 KiB at p = 2: allgather by fence payloads 540 -> 395 ns.) A hint only: if
// the next call differs, or some rank still reads the buffer (after a fence that did not
// wait for every rank), that rank fetches the line again.
static_assert(flag_fence_ranks <= wide_fence_payload_ranks, "every flag-fence team has wide payload buffers");
void take_next_wide_payload(engine& e, const operation& op) {
  const std::size_t next_slot = (op.tag.call + 1) % call_slots;
  const std::byte* next = e.t.wide_payload(e.me, next_slot, e.t.slots[e.me].fences_met[next_slot] + 1);
  const std::size_t bytes = op.plan->buffer_count(op.plan->payload_buffer()) * op.type.size;
  for (std::size_t at = 0; at < bytes; at += 64) prefetch_for_write(next + at);
}

void arrive_at_fence(engine& e, operation& op, const round& rd) {
  const std::size_t slot = op.tag.call % call_slots;
  rank_slot& me = e.t.slots[e.me];
  const std::uint64_t mine = ++me.fences_met[slot];
  me.last_fence_partial[slot] = rd.waits_for != every_rank;
  auto& line = me.fence_lines[slot][mine % 2];
  auto& met = line.met;
  count_progress(e);
  op.fence_next_seen = 0;
  op.fence_number = mine;
  op.fence_waits_for = rd.waits_for;
  // Who waits for this rank in particular is up to the other ranks' schedules: with a
  // payload (where fences may wait for one rank) every arrival wakes the sleepers, otherwise
  // the last one to arrive does.
  const bool wake_all = op.plan->payload_buffer() != no_buffer;
  if (e.t.p <= flag_fence_ranks) {
    // The call's signature next to the count, for the neighbour's check; the count's store
    // below publishes it, and the payload the pre steps wrote. Written once per call and
    // line (later fences of the call find it there).
    auto& written = me.fence_line_written[slot][mine % 2];
    if (written.call != op.tag.call || written.signature != op.tag.signature) {
      write_for_call(line, op.tag.call,
                     [&](rank_slot::fence_line& l) { l.signature.store(op.tag.signature, std::memory_order_relaxed); });
      written = {op.tag.call, op.tag.signature};
    }
    met.store(mine, std::memory_order_release);
    if (op.plan->payload_wide()) take_next_wide_payload(e, op);
    // With a full barrier after the flag (fibers), of two ranks arriving together at least
    // one sees the other's flag, so the last arrival finds the fence passed and rings. With
    // the asymmetric barrier (threads) the flag's store does not wait for its cache line, a
    // crossing's time saved on every fence, but two arrivals may both miss each other for a
    // moment: there every rank rings once it has passed the fence instead (leave_fence).
    if (!e.t.asymmetric_barrier()) {
      e.t.publisher_barrier();
      if (wake_all || fence_passed(e, op)) e.t.ring_all();
    }
    return;
  }
  // Release: a rank waiting for this one alone reads the line, not the counter.
  met.store(mine, std::memory_order_release);
  op.fence_target = mine * static_cast<std::uint64_t>(e.t.p);
  if (e.t.fences[slot].arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == op.fence_target || wake_all)
    e.t.ring_all();
}

// Once past a fence: checks the partner's call, and in a flag-fence team of threads wakes
// the ranks asleep at it (see arrive_at_fence: each sleeper missed some rank's flag, and
// that rank, having stored its flag before it looks at `sleeping`, sees the sleeper).
void leave_fence(engine& e, operation& op) {
  check_fence_partner(e, op);
  if (e.t.p <= flag_fence_ranks && e.t.asymmetric_barrier()) e.t.ring_all();
}

void record_trace(engine& e, operation& op, int to, int from, std::uint64_t sent) {
  // Kept in the team's slot of the rank, in team ranks, whichever comm the round is of: a
  // comm's trace outlives the comm.
  trace_event ev{e.t.world_rank(e.me),
                 op.tag.call,
                 op.tag.coll == point_to_point ? "p2p" : name(static_cast<collective>(op.tag.coll)),
                 static_cast<std::uint32_t>(op.round),
                 e.t.world_rank(to),
                 e.t.world_rank(from),
                 sent,
                 op.received_bytes,
                 op.round_begin_ns,
                 e.t.trace_ns()};
  ev.comm = e.t.comm_id;
  ev.comm_rank = e.me;
  e.t.home(e.me).trace.push_back(ev);
}

// Published buffers and fence counters are kept per call slot (call number modulo
// call_slots). With more calls outstanding than slots, a call must not start while an
// earlier one of its slot is unfinished here: it would overwrite that call's published
// buffers and interleave its fences. Every rank defers the same calls, and the earlier
// call never waits for the later one, so the deferral cannot deadlock.
bool slot_busy(const engine& e, const operation& op) {
  const std::uint32_t slot = op.tag.call % call_slots;
  for (const operation* other : e.cs.active)
    if (other != &op && !other->complete && other->plan && other->tag.call < op.tag.call &&
        other->tag.call % call_slots == slot)
      return true;
  return false;
}

// Whether every rank has met this rank's last fence of the operation's call slot: a full
// fence, which this rank passed, or one that waited for less and that the others have met
// since.
bool last_fence_met_by_all(const engine& e, const operation& op) {
  const std::size_t slot = op.tag.call % call_slots;
  const rank_slot& me = e.t.slots[e.me];
  return !me.last_fence_partial[slot] || fence_met_by_all(e, slot, me.fences_met[slot]);
}

// A payload goes into the line of the slot's next fence, which held the payload of the
// fence before the last one. Once every rank has met the last fence, every rank has
// finished reading that (it read it before meeting the last fence).
bool payload_line_free(const engine& e, const operation& op) { return last_fence_met_by_all(e, op); }

// Whether this rank may arrive at the next fence of the operation's call slot. A counter
// fence (teams above flag_fence_ranks) counts arrivals, not whose: the j-th fence is passed
// at j * p arrivals only if no rank can arrive at fence j + 1 before every rank has arrived
// at j. A rank that left fence j waiting for one rank or none (schedule::fence_for) may
// come back to the slot (its next call there, one without a payload, which
// payload_line_free does not hold back) while another rank has not reached fence j yet:
// its arrival would then fill fence j's count, and a rank waiting there for all would pass
// it and read a payload not yet written. So it arrives only once fence j's count is full.
// Flag fences compare each rank's own count and need no such wait.
bool counter_fence_open(const engine& e, const operation& op) {
  return e.t.p <= flag_fence_ranks || last_fence_met_by_all(e, op);
}

}  // namespace

void prepare(operation& op, const schedule& s, const void* in, void* out, const datatype& type,
             const ranklab::op& reduction, aligned_bytes& scratch, std::size_t& scratch_bytes) {
  op.plan = &s;
  op.p2p = false;
  op.type = type;
  op.combine_op = reduction;
  op.red = detail::reduction{nullptr, reduction.context, type.size, reduction.commutative};
  op.buffers.elem_size = type.size;
  op.buffers.base.clear();
  op.buffers.base.push_back(static_cast<std::byte*>(const_cast<void*>(in)));
  op.buffers.base.push_back(static_cast<std::byte*>(out));
  std::size_t need = 0;
  for (auto count : s.scratch_counts()) need += (count * type.size + 63) / 64 * 64;
  if (need > scratch_bytes) {
    scratch = make_aligned_bytes(need);
    scratch_bytes = need;
  }
  std::size_t at = 0;
  for (auto count : s.scratch_counts()) {
    op.buffers.base.push_back(scratch.get() + at);
    at += (count * type.size + 63) / 64 * 64;
  }
  // Others look at our published entry only through a fence: for the direct reads and
  // pushes after it (which a fence-payload plan, whose readers read payloads only, does not
  // have: the verifier checks), and for the partner check in teams too large for flag
  // fences (a flag fence carries the signature in its line). A plan none of that applies to
  // needs none, and its small calls are spared the writes.
  const bool fences = std::any_of(s.rounds().begin(), s.rounds().end(), [](const round& rd) { return rd.fence; });
  op.publishes =
      s.touches_remote_buffers() || (fences && (s.payload_buffer() == no_buffer || s.size() > flag_fence_ranks));
  op.messages_only = !fences && !s.touches_remote_buffers() && s.payload_buffer() == no_buffer;
  if (const buffer_id payload = s.payload_buffer(); payload != no_buffer) {
    const std::uint64_t bytes = s.buffer_count(payload) * type.size;
    const std::uint64_t room = !s.payload_wide()                      ? fence_payload_bytes
                               : s.size() <= wide_fence_payload_ranks ? wide_fence_payload_bytes
                                                                      : 0;
    if (bytes > room)
      throw usage_error(s.rank(), "schedule",
                        fmt::format("a {} fence payload of {} bytes does not fit the {} a team of {} carries there",
                                    s.payload_wide() ? "wide" : "fence line", bytes, room, s.size()));
  }
  op.all_send_pieces.clear();
  op.all_recv_pieces.clear();
  for (const round& rd : s.rounds()) {
    for (const region& r : s.send_regions(rd)) op.all_send_pieces.push_back(op.buffers.resolve(r));
    for (const region& r : s.recv_regions(rd)) op.all_recv_pieces.push_back(op.buffers.resolve(r));
  }
  op.resolved_steps.clear();
  op.prologue_steps = s.prologue().size();
  if (op.messages_only)
    for (const local_step& st : s.steps()) {
      resolved_step r{op.buffers.address(st.src), op.buffers.address(st.dst), st.src.count * type.size, st.how};
      const bool disjoint = r.dst + r.bytes <= r.src || r.src + r.bytes <= r.dst;
      r.small_copy = r.how == combine::copy && r.bytes <= 64 && disjoint;
      op.resolved_steps.push_back(r);
    }
  op.rewind();
}

namespace {

// Whether the receiver of the operation's message by descriptor has copied it.
bool descriptor_released(engine& e, const operation& op) {
  if (op.express_seq) return e.t.box(e.me, op.descriptor_to).consumed_through(op.express_seq);
  return op.descriptor->state.load(std::memory_order_acquire) == send_descriptor::released;
}

}  // namespace

bool advance(engine& e, operation& op) {
  if (op.complete) return false;
  bool moved = false;
  const bool tracing = e.t.options.trace;
  if (!op.started) {
    if (op.plan && slot_busy(e, op)) return false;
    if (op.plan && op.plan->payload_buffer() != no_buffer && !payload_line_free(e, op)) return false;
    if (op.publishes) publish(e.t.slots[e.me].published[op.tag.call % call_slots], op);
    if (op.plan && op.plan->payload_buffer() != no_buffer) {
      // The payload is written straight into the line of the fence it travels with: the
      // next of this slot (no other call of the slot runs meanwhile: slot_busy).
      const std::uint64_t next = e.t.slots[e.me].fences_met[op.tag.call % call_slots] + 1;
      op.buffers.base[op.plan->payload_buffer()] = fence_payload_at(e, op, e.me, next);
    }
    if (op.plan) run_steps(e, op, op.plan->prologue());
    op.started = moved = true;
  }
  const std::size_t rounds = op.p2p ? 1 : op.plan->rounds().size();
  while (op.round < rounds) {
    const round* rd = op.p2p ? nullptr : &op.plan->rounds()[op.round];
    const int to = op.p2p ? op.p2p_to : rd->send_to;
    const int from = op.p2p ? op.p2p_from : rd->recv_from;
    if (!op.pre_done) {
      if (rd) run_steps(e, op, op.plan->pre_steps(*rd));
      if (tracing) op.round_begin_ns = e.t.trace_ns();
      op.received_bytes = 0;  // kept after the round: sendrecv returns it
      op.pre_done = moved = true;
    }
    if (rd) {
      op.send_pieces = std::span(op.all_send_pieces).subspan(rd->send_begin, rd->send_end - rd->send_begin);
      op.recv_pieces = std::span(op.all_recv_pieces).subspan(rd->recv_begin, rd->recv_end - rd->recv_begin);
    }
    if (rd && rd->fence) {
      if (!op.fence_arrived) {
        if (!counter_fence_open(e, op)) return moved;
        arrive_at_fence(e, op, *rd);
        op.fence_arrived = moved = true;
      }
      if (!op.fence_left) {
        if (!fence_passed(e, op)) return moved;
        leave_fence(e, op);
        op.fence_left = true;
      }
    }
    if (to != no_rank && !op.posted) {
      std::uint64_t bytes = 0;
      for (const piece& pc : op.send_pieces) bytes += pc.bytes;
      if (!try_post(e, op, to, bytes)) return moved;
      op.posted = moved = true;
    }
    if (from != no_rank && !op.received) {
      if (!try_receive(e, op, from)) return moved;
      op.received = moved = true;
    }
    if (op.by_descriptor && !descriptor_released(e, op)) return moved;
    if (tracing && (to + from != 2 * no_rank || (rd && rd->fence))) {  // a fence is a round too
      std::uint64_t sent = 0;
      if (to != no_rank)
        for (const piece& pc : op.send_pieces) sent += pc.bytes;
      record_trace(e, op, to, from, sent);
    }
    if (rd) run_steps(e, op, op.plan->post_steps(*rd));
    ++op.round;
    op.reset_round();
    moved = true;
  }
  op.complete = true;
  return true;
}

namespace {

// A failed call: unpublish our buffers so no new reads start, then wait for the
// reads in progress (Dekker with the reader's flag: both sides store, then load, seq_cst).
void withdraw_buffers(team_state& t, int me, const operation& op) {
  t.slots[me].published[op.tag.call % call_slots].call.store(0, std::memory_order_seq_cst);
  for (int r = 0; r < t.p; ++r)
    if (r != me)
      while (t.slots[r].reading_remote.load(std::memory_order_seq_cst)) t.let_others_run();
}

}  // namespace

void abandon(team_state& t, int me, operation& op, std::exception_ptr why) {
  if (op.complete) return;
  // A started collective that published its buffers: others may be reading them (or, for
  // push steps, writing them) even if this rank itself never reads remotely.
  if (op.started && op.publishes) withdraw_buffers(t, me, op);
  if (op.posted && op.by_descriptor && op.express_seq) {
    // Withdraw the message, then wait out a copy that the receiver announced before it could
    // see that (express_descriptor::cancelled). Its line stays in the lane for the receiver.
    mailbox& box = t.box(me, op.descriptor_to);
    std::atomic_ref(box.descriptor(op.express_seq).cancelled).store(1, std::memory_order_seq_cst);
    while (box.copying.load(std::memory_order_seq_cst) == op.express_seq && !box.consumed_through(op.express_seq))
      t.let_others_run();
  } else if (op.posted && op.by_descriptor) {
    // Withdraw the message. If no receiver has claimed it, a receiver may still take the
    // header later and look at the descriptor (finding it cancelled): the team keeps it.
    // If one is copying right now, it finishes before we unwind.
    std::uint32_t expected = send_descriptor::posted;
    if (op.descriptor->state.compare_exchange_strong(expected, send_descriptor::cancelled, std::memory_order_acq_rel))
      t.retire(std::move(op.descriptor));
    else
      while (op.descriptor->state.load(std::memory_order_acquire) == send_descriptor::claimed) t.let_others_run();
  }
  op.error = std::move(why);
  op.complete = true;
}

void launch(team_state& t, const std::shared_ptr<comm_state>& cs, int me, operation& op) {
  start_progress_thread(t, cs, me);
  // Known to the rank's waits in its other comms from now on (progress_other_comms).
  auto& busy = t.home(me).busy;
  if (std::none_of(busy.begin(), busy.end(), [&](const rank_slot::busy_comm& b) { return b.cs == cs.get(); }))
    busy.push_back({&t, cs.get(), me});
  engine e{t, *cs, me};
  locked(*cs, [&] {
    cs->active.push_back(&op);
    try {
      advance(e, op);
    } catch (...) {
      t.fail_with_current_exception(me);
      abandon(t, me, op);
    }
  });
}

bool progress_other_comms(engine& e) {
  const auto& busy = e.t.home(e.me).busy;
  if (busy.empty() || (busy.size() == 1 && busy.front().cs == &e.cs)) return false;
  bool moved = false;
  for (std::size_t i = 0; i < busy.size(); ++i) {
    const rank_slot::busy_comm b = busy[i];
    if (b.cs == &e.cs || b.cs->active.empty()) continue;
    engine other{*b.t, *b.cs, b.rank};
    moved |= locked(*b.cs, [&] { return progress_all(other, nullptr); });
  }
  return moved;
}

bool progress_all(engine& e, operation* first) {
  // Until a pass moves nothing: an operation that completes may let an earlier-visited one
  // start (a later call of its slot, slot_busy), and no other rank would ring for that.
  bool moved = false;
  for (bool again = true; again; moved |= again) {
    again = first ? advance(e, *first) : false;
    for (operation* op : e.cs.active)
      if (op != first) again |= advance(e, *op);
  }
  return moved;
}

std::pair<wait_reason, int> blocked_on(engine& e, const operation& op) {
  publish_taken_from_all(e);  // a sender waiting for room must not wait for a sleeper
  rank_slot& slot = e.t.home(e.me);
  if (slot.call.load(std::memory_order_relaxed) != op.tag.call || slot.call_key != op.entry.get()) {
    std::lock_guard lock(slot.call_mutex);
    slot.call_text = op.entry ? op.entry->text : std::string();
    slot.call_key = op.entry.get();
    slot.call.store(op.tag.call, std::memory_order_relaxed);
  }
  if (op.complete) return {wait_reason::none, no_rank};
  const round* rd = op.p2p || op.round >= op.plan->rounds().size() ? nullptr : &op.plan->rounds()[op.round];
  const int to = rd ? rd->send_to : op.p2p_to, from = rd ? rd->recv_from : op.p2p_from;
  if (rd && rd->fence) return {wait_reason::fence, no_rank};
  if (to != no_rank && !op.posted) return {wait_reason::space_to, to};
  if (from != no_rank && !op.received) return {wait_reason::message_from, from};
  if (op.by_descriptor) return {wait_reason::release_by, to};
  return {wait_reason::none, no_rank};
}

void abandon_all(team_state& t, int me, comm_state& cs, operation* first) {
  if (first) abandon(t, me, *first);
  for (operation* op : cs.active) abandon(t, me, *op);
}

namespace {

// Whether the message `op`, just left blocked by advance() at a receive, waits for may
// have come: a poll of the line where it would arrive (and the queue), where advance()
// would walk the round again (its stages, the stash, the mailbox) on every poll. Any other
// stage (a fence, room to send, a release) gets an advance() on every poll: polling a
// fence's flags alone took each line from its owner more often than the owner wrote it,
// and every rank's next arrival then waited for its line to come back (8 B at p = 2:
// barrier 180 -> 193 ns, alltoall by fence payloads 202 -> 224).
bool may_advance(engine& e, const operation& op) {
  if (op.p2p || !op.started || op.round >= op.plan->rounds().size()) return true;
  const round& rd = op.plan->rounds()[op.round];
  if (rd.fence || rd.recv_from == no_rank || op.received || (rd.send_to != no_rank && !op.posted) ||
      !e.cs.stash.empty())
    return true;
  mailbox& box = e.t.box(rd.recv_from, e.me);
  const std::uint32_t seq = box.next_to_take();
  return box.cell(seq).seq.load(std::memory_order_acquire) == seq || box.queue.read_available() > 0;
}

// A resolved local step other than a small copy.
void run_resolved_step(operation& op, const resolved_step& st) {
  op.need_kernel(st.how);
  transfer(st.src, st.dst, st.bytes, st.how, op.red);
}

// Local steps [begin, end) of a messages_only plan, resolved (operation::resolved_steps).
// A copy of a line or less is done inline: a call into memmove cost more than such a copy.
inline void run_resolved(operation& op, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    const resolved_step& st = op.resolved_steps[i];
    if (st.small_copy)
      copy_line_part(st.dst, st.src, st.bytes);
    else
      run_resolved_step(op, st);
  }
}

// Round r's part of the operation's message regions.
std::span<const piece> round_pieces(const std::vector<piece>& all, std::uint32_t begin, std::uint32_t end) {
  return std::span(all).subspan(begin, end - begin);
}

// Where run_quick stops and advance() takes over: round r, its pre steps done, its message
// posted or not. Out of line, so that the way through keeps its registers.
[[gnu::noinline]] bool stop_quick(operation& op, std::size_t r, bool posted) {
  const round& rd = op.plan->rounds()[r];
  op.started = true;
  op.complete = false;
  op.round = r;
  op.reset_round();
  op.pre_done = true;
  op.posted = posted;
  op.received_bytes = 0;
  op.send_pieces = round_pieces(op.all_send_pieces, rd.send_begin, rd.send_end);
  op.recv_pieces = round_pieces(op.all_recv_pieces, rd.recv_begin, rd.recv_end);
  return false;
}

// An exchange's receive in run_quick (round `rd` has posted its message), where it fits
// take_exchange_line: a message of one line at most, a builtin operator. Out of the one-way
// receive's way: a rooted call's receive pays for none of these tests.
[[gnu::always_inline]] inline bool take_exchange_line_quick(team_state& t, comm_state& cs, int me, operation& op,
                                                            const round& rd, std::span<const piece> into, int& polls) {
  const combine how = rd.recv_how;
  if (how != combine::copy && op.combine_op.kind == op_kind::user) return false;
  std::uint64_t bytes = 0;
  for (const piece& pc : into) bytes += pc.bytes;
  if (bytes > express_head_payload) return false;
  op.need_kernel(how);
  return take_exchange_line(t, cs, me, op, rd.recv_from, how, into, bytes, polls);
}

// Round r of run_quick, from its pre steps to its post steps.
[[gnu::always_inline]] inline bool run_round_quick(team_state& t, comm_state& cs, int me, operation& op,
                                                   const round& rd, std::size_t r, int& polls) {
  run_resolved(op, rd.pre_begin, rd.post_begin);
  bool posted = false;
  if (rd.send_to != no_rank) {
    const std::span<const piece> send = round_pieces(op.all_send_pieces, rd.send_begin, rd.send_end);
    mailbox& box = t.box(me, rd.send_to);
    if (send.size() != 1 || !post_express_line(t, me, box, rd.send_to, op.tag, send[0])) {
      std::uint64_t bytes = 0;
      for (const piece& pc : send) bytes += pc.bytes;
      engine e{t, cs, me};
      if (!try_post_express(e, box, rd.send_to, op.tag, send, bytes)) return stop_quick(op, r, false);
    }
    posted = true;
  }
  if (rd.recv_from != no_rank) {
    const std::span<const piece> into = round_pieces(op.all_recv_pieces, rd.recv_begin, rd.recv_end);
    if (!(posted && take_exchange_line_quick(t, cs, me, op, rd, into, polls))) {
      engine e{t, cs, me};
      if (!take_expected_express(e, op, rd, into, posted, polls)) return stop_quick(op, r, posted);
    }
  }
  run_resolved(op, rd.post_begin, rd.post_end);
  return true;
}

// run_quick's rounds after the prologue, as many as there are.
[[gnu::noinline]] bool run_rounds_quick(team_state& t, comm_state& cs, int me, operation& op, int& polls) {
  const std::span<const round> rounds = op.plan->rounds();
  for (std::size_t r = 0; r < rounds.size(); ++r)
    if (!run_round_quick(t, cs, me, op, rounds[r], r, polls)) return false;
  return true;
}

// A blocking call whose plan has only message rounds and local steps (operation::
// messages_only), run from its start by a rank with nothing else to advance, for as long
// as each message fits the express lane and the one expected arrives there. It does what
// advance() does, in the same order, less what cannot apply (fences, published buffers,
// the stash, tracing, other operations); where anything else comes up it stops with the
// operation at that stage, and advance() goes on from there. For small calls that
// bookkeeping was most of a call: 8 B at p = 2, gather 50 -> 39 ns, bcast 42 -> 36,
// allgather 181 -> 168.
//
// Its progress stays in locals and reaches `op` only where it stops early: a call that runs
// through stores nothing to `op` but the results. A rank that streams one-way calls (a
// non-root's gathers, a root's bcasts) has the line of its last message waiting for the
// receiver to let go of it, and its next stores queue behind that one; a call whose
// stores fill the store queue waits out the crossing, so every store saved lets the sender
// run further ahead (docs/runtime.md, "A repeated small call stores little").
[[gnu::always_inline]] inline bool run_quick(team_state& t, comm_state& cs, int me, operation& op, int& polls) {
  const std::span<const round> rounds = op.plan->rounds();
  if (op.prologue_steps > 0) run_resolved(op, 0, op.prologue_steps);
  // One round (a rooted call or an exchange of two ranks, the commonest small calls) here,
  // more in a function of their own: without the loop's state the compiler keeps the way
  // through in registers.
  if (!(rounds.size() == 1 ? run_round_quick(t, cs, me, op, rounds[0], 0, polls)
                           : run_rounds_quick(t, cs, me, op, polls)))
    return false;
  // As advance() leaves a finished operation (rewind() cleared the round's flags).
  op.started = op.complete = true;
  op.round = rounds.size();
  return true;
}

// The first stage of waiting when `op` is all there is to advance (no requests outstanding,
// no progress thread, which would share `op` under the comm's lock): polls it directly,
// without the progress pass's bookkeeping, for the spin stage of team_state::wait. Returns
// whether that completed it; `polls` counts the polls made, on from those made before
// (wait_for's `spun_before`).
bool spin_alone(engine& e, operation& op, int& polls) {
  if (e.cs.threaded || !e.cs.active.empty()) return false;
  // (`publishes`: a hand-built schedule's, whose peers may read its buffers, see comm::execute)
  if (op.messages_only && !op.publishes && !op.started && e.cs.stash.empty() && !e.t.options.trace &&
      run_quick(e.t, e.cs, e.me, op, polls))
    return true;
  advance(e, op);
  while (!op.complete && polls < e.t.spin_limit) {
    cpu_relax();
    if (may_advance(e, op)) advance(e, op);
    if ((++polls & 63) == 0) e.t.check_failure(e.me, op.name);
  }
  return op.complete;
}

// What a rank does when its blocking call throws: a call that fails once its messages are
// out leaves its peers unable to finish, so the team fails with this exception *before* we
// withdraw anything, so that a peer meeting a withdrawn message or buffer finds this
// failure (and its origin) recorded, not one of its own. (A no-op when the team has failed
// already.) Call inside a catch block; rethrows.
[[noreturn]] void fail_blocking_call(engine& e, operation& op) {
  e.t.fail_with_current_exception(e.me);
  locked(e.cs, [&] { abandon_all(e.t, e.me, e.cs, &op); });
  throw;
}

// After a blocking call: only a rank that went to sleep in it (blocked_on) recorded the
// call for the deadlock detector.
void forget_sleep_call(team_state& t, int me) {
  if (auto& call = t.home(me).call; call.load(std::memory_order_relaxed) != 0)
    call.store(0, std::memory_order_relaxed);
}

// Whether `op` may go the quick way now (run_quick): see spin_alone.
bool quick_now(const team_state& t, const comm_state& cs, const operation& op) {
  return op.messages_only && !op.publishes && !cs.threaded && cs.active.empty() && cs.stash.empty() && !t.options.trace;
}

// Whether the repeat of finished `op` may go the quick way without rewinding (wait_again):
// also only with a builtin operator, which cannot throw, so that the way has no handler to
// fail the team (wait_for's).
bool quick_again_now(const team_state& t, const comm_state& cs, const operation& op) {
  return op.complete && !op.error && op.combine_op.kind != op_kind::user && quick_now(t, cs, op);
}

}  // namespace

void wait_for(engine& e, operation& op, int spun_before) {
  try {
    int spun = spun_before;
    if (!spin_alone(e, op, spun))
      e.t.wait(
          e.me,
          [&] {
            progress_other_comms(e);
            return locked(e.cs, [&] {
              progress_all(e, &op);
              return op.complete;
            });
          },
          [&] { return locked(e.cs, [&] { return blocked_on(e, op); }); }, op.name, spun);
  } catch (...) {
    fail_blocking_call(e, op);
  }
  if (op.error) std::rethrow_exception(op.error);
}

namespace {

// Waits for the blocking operation from wherever it is (`polls`: spent on it already).
[[gnu::noinline]] void finish_blocking(team_state& t, comm_state& cs, int me, operation& op, int polls = 0) {
  engine e{t, cs, me};
  wait_for(e, op, polls);
  forget_sleep_call(t, me);
}

// wait_again's quick way, and where it stops, the slow way from there: the one frame of a
// repeated small call (the handler adds nothing to the way through).
// Nothing on it throws (quick_again_now: no user's operator), so it needs no handler.
[[gnu::noinline]] void run_again_quick(team_state& t, comm_state& cs, int me, operation& op) {
  int polls = 0;
  if (run_quick(t, cs, me, op, polls)) return;
  return finish_blocking(t, cs, me, op, polls);  // the spin stage goes on, not over
}

// wait_again's slow way.
[[gnu::noinline]] void rewind_and_wait(team_state& t, comm_state& cs, int me, operation& op) {
  op.rewind();
  finish_blocking(t, cs, me, op);
}

}  // namespace

// Either way a tail call, so that the test needs no frame.
void wait_again(team_state& t, comm_state& cs, int me, operation& op) {
  if (quick_again_now(t, cs, op)) return run_again_quick(t, cs, me, op);
  return rewind_and_wait(t, cs, me, op);
}

}  // namespace ranklab::detail
