// The thread executor. Every call — a blocking collective, a request, a point-to-point
// round — is an operation advanced round by round: post the send (inline or by
// descriptor), take the receive (from the mailbox or from the stash of early messages),
// wait for the send's release. Blocking calls advance their operation (and any
// outstanding requests) inside team_state::wait.
#include "ranklab/comm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "detail/comm_state.hpp"
#include "detail/team_state.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {

namespace {

using detail::call_tag;
using detail::chunk;
using detail::comm_state;
using detail::message_header;
using detail::message_kind;
using detail::operation;
using detail::piece;
using detail::send_descriptor;
using detail::team_state;
using detail::wait_reason;

std::size_t chunks_for(std::uint64_t bytes) { return static_cast<std::size_t>((bytes + sizeof(chunk) - 1) / sizeof(chunk)); }

std::string describe_tag(std::uint8_t coll, std::uint32_t call, int root) {
  if (coll == detail::point_to_point) return "a point-to-point message";
  const auto c = static_cast<collective>(coll);
  std::string s = fmt::format("collective #{} {}", call, name(c));
  if (is_rooted(c)) s += fmt::format(" root={}", root);
  return s;
}

struct engine {
  team_state& t;
  comm_state& cs;
  int me;
};

void count_progress(engine& e) {
  auto& progress = e.t.slots[e.me].progress;
  progress.store(progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// Takes the express lane's next cell for `box` if the receiver has freed it.
detail::express_cell* express_slot(detail::mailbox& box) {
  const std::uint32_t seq = box.sent + 1;
  if (seq - box.known_consumed > detail::express_cells) {
    box.known_consumed = box.consumed.load(std::memory_order_acquire);
    if (seq - box.known_consumed > detail::express_cells) return nullptr;
  }
  return &box.cell(seq);
}

// Posts the message of `pieces` (`bytes` in all) to `to` in the express lane, if it fits
// one line and the lane has room. Returns whether it did.
bool try_post_express(engine& e, detail::mailbox& box, int to, const call_tag& tag, std::span<const piece> pieces,
                      std::uint64_t bytes) {
  if (bytes > detail::express_payload || bytes > e.t.options.eager_limit) return false;
  detail::express_cell* cell = express_slot(box);
  if (!cell) return false;
  cell->coll = tag.coll;
  cell->bytes = static_cast<std::uint8_t>(bytes);
  cell->call = tag.call;
  cell->root = tag.root;
  cell->signature = tag.signature;
  std::byte* dst = cell->payload;
  for (const piece& pc : pieces) {
    if (pc.bytes) std::memcpy(dst, pc.data, pc.bytes);
    dst += pc.bytes;
  }
  cell->seq.store(++box.sent, std::memory_order_release);
  count_progress(e);
  e.t.ring(to);
  return true;
}

// Posts the operation's message of `pieces` to `to`: in the express lane when it fits one
// line, inline in the queue when small and the queue has room, else by descriptor (the
// receiver copies from our memory and releases us). Returns false when the mailbox is full.
bool try_post(engine& e, operation& op, int to, std::uint64_t bytes) {
  detail::mailbox& box = e.t.box(e.me, to);
  if (try_post_express(e, box, to, op.tag, op.send_pieces, bytes)) {
    op.by_descriptor = false;
    return true;
  }
  auto& queue = box.queue;
  const std::size_t room = queue.write_available();
  if (room == 0) return false;
  message_header h;
  h.coll = op.tag.coll;
  h.call = op.tag.call;
  h.signature = op.tag.signature;
  h.root = op.tag.root;
  h.bytes = bytes;
  h.seq = box.sent + 1;
  const std::size_t chunks = chunks_for(detail::header_bytes + bytes);
  if (bytes <= e.t.options.eager_limit && room >= chunks) {
    h.kind = message_kind::eager;
    h.chunks = static_cast<std::uint16_t>(chunks);
    std::memcpy(e.cs.stage[0].bytes, &h, sizeof h);
    std::byte* dst = e.cs.stage[0].bytes + detail::header_bytes;
    for (const piece& pc : op.send_pieces) {
      if (pc.bytes) std::memcpy(dst, pc.data, pc.bytes);
      dst += pc.bytes;
    }
    queue.push(e.cs.stage.data(), chunks);
    op.by_descriptor = false;
  } else {  // large, or the mailbox is too full to take it inline
    if (!op.descriptor) op.descriptor = std::make_unique<send_descriptor>();
    send_descriptor& d = *op.descriptor;
    d.pieces = op.send_pieces.data();
    d.piece_count = static_cast<std::uint32_t>(op.send_pieces.size());
    d.state.store(send_descriptor::posted, std::memory_order_release);
    h.kind = message_kind::descriptor;
    h.descriptor = &d;
    h.chunks = 1;
    std::memcpy(e.cs.stage[0].bytes, &h, sizeof h);
    queue.push(e.cs.stage.data(), 1);
    op.by_descriptor = true;
  }
  ++box.sent;
  count_progress(e);
  e.t.ring(to);
  return true;
}

// Lets a descriptor go without copying (the receiver rejects the message).
void release_unread(engine& e, int from, const message_header& h) {
  if (h.kind != message_kind::descriptor) return;
  std::uint32_t expected = send_descriptor::posted;
  if (h.descriptor->state.compare_exchange_strong(expected, send_descriptor::released)) e.t.ring(from);
}

// Delivers message h from `from` into the operation's receive pieces. `payload` holds an
// eager message's data.
void deliver(engine& e, operation& op, int from, const message_header& h, const std::byte* payload) {
  const call_tag& tag = op.tag;
  if (h.coll != tag.coll || h.signature != tag.signature) {
    release_unread(e, from, h);
    const bool same_kind = h.coll == tag.coll && h.root == tag.root;
    throw mismatch_error(
        e.me, op.name,
        fmt::format("collective mismatch: rank {} is in {}{}, but rank {} sent it {}{}", e.me,
                    describe_tag(tag.coll, tag.call, tag.root), op.entry ? " [" + op.entry->text + "]" : "", from,
                    describe_tag(h.coll, h.call, h.root),
                    same_kind ? " with different counts, type, operator or algorithm" : ""));
  }
  const std::uint64_t capacity = op.p2p ? op.p2p_capacity : op.plan->recv_count(op.plan->rounds()[op.round]) * op.type.size;
  if (h.bytes > capacity || (!op.p2p && h.bytes != capacity)) {
    release_unread(e, from, h);
    throw size_mismatch_error(e.me, op.name, from, h.bytes, capacity);
  }
  const combine how = op.p2p ? combine::copy : op.plan->rounds()[op.round].recv_how;
  if (how != combine::copy && !op.red.kernel) op.red.kernel = kernel_for(op.combine_op, op.type);
  if (h.kind == message_kind::eager) {
    const piece src{const_cast<std::byte*>(payload), h.bytes};
    detail::transfer(std::span(&src, 1), op.recv_pieces, how, op.red);
  } else {
    send_descriptor& d = *h.descriptor;
    std::uint32_t expected = send_descriptor::posted;
    if (!d.state.compare_exchange_strong(expected, send_descriptor::claimed, std::memory_order_acq_rel)) {
      e.t.check_failure(e.me, op.name);  // the sender withdrew: the team has failed
      throw remote_failure(e.me, op.name, from, "sender withdrew its message");
    }
    // Release the sender even if the reduction throws (a user operator may): a claimed
    // descriptor that is never released would keep the failing sender from unwinding.
    struct release_guard {
      engine& e;
      send_descriptor& d;
      int from;
      ~release_guard() {
        d.state.store(send_descriptor::released, std::memory_order_release);
        e.t.ring(from);
      }
    } release{e, d, from};
    detail::transfer(std::span(d.pieces, d.piece_count), op.recv_pieces, how, op.red);
  }
  op.received_bytes = h.bytes;
  count_progress(e);
}

// The next message of the pair (from, me), in sequence order, from the express lane or the
// queue: its header, and for an eager message its payload copied to `payload`. The message
// is consumed. Returns false if it has not arrived.
bool take_next(detail::mailbox& box, message_header& h, std::vector<chunk>& payload) {
  const std::uint32_t seq = box.consumed.load(std::memory_order_relaxed) + 1;
  detail::express_cell& cell = box.cell(seq);
  if (cell.seq.load(std::memory_order_acquire) == seq) {
    h = message_header{};
    h.coll = cell.coll;
    h.call = cell.call;
    h.root = cell.root;
    h.signature = cell.signature;
    h.bytes = cell.bytes;
    h.seq = seq;
    std::memcpy(payload[0].bytes + detail::header_bytes, cell.payload, h.bytes);
  } else {
    auto& queue = box.queue;
    if (queue.read_available() == 0) return false;
    std::memcpy(&h, queue.front().bytes, sizeof h);
    if (h.seq != seq) return false;  // an express message before it is not visible yet
    if (h.kind == message_kind::eager) queue.pop(payload.data(), h.chunks);
    else queue.pop();
  }
  box.consumed.store(seq, std::memory_order_release);
  return true;
}

// Takes the operation's message from `from` if it has arrived: first among the early
// messages, then from the mailbox, stashing messages of other calls met on the way.
bool try_receive(engine& e, operation& op, int from) {
  auto& stash = e.cs.stash;
  for (auto it = stash.begin(); it != stash.end(); ++it) {
    if (it->from != from || it->header.call != op.tag.call) continue;
    const detail::stashed_message m = std::move(*it);
    stash.erase(it);
    deliver(e, op, from, m.header, m.payload.empty() ? nullptr : m.payload.front().bytes + detail::header_bytes);
    return true;
  }
  detail::mailbox& box = e.t.box(from, e.me);
  message_header h;
  while (take_next(box, h, e.cs.stage)) {
    if (h.call == op.tag.call) {
      deliver(e, op, from, h, h.kind == message_kind::eager ? e.cs.stage[0].bytes + detail::header_bytes : nullptr);
      return true;
    }
    // A message of another call (an outstanding request, or one this rank has not reached).
    detail::stashed_message m{from, h, {}};
    if (h.kind == message_kind::eager)
      m.payload.assign(e.cs.stage.begin(), e.cs.stage.begin() + static_cast<std::ptrdiff_t>(chunks_for(detail::header_bytes + h.bytes)));
    stash.push_back(std::move(m));
  }
  return false;
}

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
[[noreturn]] void throw_peer_mismatch(const remote_context& c, int peer, const char* why) {
  const operation& op = *c.op;
  c.t->check_failure(c.me, op.name);  // the peer withdrew after a failure: report that one
  throw mismatch_error(c.me, op.name,
                       fmt::format("collective mismatch: rank {} is in collective #{}{}, but rank {} {}", c.me,
                                   op.tag.call, op.entry ? " [" + op.entry->text + "]" : "", peer, why));
}
const detail::buffer_table* remote_buffers(const void* context, int rank) {
  const auto& c = *static_cast<const remote_context*>(context);
  const std::uint32_t call = c.op->tag.call;
  const auto& entry = c.t->slots[rank].published[call % detail::call_slots];
  // The fence before every direct read guarantees the owner published them, unless it has
  // left the call since: it met a mismatch or an error of its own and withdrew them.
  if (entry.call.load(std::memory_order_acquire) != call)
    throw_peer_mismatch(c, rank, "is no longer in that call (it withdrew its buffers after an error, or is in "
                                 "another collective)");
  if (entry.signature.load(std::memory_order_relaxed) != c.op->tag.signature)
    throw_peer_mismatch(c, rank, in_another_call);
  return entry.table.load(std::memory_order_acquire);
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
  if (op.plan && op.plan->reads_remote()) {
    guard.flag = &e.t.slots[e.me].reading_remote;
    guard.flag->store(true, std::memory_order_seq_cst);
  }
  for (const local_step& st : steps) {
    if (st.how != combine::copy && !op.red.kernel) op.red.kernel = kernel_for(op.combine_op, op.type);
    detail::run_step(st, op.buffers, op.red, &remote_buffers, &context);
  }
}

// Fences carry no data, so ranks in different calls could pass one together unnoticed (a
// direct gather where no rank believes it is the root reads nothing). Past a fence every
// rank has published its call's signature; comparing with the next rank around the ring
// finds any disagreement, since unequal signatures differ somewhere between neighbours.
void check_fence_partner(engine& e, const operation& op) {
  const int next = (e.me + 1) % e.t.p;
  if (next == e.me) return;
  const auto& entry = e.t.slots[next].published[op.tag.call % detail::call_slots];
  // A different call number: the neighbour has withdrawn (after a failure) or moved on.
  if (entry.call.load(std::memory_order_acquire) != op.tag.call) return;
  if (entry.signature.load(std::memory_order_relaxed) == op.tag.signature) return;
  const remote_context context{&e.t, e.me, &op};
  throw_peer_mismatch(context, next, in_another_call);
}

void record_trace(engine& e, operation& op, int to, int from, std::uint64_t sent) {
  e.t.slots[e.me].trace.push_back(trace_event{
      e.me, op.tag.call, op.tag.coll == detail::point_to_point ? "p2p" : name(static_cast<collective>(op.tag.coll)),
      static_cast<std::uint32_t>(op.round), to, from, sent, op.received_bytes, op.round_begin_ns, e.t.now_ns()});
}

// Published buffers and fence counters are kept per call slot (call number modulo
// call_slots). With more calls outstanding than slots, a call must not start while an
// earlier one of its slot is unfinished here: it would overwrite that call's published
// buffers and interleave its fences. Every rank defers the same calls, and the earlier
// call never waits for the later one, so the deferral cannot deadlock.
bool slot_busy(const engine& e, const operation& op) {
  const std::uint32_t slot = op.tag.call % detail::call_slots;
  for (const operation* other : e.cs.active)
    if (other != &op && !other->complete && other->plan && other->tag.call < op.tag.call &&
        other->tag.call % detail::call_slots == slot)
      return true;
  return false;
}

// Moves the operation as far as it can go without waiting. Returns whether anything moved.
bool advance(engine& e, operation& op) {
  if (op.complete) return false;
  bool moved = false;
  const bool tracing = e.t.options.trace;
  if (!op.started) {
    if (op.plan && slot_busy(e, op)) return false;
    if (op.plan) {  // any rank may be read directly by shared-memory direct algorithms
      auto& entry = e.t.slots[e.me].published[op.tag.call % detail::call_slots];
      entry.table.store(&op.buffers, std::memory_order_relaxed);
      entry.signature.store(op.tag.signature, std::memory_order_relaxed);
      entry.call.store(op.tag.call, std::memory_order_release);
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
      if (tracing) op.round_begin_ns = e.t.now_ns();
      op.received_bytes = 0;  // kept after the round: sendrecv returns it
      op.pre_done = moved = true;
    }
    if (!op.pieces_ready) {
      if (rd) {
        op.send_pieces.clear();
        for (const region& r : op.plan->send_regions(*rd)) op.send_pieces.push_back(op.buffers.resolve(r));
        op.recv_pieces.clear();
        for (const region& r : op.plan->recv_regions(*rd)) op.recv_pieces.push_back(op.buffers.resolve(r));
      }
      op.pieces_ready = true;
    }
    if (rd && rd->fence) {
      auto& counter = e.t.fences[op.tag.call % detail::call_slots].arrived;
      if (!op.fence_arrived) {
        op.fence_target = ++e.t.slots[e.me].fences_met[op.tag.call % detail::call_slots] * static_cast<std::uint64_t>(e.t.p);
        if (counter.fetch_add(1, std::memory_order_acq_rel) + 1 == op.fence_target) e.t.ring_all();
        op.fence_arrived = moved = true;
        count_progress(e);
      }
      if (counter.load(std::memory_order_acquire) < op.fence_target) return moved;
      check_fence_partner(e, op);
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
    if (op.by_descriptor && op.descriptor->state.load(std::memory_order_acquire) != send_descriptor::released)
      return moved;
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

// The operation's posted descriptor must not be read once we unwind: withdraw it, or, if a
// receiver is copying right now, let it finish.
// A failed call: unpublish our buffers so no new reads start, then wait for the
// reads in progress (Dekker with the reader's flag: both sides store, then load, seq_cst).
void withdraw_buffers(team_state& t, int me, const operation& op) {
  t.slots[me].published[op.tag.call % detail::call_slots].call.store(0, std::memory_order_seq_cst);
  for (int r = 0; r < t.p; ++r)
    if (r != me)
      while (t.slots[r].reading_remote.load(std::memory_order_seq_cst)) sched_yield();
}

void abandon(team_state& t, int me, operation& op, std::exception_ptr why = std::current_exception()) {
  if (op.complete) return;
  // Every started collective published its buffers: others may be reading them (or, for
  // push steps, writing them) even if this rank itself never reads remotely.
  if (op.started && op.plan) withdraw_buffers(t, me, op);
  if (op.posted && op.by_descriptor) {
    // Withdraw the message. If no receiver has claimed it, a receiver may still take the
    // header later and look at the descriptor (finding it cancelled): the team keeps it.
    // If one is copying right now, it finishes before we unwind.
    std::uint32_t expected = send_descriptor::posted;
    if (op.descriptor->state.compare_exchange_strong(expected, send_descriptor::cancelled, std::memory_order_acq_rel))
      t.retire(std::move(op.descriptor));
    else
      while (op.descriptor->state.load(std::memory_order_acquire) == send_descriptor::claimed) sched_yield();
  }
  op.error = std::move(why);
  op.complete = true;
}

// Advances `first` (may be null) and every outstanding request.
bool progress_all(engine& e, operation* first) {
  bool moved = first ? advance(e, *first) : false;
  auto& active = e.cs.active;
  for (operation* op : active)
    if (op != first) moved |= advance(e, *op);
  return moved;
}

std::pair<wait_reason, int> blocked_on(engine& e, const operation& op) {
  detail::rank_slot& slot = e.t.slots[e.me];
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

// Runs the rank's progress under the comm's lock when a progress thread shares it.
template <class F>
auto locked(comm_state& cs, F&& f) {
  if (!cs.threaded) return f();
  std::lock_guard lock(cs.progress_lock);
  return f();
}

void abandon_all(team_state& t, int me, comm_state& cs, operation* first) {
  if (first) abandon(t, me, *first);
  for (operation* op : cs.active) abandon(t, me, *op);
}

// Blocks until `op` completes, advancing everything outstanding meanwhile.
void wait_for(engine& e, operation& op) {
  try {
    e.t.wait(
        e.me, [&] { return locked(e.cs, [&] { progress_all(e, &op); return op.complete; }); },
        [&] { return locked(e.cs, [&] { return blocked_on(e, op); }); }, op.name);
  } catch (...) {
    // A call that fails once its messages are out leaves its peers unable to finish: the
    // team fails with this exception *before* we withdraw anything, so that a peer meeting
    // a withdrawn message or buffer finds this failure (and its origin) recorded, not one
    // of its own. (A no-op when the team has failed already.) The same below.
    e.t.fail_with_current_exception(e.me);
    locked(e.cs, [&] { abandon_all(e.t, e.me, e.cs, &op); });
    throw;
  }
  if (op.error) std::rethrow_exception(op.error);
}

// Points the operation at schedule `s` and the caller's buffers; scratch from `scratch`.
void prepare(operation& op, const schedule& s, const void* in, void* out, const datatype& type,
             const ranklab::op& reduction,
             detail::aligned_bytes& scratch, std::size_t& scratch_bytes) {
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
    scratch = detail::make_aligned_bytes(need);
    scratch_bytes = need;
  }
  std::size_t at = 0;
  for (auto count : s.scratch_counts()) {
    op.buffers.base.push_back(scratch.get() + at);
    at += (count * type.size + 63) / 64 * 64;
  }
  op.started = op.complete = false;
  op.error = nullptr;
  op.round = 0;
  op.reset_round();
}

std::uint64_t fnv(std::uint64_t h, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xff;
    h *= 1099511628211ull;
  }
  return h;
}

std::uint64_t signature_of(const call& c, const algorithm* a) {
  std::uint64_t h = 1469598103934665603ull;
  h = fnv(h, static_cast<std::uint64_t>(c.args.coll));
  h = fnv(h, static_cast<std::uint64_t>(c.args.p));
  h = fnv(h, static_cast<std::uint64_t>(is_rooted(c.args.coll) ? c.args.root : 0));
  h = fnv(h, c.args.count);
  for (auto v : c.args.counts) h = fnv(h, v);
  for (auto v : c.args.displs) h = fnv(h, v);
  h = fnv(h, (static_cast<std::uint64_t>(c.type.kind) << 32) | c.type.size);
  if (is_reduction(c.args.coll)) {
    h = fnv(h, static_cast<std::uint64_t>(c.reduction.kind));
    // All ranks are threads of one process: user operators compare by function.
    h = fnv(h, reinterpret_cast<std::uintptr_t>(c.reduction.function));
  }
  h = fnv(h, reinterpret_cast<std::uintptr_t>(a));
  h = fnv(h, static_cast<std::uint64_t>(c.args.params.blocks));
  h = fnv(h, static_cast<std::uint64_t>(c.args.params.radix));
  h = fnv(h, static_cast<std::uint64_t>(c.args.params.removed_steps));
  h = fnv(h, c.args.params.segment);
  return h;
}

bool same_call(const detail::cached_schedule& e, const call& c) {
  const call& k = e.key_call;
  return k.args.coll == c.args.coll && k.args.root == c.args.root && k.args.count == c.args.count &&
         k.args.commutative == c.args.commutative && k.args.params == c.args.params && k.type == c.type &&
         k.reduction.kind == c.reduction.kind && k.reduction.function == c.reduction.function &&
         e.requested == c.choice.name && k.args.counts == c.args.counts &&
         k.args.displs == c.args.displs;
}

constexpr std::size_t cache_capacity = 16;

// This rank's schedule for the call, from the cache or built now.
std::shared_ptr<const detail::cached_schedule> schedule_for(comm_state& cs, const call& c, int rank, int p) {
  auto it = std::find_if(cs.cache.begin(), cs.cache.end(), [&](const auto& e) { return same_call(*e, c); });
  if (it != cs.cache.end()) {
    if (it != cs.cache.begin()) cs.cache.splice(cs.cache.begin(), cs.cache, it);
    return cs.cache.front();
  }
  coll_args args = c.args;
  args.p = p;
  args.commutative = c.reduction.commutative;
  args.elem_size = c.type.size;
  auto e = std::make_shared<detail::cached_schedule>();
  e->key_call = c;
  e->requested = std::string(c.choice.name);
  e->key_call.choice.name = e->requested;
  try {
    validate(args);
    e->algo = &select_algorithm(args, c.type.size, c.choice.name, &e->reason);
    e->plan = e->algo->build(args, rank);
  } catch (const error& err) {
    throw usage_error(rank, err.operation(), err.cause());
  }
  e->signature = signature_of(c, e->algo);
  e->text = describe(args) + " algorithm=" + std::string(e->algo->name);
  cs.cache.push_front(std::move(e));
  if (cs.cache.size() > cache_capacity) cs.cache.pop_back();
  return cs.cache.front();
}

call_tag tag_for(comm_state& cs, const call& c, const detail::cached_schedule& entry) {
  return call_tag{static_cast<std::uint8_t>(c.args.coll), ++cs.calls, entry.signature,
                  is_rooted(c.args.coll) ? c.args.root : 0, c.args.count, entry.algo};
}

void progress_thread_main(team_state* t, std::shared_ptr<comm_state> state, int rank) {
  comm_state& cs = *state;
  engine e{*t, cs, rank};
  for (;;) {
    bool idle = false;
    {
      std::lock_guard lock(cs.progress_lock);
      if (cs.stop) return;
      try {
        progress_all(e, nullptr);
      } catch (...) {
        t->fail_with_current_exception(rank);
        abandon_all(*t, rank, cs, nullptr);
      }
      idle = cs.active.empty();
    }
    // Sleep until a message or release rings the rank's doorbell (or briefly, to notice
    // new requests and stop).
    t->doze(rank, idle ? std::chrono::milliseconds(2) : std::chrono::milliseconds(1), [] { return false; });
  }
}

// A rank that returns with requests still unfinished can never finish them: they fail
// (their request reports it), and so does the team, since the peers wait for this rank's
// part of those calls.
void abandon_unfinished(team_state& t, int me, comm_state& cs) {
  std::lock_guard lock(cs.progress_lock);  // the progress thread has stopped; cheap
  std::string calls;
  for (const operation* op : cs.active)
    if (!op->complete) calls += fmt::format(" #{} i{}", op->tag.call, op->name);
  if (calls.empty()) return;
  const usage_error failure(me, "comm", fmt::format("rank {} returned with unfinished requests:{}", me, calls));
  t.fail(me, std::make_exception_ptr(failure), failure.what(), detail::failure_kind::rank_error);
  for (operation* op : cs.active)
    abandon(t, me, *op, std::make_exception_ptr(usage_error(me, op->name, "the rank returned with this request unfinished")));
}

// A comm that was moved from or whose team has ended can do nothing.
void require_usable(const team_state* t, const comm_state* cs, int rank, const char* operation) {
  if (!t) throw usage_error(rank, operation, "this comm was moved from; use the comm it was moved to");
  if (cs->ended.load(std::memory_order_acquire))
    throw usage_error(rank, operation, "this comm has ended (its rank returned or its team was destroyed)");
}

// The general entry points take raw pointers: a buffer the call needs must be there.
void require_buffers(const call& c, int rank, int p, const void* in, const void* out) {
  coll_args args = c.args;
  args.p = p;
  const buffer_extent ext = buffer_extents(args, rank);
  for (auto [which, ptr, count] : {std::tuple{"in", in, ext.in}, std::tuple{"out", out, ext.out}})
    if (count > 0 && !ptr)
      throw usage_error(rank, std::string(name(c.args.coll)),
                        fmt::format("'{}' is a null pointer but the call needs {} elements", which, count));
}

bool takes_counts(collective c) {
  return c == collective::allgatherv || c == collective::reduce_scatter || c == collective::scatterv ||
         c == collective::gatherv || c == collective::alltoallv;
}

// Schedules read `in` while they write `out`, so the two may share memory only where every
// algorithm is written for it: the very same buffer for allreduce, scan and exscan (in place).
void require_separate(const call& c, int rank, const void* in, const void* out) {
  const buffer_extent ext = buffer_extents(c.args, rank);
  if (ext.in == 0 || ext.out == 0 || !in || !out) return;
  const auto* a = static_cast<const std::byte*>(in);
  const auto* b = static_cast<const std::byte*>(out);
  const std::uint64_t a_bytes = ext.in * c.type.size, b_bytes = ext.out * c.type.size;
  if (a + a_bytes <= b || b + b_bytes <= a) return;
  const bool in_place_ok =
      c.args.coll == collective::allreduce || c.args.coll == collective::scan || c.args.coll == collective::exscan;
  if (in_place_ok && a == b && a_bytes == b_bytes) return;
  throw usage_error(rank, std::string(name(c.args.coll)),
                    "'in' and 'out' overlap; only allreduce, scan and exscan take the same buffer for both (in place)");
}

}  // namespace

// ---- comm ------------------------------------------------------------------------------

comm::comm(detail::team_state* team, int rank)
    : team_(team), rank_(rank), size_(team->p), state_(std::make_shared<detail::comm_state>()) {
  state_->stage.resize(chunks_for(detail::header_bytes + max_eager_limit));
  state_->blocking.name = "sendrecv";
  team->slots[rank].trace.clear();
  team->register_comm(state_);
}

comm::comm(comm&& o) noexcept
    : team_(std::exchange(o.team_, nullptr)), rank_(o.rank_), size_(o.size_), state_(std::move(o.state_)) {}

comm& comm::operator=(comm&& o) noexcept {
  if (this != &o) {
    this->~comm();
    new (this) comm(std::move(o));
  }
  return *this;
}

comm::~comm() {
  if (!team_ || state_->ended.load(std::memory_order_acquire)) return;  // moved from, or the team ended
  comm_state& cs = *state_;
  if (cs.threaded) {
    {
      std::lock_guard lock(cs.progress_lock);
      cs.stop = true;
    }
    cs.progress_thread.join();
    cs.threaded = false;
  }
  abandon_unfinished(*team_, rank_, cs);
  cs.ended.store(true, std::memory_order_release);
  if (!cs.stash.empty()) {
    std::string text;
    for (const auto& m : cs.stash) text += fmt::format(" {}:#{}", m.from, m.header.call);
    team_->slots[rank_].leftover = fmt::format("rank {} returned with unreceived messages (from:call){}", rank_, text);
  }
  team_->finish(rank_);
}

std::size_t comm::sendrecv_bytes(int dest, std::span<const std::byte> send, int source, std::span<std::byte> recv) {
  auto check_peer = [&](int peer, const char* what) {
    if (peer != no_rank && (peer < 0 || peer >= size_))
      throw usage_error(rank_, "sendrecv", fmt::format("{} rank {} outside 0..{}", what, peer, size_ - 1));
  };
  require_usable(team_, state_.get(), rank_, "sendrecv");
  check_peer(dest, "destination");
  check_peer(source, "source");
  team_->check_failure(rank_, "sendrecv");
  comm_state& cs = *state_;
  engine e{*team_, cs, rank_};
  // The fast path: a small message through the express lane and the reply polled there,
  // with none of the operation machinery. Taken only when nothing else needs progress or
  // ordering (no requests, no stashed messages, no tracing, no progress thread); anything
  // unusual on the way hands over to the general path below at the point reached.
  // (threaded first: with a progress thread the stash is not ours to read unlocked)
  const bool fast = !cs.threaded && cs.active.empty() && cs.stash.empty() && !team_->options.trace;
  bool posted = false;
  if (fast) {
    if (dest != no_rank) {
      const piece message{const_cast<std::byte*>(send.data()), send.size()};
      posted = try_post_express(e, team_->box(rank_, dest), dest, call_tag{}, std::span(&message, 1), send.size());
    }
    if (source == no_rank && (posted || dest == no_rank)) return 0;
    if (source != no_rank && (posted || dest == no_rank)) {
      detail::mailbox& box = team_->box(source, rank_);
      const std::uint32_t seq = box.consumed.load(std::memory_order_relaxed) + 1;
      const detail::express_cell& cell = box.cell(seq);
      for (int i = 0; i < team_->spin_limit; ++i) {
        if (cell.seq.load(std::memory_order_acquire) == seq) {
          if (cell.coll != detail::point_to_point || cell.bytes > recv.size()) break;  // the general path explains
          const std::size_t bytes = cell.bytes;
          if (bytes) std::memcpy(recv.data(), cell.payload, bytes);
          box.consumed.store(seq, std::memory_order_release);
          count_progress(e);
          return bytes;
        }
        if (box.queue.read_available() > 0 || ((i & 63) == 63 && team_->failed.load(std::memory_order_relaxed))) break;
        detail::cpu_relax();
      }
    }
  }
  operation& op = cs.blocking;
  op.entry.reset();
  op.plan = nullptr;
  op.p2p = true;
  op.name = "sendrecv";
  op.tag = call_tag{};
  op.p2p_to = dest;
  op.p2p_from = source;
  op.p2p_capacity = recv.size();
  op.send_pieces.assign(dest == no_rank ? 0 : 1, piece{const_cast<std::byte*>(send.data()), send.size()});
  op.recv_pieces.assign(source == no_rank ? 0 : 1, piece{recv.data(), recv.size()});
  op.started = op.complete = false;
  op.error = nullptr;
  op.round = 0;
  op.reset_round();
  op.pieces_ready = true;
  if (posted) {  // by the fast path: resume after the send
    op.started = op.pre_done = op.posted = true;
    op.received_bytes = 0;
  }
  wait_for(e, op);
  return static_cast<std::size_t>(op.received_bytes);
}

void comm::execute(const schedule& s, const void* in, void* out, const datatype& type, const op& reduction) {
  require_usable(team_, state_.get(), rank_, "schedule");
  if (s.rank() != rank_ || s.size() != size_)
    throw usage_error(rank_, "schedule",
                      fmt::format("schedule of rank {} of {} run by rank {} of {}", s.rank(), s.size(), rank_, size_));
  team_->check_failure(rank_, "schedule");
  comm_state& cs = *state_;
  operation& op = cs.blocking;
  prepare(op, s, in, out, type, reduction, cs.scratch, cs.scratch_bytes);
  op.entry.reset();
  op.name = "schedule";
  op.tag = call_tag{};  // a custom schedule matches like point-to-point rounds
  engine e{*team_, cs, rank_};
  wait_for(e, op);
}

void comm::run_collective(const call& c, const void* in, void* out) {
  require_usable(team_, state_.get(), rank_, name(c.args.coll).data());
  comm_state& cs = *state_;
  if (is_reduction(c.args.coll)) kernel_for(c.reduction, c.type);  // reject bad (op, type) early, on every rank
  auto entry = schedule_for(cs, c, rank_, size_);
  require_buffers(c, rank_, size_, in, out);
  team_->check_failure(rank_, name(c.args.coll).data());
  cs.last_algo = entry->algo;
  cs.last_reason = entry->reason;
  operation& op = cs.blocking;
  prepare(op, entry->plan, in, out, c.type, c.reduction, cs.scratch, cs.scratch_bytes);
  op.name = name(c.args.coll).data();
  op.tag = tag_for(cs, c, *entry);
  op.entry = std::move(entry);
  engine e{*team_, cs, rank_};
  wait_for(e, op);
  team_->slots[rank_].call.store(0, std::memory_order_relaxed);
}

request comm::start_collective(const call& c, const void* in, void* out) {
  require_usable(team_, state_.get(), rank_, name(c.args.coll).data());
  comm_state& cs = *state_;
  if (is_reduction(c.args.coll)) kernel_for(c.reduction, c.type);
  auto entry = schedule_for(cs, c, rank_, size_);
  require_buffers(c, rank_, size_, in, out);
  team_->check_failure(rank_, name(c.args.coll).data());
  cs.last_algo = entry->algo;
  cs.last_reason = entry->reason;
  auto op = std::make_unique<operation>();
  prepare(*op, entry->plan, in, out, c.type, c.reduction, op->scratch, op->scratch_bytes);
  op->name = name(c.args.coll).data();
  op->tag = tag_for(cs, c, *entry);
  op->entry = std::move(entry);
  operation* raw = op.get();
  engine e{*team_, cs, rank_};
  if (team_->options.progress_thread && !cs.threaded) {
    cs.threaded = true;
    cs.progress_thread = std::thread(progress_thread_main, team_, state_, rank_);
  }
  locked(cs, [&] {
    cs.active.push_back(raw);
    try {
      advance(e, *raw);  // start now: the first sends go out before the caller computes
    } catch (...) {
      team_->fail_with_current_exception(rank_);
      abandon(*team_, rank_, *raw);
    }
  });
  return request(team_, state_, rank_, std::move(op));
}

const algorithm* comm::last_algorithm() const { return state_ ? state_->last_algo : nullptr; }
std::string_view comm::last_selection_reason() const { return state_ ? std::string_view(state_->last_reason) : ""; }

void comm::expect(collective c, const char* which, std::uint64_t have, std::uint64_t want) const {
  if (have != want)
    throw usage_error(rank_, std::string(name(c)),
                      fmt::format("'{}' buffer holds {} elements, the call needs {}", which, have, want));
}

comm::prepared comm::make(collective c, int root, std::uint64_t count, const void* in, void* out, datatype t,
                          const op& o, const algo& a) const {
  prepared pr;
  pr.c = make_call(c, size_, count, root, t, o, a);
  pr.in = in;
  pr.out = out;
  if (is_rooted(c) && (root < 0 || root >= size_))
    throw usage_error(rank_, std::string(name(c)), fmt::format("root {} outside 0..{}", root, size_ - 1));
  if (!takes_counts(c)) require_separate(pr.c, rank_, in, out);
  return pr;
}

comm::prepared comm::make_v(collective c, int root, counts_view counts, counts_view displs, const void* in,
                            std::uint64_t in_count, void* out, std::uint64_t out_count, datatype t, const op& o,
                            const algo& a) const {
  prepared pr = make(c, root, 0, in, out, t, o, a);
  pr.c.args.counts.assign(counts.begin(), counts.end());
  pr.c.args.displs.assign(displs.begin(), displs.end());
  try {
    validate(pr.c.args);
  } catch (const error& e) {
    throw usage_error(rank_, e.operation(), e.cause());
  }
  const buffer_extent ext = buffer_extents(pr.c.args, rank_);
  // The send buffer must match this rank's count (unless unused here, as at a non-root);
  // the receive buffer may be longer than the layout needs, as in MPI.
  if (ext.in > 0 || !is_rooted(c)) expect(c, "in", in_count, ext.in);
  if (out_count < ext.out) expect(c, "out", out_count, ext.out);
  require_separate(pr.c, rank_, in, out);
  return pr;
}

// ---- requests ----------------------------------------------------------------------------

request::request() noexcept = default;
request::request(detail::team_state* team, std::shared_ptr<detail::comm_state> state, int rank,
                 std::unique_ptr<detail::operation> op)
    : team_(team), state_(std::move(state)), rank_(rank), op_(std::move(op)) {}
request::request(request&& o) noexcept = default;
request& request::operator=(request&& o) noexcept {
  if (this != &o) {
    release();
    team_ = o.team_;
    state_ = std::move(o.state_);
    rank_ = o.rank_;
    op_ = std::move(o.op_);
  }
  return *this;
}
request::~request() { release(); }

void request::release() noexcept {
  if (!op_) return;
  if (state_->ended.load(std::memory_order_acquire)) {  // the comm abandoned it; the team may be gone
    op_.reset();
    state_.reset();
    return;
  }
  try {
    if (!done()) wait();
  } catch (...) {
  }
  locked(*state_, [&] {
    auto& active = state_->active;
    active.erase(std::remove(active.begin(), active.end(), op_.get()), active.end());
  });
  op_.reset();
  state_.reset();
}

// A progress thread may be advancing the operation: read its state under the comm's lock.
bool request::done() const { return op_ && locked(*state_, [&] { return op_->complete; }); }

namespace {
// A request kept past its comm: the comm abandoned it (complete, with an error) and the
// team may be gone. Rethrows that error; returns whether the request can still progress.
bool usable(const std::shared_ptr<detail::comm_state>& state, const detail::operation& op) {
  if (!state->ended.load(std::memory_order_acquire)) return true;
  if (op.error) std::rethrow_exception(op.error);
  if (!op.complete)
    throw usage_error(no_rank, op.name, "the comm of this request has ended (its rank returned or its team was destroyed)");
  return false;
}
}  // namespace

bool request::test() {
  if (!op_) return true;
  if (!usable(state_, *op_)) return true;
  engine e{*team_, *state_, rank_};
  bool complete = false;
  std::exception_ptr error;
  try {
    locked(*state_, [&] {
      progress_all(e, op_.get());
      complete = op_->complete;
      error = op_->error;
    });
    // A polling loop must not spin forever on a team that has failed, nor on a deadlock.
    if (!complete) {
      team_->check_failure(rank_, op_->name);
      team_->note_poll(rank_, [&] { return locked(*state_, [&] { return blocked_on(e, *op_); }); });
    }
  } catch (...) {
    team_->fail_with_current_exception(rank_);
    locked(*state_, [&] { abandon_all(*team_, rank_, *state_, op_.get()); });
    throw;
  }
  if (complete && error) std::rethrow_exception(error);
  return complete;
}

void request::wait() {
  if (!op_) return;
  if (!usable(state_, *op_)) return;
  engine e{*team_, *state_, rank_};
  wait_for(e, *op_);
}

void wait_all(std::span<request> requests) {
  for (request& r : requests) r.wait();
}

bool test_all(std::span<request> requests) {
  bool all = true;
  for (request& r : requests) all &= r.test();
  return all;
}

// Waits like a blocking call (spin, yield, sleep), so that a rank in wait_any counts as
// blocked for deadlock detection and wakes on a team failure.
std::size_t wait_any(std::span<request> requests) {
  const request* first = nullptr;
  for (const request& r : requests)
    if (r.valid()) {
      first = &r;
      break;
    }
  if (!first) return requests.size();
  std::size_t found = requests.size();
  auto ready = [&] {
    for (std::size_t i = 0; i < requests.size(); ++i)
      if (requests[i].valid() && requests[i].test()) {
        found = i;
        return true;
      }
    return false;
  };
  engine e{*first->team_, *first->state_, first->rank_};
  first->team_->wait(
      first->rank_, ready, [&] { return locked(e.cs, [&] { return blocked_on(e, *first->op_); }); }, "wait_any");
  return found;
}

}  // namespace ranklab
