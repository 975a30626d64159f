// The comm API: a rank's handle on the thread runtime. Each entry point checks its
// arguments, sets up the rank's operation and hands it to the thread executor
// (executors/thread_executor.hpp); a comm's end settles whatever the rank left unfinished.
#include "ranklab/comm.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <string>
#include <utility>

#include "call_checks.hpp"
#include "detail/comm_state.hpp"
#include "detail/engine.hpp"
#include "detail/team_state.hpp"
#include "executors/progress_thread.hpp"
#include "executors/schedule_cache.hpp"
#include "executors/thread_executor.hpp"
#include "mailbox/protocol.hpp"

namespace ranklab {

void detail::throw_unusable(const team_state* t, int rank, const char* operation) {
  if (!t) throw usage_error(rank, operation, "this comm was moved from; use the comm it was moved to");
  throw usage_error(rank, operation, "this comm has ended (its rank returned or its team was destroyed)");
}

namespace {

using detail::abandon;
using detail::cached_schedule;
using detail::call_tag;
using detail::chunks_for;
using detail::comm_state;
using detail::count_progress;
using detail::engine;
using detail::join_progress_thread;
using detail::mailbox;
using detail::operation;
using detail::piece;
using detail::post_express_line;
using detail::prepare;
using detail::require_usable;
using detail::schedule_for;
using detail::tag_for;
using detail::team_state;
using detail::try_post_express;
using detail::wait_for;

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
    abandon(t, me, *op,
            std::make_exception_ptr(usage_error(me, op->name, "the rank returned with this request unfinished")));
}

// What a moved-from comm compares a typed call with: nothing repeats it, so the call goes on
// to the checks, which refuse the comm.
const detail::last_call nothing_prepared{};

// What every collective call does first, blocking or not: checks the call on this rank and
// finds its schedule.
std::shared_ptr<const cached_schedule> checked_schedule(team_state* t, comm_state* state, int rank, int p,
                                                        const call& c, const void* in, const void* out) {
  require_usable(t, state, rank, name(c.args.coll).data());
  comm_state& cs = *state;
  if (is_reduction(c.args.coll)) kernel_for(c.reduction, c.type);  // reject bad (op, type) early, on every rank
  auto entry = c.args.in_place == detail::called_in_place(c, in, out)
                   ? schedule_for(cs, c, rank, p, t)
                   : schedule_for(cs, detail::as_called(c, in, out), rank, p, t);
  detail::require_buffers(c, rank, p, in, out);
  t->check_failure(rank, name(c.args.coll).data());
  cs.last_algo = entry->algo;
  cs.last_reason = entry->reason;
  return entry;
}

// Points `op` at the call's schedule and buffers (numbering it is the caller's: a
// persistent call is numbered by each start).
void aim(operation& op, const call& c, std::shared_ptr<const cached_schedule> entry, const void* in, void* out,
         detail::aligned_bytes& scratch, std::size_t& scratch_bytes) {
  prepare(op, entry->plan, in, out, c.type, c.reduction, scratch, scratch_bytes);
  op.name = name(c.args.coll).data();
  op.entry = std::move(entry);
}

// A v-collective's counts and displacements against those of the prepared call's key (the
// rest of the key last_call::same_call compares). A loop for the few counts of a small
// team, where a call into memcmp cost more than the compare.
[[gnu::noinline]] bool same_many_values(std::span<const std::uint64_t> a, std::span<const std::uint64_t> b) {
  return std::memcmp(a.data(), b.data(), a.size() * sizeof(std::uint64_t)) == 0;
}
bool same_values(std::span<const std::uint64_t> a, std::span<const std::uint64_t> b) {
  if (a.size() != b.size()) return false;
  if (a.size() > 16) return same_many_values(a, b);
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}
bool same_layout(const comm_state& cs, std::span<const std::uint64_t> counts, std::span<const std::uint64_t> displs) {
  const coll_args& k = cs.prepared->key_call.args;
  return same_values(k.counts, counts) && same_values(k.displs, displs);
}
// Whether the blocking operation is still prepared for exactly this call: the schedule
// cache's key, the same buffers and the same operator context (detail::last_call), compared
// through the flattened copy of the key (comm_state::repeat): the parts of every call
// first, then the counts of a v-collective.
bool repeats_prepared_call(const comm_state& cs, const call& c, const void* in, const void* out) {
  if (!cs.prepared ||
      !cs.repeat.same_call(c.args.coll, c.args.root, c.args.count, in, out, c.type, c.reduction, c.choice) ||
      c.args.commutative != cs.repeat.commutative)
    return false;
  return cs.repeat.single_count ? c.args.counts.empty() && c.args.displs.empty()
                                : same_layout(cs, c.args.counts, c.args.displs);
}
// The part of that test for a call with a single count, which calls nothing: with it the
// repeat of such a call needs no frame (see post_express_line on why stores count).
bool repeats_single_count_call(const comm_state& cs, const call& c, const void* in, const void* out) {
  return cs.prepared && cs.repeat.single_count && c.args.counts.empty() && c.args.displs.empty() &&
         cs.repeat.same_call(c.args.coll, c.args.root, c.args.count, in, out, c.type, c.reduction, c.choice) &&
         c.args.commutative == cs.repeat.commutative;
}

// Records that the blocking operation is prepared for call `c` on these buffers.
void remember_prepared(comm_state& cs, const call& c, const void* in, const void* out, int rank, int p) {
  const cached_schedule& e = *cs.blocking.entry;
  cs.prepared = &e;
  const bool single_count = c.args.counts.empty() && c.args.displs.empty();
  coll_args args = c.args;
  args.p = p;
  const buffer_extent ext = buffer_extents(args, rank);
  comm_state::repeat_key& k = cs.repeat;
  k.in = in;
  k.out = out;
  k.count = c.args.count;
  k.coll = c.args.coll;
  k.root = c.args.root;
  k.type = c.type;
  k.kind = c.reduction.kind;
  k.commutative = c.args.commutative;
  k.function = c.reduction.function;
  k.context = c.reduction.context;
  k.params = c.args.params;
  k.algorithm = e.requested;
  k.single_count = single_count;
  k.in_extent = ext.in;
  k.out_extent = ext.out;
  k.in_exact = ext.in > 0 || !is_rooted(c.args.coll);
  k.separate = detail::buffers_separate(c, ext, in, out);
  k.typed = single_count && k.separate;
}

// Runs the blocking operation as prepared.
void run_blocking(team_state& t, comm_state& cs, int rank) {
  engine e{t, cs, rank};
  wait_for(e, cs.blocking);
  t.home(rank).call.store(0, std::memory_order_relaxed);
}

// The same call on the same buffers as the last one: its checks passed and the blocking
// operation still holds its schedule and resolved buffers. Only the number is new.
void run_again(team_state& t, comm_state& cs, int rank) {
  operation& op = cs.blocking;
  require_usable(&t, &cs, rank, op.name);
  t.check_failure(rank, op.name);
  op.tag.call = ++cs.calls;
  detail::wait_again(t, cs, rank, op);
}

}  // namespace

comm::comm(detail::team_state* team, int rank)
    : team_(team), rank_(rank), size_(team->p), state_(std::make_shared<detail::comm_state>()), last_(&state_->repeat) {
  state_->stage.resize(chunks_for(detail::header_bytes + max_eager_limit));
  state_->blocking.name = "sendrecv";
  // A rank that attaches again numbers its calls on from where its last comm stopped.
  state_->calls = team->slots[rank].calls_made;
  if (team->world == team && state_->calls == 0) team->slots[rank].trace.clear();
  team->register_comm(state_);
}

comm::comm(std::shared_ptr<detail::team_state> group, int rank) : comm(group.get(), rank) { group_ = std::move(group); }

comm::comm(comm&& o) noexcept
    : group_(std::move(o.group_)),
      team_(std::exchange(o.team_, nullptr)),
      rank_(o.rank_),
      size_(o.size_),
      state_(std::move(o.state_)),
      last_(std::exchange(o.last_, &nothing_prepared)) {}

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
    join_progress_thread(cs);
    cs.threaded = false;
  }
  abandon_unfinished(*team_, rank_, cs);
  engine e{*team_, cs, rank_};
  detail::publish_taken_from_all(e);  // what it took counts as taken for check_quiet
  cs.ended.store(true, std::memory_order_release);
  team_->slots[rank_].calls_made = cs.calls;
  auto& busy = team_->home(rank_).busy;
  std::erase_if(busy, [&](const detail::rank_slot::busy_comm& b) { return b.cs == &cs; });
  if (!cs.stash.empty()) {
    std::string text;
    for (const auto& m : cs.stash) text += fmt::format(" {}:#{}", m.from, m.header.call);
    std::string& leftover = team_->home(rank_).leftover;
    if (!leftover.empty()) leftover += "\n  ";
    leftover += fmt::format("{} returned with unreceived messages (from:call){}{}", team_->rank_text(rank_), text,
                            team_->comm_text());
  }
  team_->finish(rank_);
}

namespace {

[[noreturn, gnu::cold, gnu::noinline]] void throw_peer_outside(int rank, int p, int peer, const char* what) {
  throw usage_error(rank, "sendrecv", fmt::format("{} rank {} outside 0..{}", what, peer, p - 1));
}

// A round of sendrecv the general way, through the blocking operation: after the fast way
// (`posted`: it has sent the message), or instead of it.
[[gnu::noinline]] std::size_t sendrecv_slowly(team_state& t, comm_state& cs, int rank, int dest,
                                              std::span<const std::byte> send, int source, std::span<std::byte> recv,
                                              bool posted) {
  engine e{t, cs, rank};
  operation& op = cs.blocking;
  cs.forget_prepared();  // first: the blocking operation no longer holds a collective
  op.entry.reset();
  op.plan = nullptr;
  op.p2p = true;
  op.publishes = false;      // a round shares no buffers (the last collective's plan may have)
  op.messages_only = false;  // not a plan's rounds (run_quick)
  op.name = "sendrecv";
  op.tag = call_tag{};
  op.p2p_to = dest;
  op.p2p_from = source;
  op.p2p_capacity = recv.size();
  op.all_send_pieces.assign(dest == no_rank ? 0 : 1, piece{const_cast<std::byte*>(send.data()), send.size()});
  op.all_recv_pieces.assign(source == no_rank ? 0 : 1, piece{recv.data(), recv.size()});
  op.send_pieces = op.all_send_pieces;
  op.recv_pieces = op.all_recv_pieces;
  op.rewind();
  if (posted) {  // by the fast way: resume after the send
    op.started = op.pre_done = op.posted = true;
    op.received_bytes = 0;
  }
  wait_for(e, op);
  return static_cast<std::size_t>(op.received_bytes);
}

// The fast way's message: one line inline, a few lines through the express lane's general
// post, nothing else (then the general way).
bool post_sendrecv_message(team_state& t, comm_state& cs, int rank, int dest, std::span<const std::byte> send) {
  const piece message{const_cast<std::byte*>(send.data()), send.size()};
  mailbox& box = t.box(rank, dest);
  if (post_express_line(t, rank, box, dest, call_tag{}, message)) return true;
  engine e{t, cs, rank};
  return try_post_express(e, box, dest, call_tag{}, std::span(&message, 1), send.size());
}

}  // namespace

std::size_t comm::sendrecv_bytes(int dest, std::span<const std::byte> send, int source, std::span<std::byte> recv) {
  require_usable(team_, state_.get(), rank_, "sendrecv");
  if (dest != no_rank && (dest < 0 || dest >= size_)) throw_peer_outside(rank_, size_, dest, "destination");
  if (source != no_rank && (source < 0 || source >= size_)) throw_peer_outside(rank_, size_, source, "source");
  team_state& t = *team_;
  t.check_failure(rank_, "sendrecv");
  comm_state& cs = *state_;
  // The fast way: a small message through the express lane and the reply polled there,
  // with none of the operation machinery. Taken only when nothing else needs progress or
  // ordering (no requests, no stashed messages, no tracing, no progress thread); anything
  // unusual on the way hands over to the general way at the point reached. Its stores are
  // few, as a repeated collective's (docs/runtime.md, "A repeated small call stores little").
  // (threaded first: with a progress thread the stash is not ours to read unlocked)
  if (cs.threaded || !cs.active.empty() || !cs.stash.empty() || t.options.trace)
    return sendrecv_slowly(t, cs, rank_, dest, send, source, recv, false);
  const bool posted = dest != no_rank && post_sendrecv_message(t, cs, rank_, dest, send);
  if (dest != no_rank && !posted) return sendrecv_slowly(t, cs, rank_, dest, send, source, recv, false);
  if (source == no_rank) return 0;
  mailbox& box = t.box(source, rank_);
  const std::uint32_t seq = box.next_to_take();
  const detail::express_cell& cell = box.cell(seq);
  // A reply that may take more than one line has its second line prefetched on every poll
  // of the first, so that the line is on its way, not fetched only after the first has
  // come: two crossings in a row became about one (64-byte sendrecv at p = 2, slow state:
  // 0.26 -> 0.21 us). A hint only: what is read is still ordered by the acquire below.
  const detail::express_cell* const second = recv.size() > detail::express_head_payload ? &box.cell(seq + 1) : nullptr;
  for (int i = 0; i < t.spin_limit; ++i) {
    if (second) __builtin_prefetch(second);
    if (cell.seq.load(std::memory_order_acquire) == seq) {
      // The general way explains a mismatch, and copies what a descriptor describes.
      if (cell.coll != detail::point_to_point || cell.bytes > recv.size() ||
          cell.bytes == detail::express_descriptor_mark)
        break;
      const std::size_t bytes = box.copy_express(seq, recv.data());
      if (box.taken_through(seq + cell.lines - 1)) cs.takes_unpublished = true;
      t.ring(source);  // it may wait for room
      count_progress(t, rank_);
      return bytes;
    }
    if (box.queue.read_available() > 0 || ((i & 63) == 63 && t.failed.load(std::memory_order_relaxed))) break;
    detail::cpu_relax();
  }
  return sendrecv_slowly(t, cs, rank_, dest, send, source, recv, posted);
}

void comm::execute(const schedule& s, const void* in, void* out, const datatype& type, const op& reduction) {
  require_usable(team_, state_.get(), rank_, "schedule");
  if (s.rank() != rank_ || s.size() != size_)
    throw usage_error(rank_, "schedule",
                      fmt::format("schedule of rank {} of {} run by rank {} of {}", s.rank(), s.size(), rank_, size_));
  team_->check_failure(rank_, "schedule");
  comm_state& cs = *state_;
  operation& op = cs.blocking;
  cs.forget_prepared();
  prepare(op, s, in, out, type, reduction, cs.scratch, cs.scratch_bytes);
  op.publishes = true;  // a hand-built schedule's peers may read us after message rounds alone
  op.entry.reset();
  op.name = "schedule";
  op.tag = call_tag{};  // a custom schedule matches like point-to-point rounds
  engine e{*team_, cs, rank_};
  wait_for(e, op);
}

void comm::repeat() { run_again(*team_, *state_, rank_); }  // last_call().typed: a usable call is prepared

// The same for a v-collective: its counts and displacements too, and the lengths of the
// caller's buffers against this rank's part of the layout, as make_checked_vcall holds them
// (a call that fails those checks goes on to them, and to their error).
bool comm::repeat_collective(const detail::vcall_request& r) {
  if (!team_) return false;
  const comm_state& cs = *state_;
  const detail::call_request& c = r.call;
  if (!cs.prepared || cs.repeat.single_count || !cs.repeat.separate ||
      !cs.repeat.same_call(c.coll, c.root, c.count, c.in, c.out, c.type, *c.reduction, *c.choice) ||
      (cs.repeat.in_exact && r.in_count != cs.repeat.in_extent) || r.out_count < cs.repeat.out_extent ||
      !same_layout(cs, r.counts, r.displs))
    return false;
  run_again(*team_, *state_, rank_);
  return true;
}

namespace {

// A blocking call that repeats nothing: checked, prepared and run.
[[gnu::noinline]] void run_new_call(team_state* t, comm_state* state, int rank, const call& c, const void* in,
                                    void* out) {
  require_usable(t, state, rank, name(c.args.coll).data());  // before reading the team, which may have ended
  const int p = t->p;
  auto entry = checked_schedule(t, state, rank, p, c, in, out);
  comm_state& cs = *state;
  cs.forget_prepared();  // until remember_prepared: preparing may throw halfway (allocation)
  operation& op = cs.blocking;
  aim(op, c, std::move(entry), in, out, cs.scratch, cs.scratch_bytes);
  op.tag = tag_for(cs, c, *op.entry);
  remember_prepared(cs, c, in, out, rank, p);
  run_blocking(*t, cs, rank);
}
// A blocking call that is not a repeat of a call with a single count: a repeat of a
// v-collective's call, or a new call. Out of line, so that run_collective's test for the
// commonest repeat needs no frame of its own; itself without one for the v-collective's
// repeat, whose test calls nothing for the counts of a team of up to 16.
[[gnu::noinline]] void run_other_call(team_state* t, comm_state* state, int rank, const call& c, const void* in,
                                      void* out) {
  if (t && repeats_prepared_call(*state, c, in, out)) return run_again(*t, *state, rank);
  return run_new_call(t, state, rank, c, in, out);
}

}  // namespace

void comm::run_collective(const call& c, const void* in, void* out) {
  if (team_ && repeats_single_count_call(*state_, c, in, out)) return run_again(*team_, *state_, rank_);
  return run_other_call(team_, state_.get(), rank_, c, in, out);
}

request comm::start_collective(const call& c, const void* in, void* out) {
  auto entry = checked_schedule(team_, state_.get(), rank_, size_, c, in, out);
  comm_state& cs = *state_;
  auto op = std::make_unique<operation>();
  aim(*op, c, std::move(entry), in, out, op->scratch, op->scratch_bytes);
  op->tag = tag_for(cs, c, *op->entry);
  detail::launch(*team_, state_, rank_, *op);
  return request(team_, state_, rank_, std::move(op));
}

persistent_request comm::init_collective(const call& c, const void* in, void* out) {
  auto entry = checked_schedule(team_, state_.get(), rank_, size_, c, in, out);
  auto op = std::make_unique<operation>();
  aim(*op, c, std::move(entry), in, out, op->scratch, op->scratch_bytes);
  return persistent_request(team_, state_, rank_, std::move(op));
}

const algorithm* comm::last_algorithm() const { return state_ ? state_->last_algo : nullptr; }
std::string_view comm::last_selection_reason() const { return state_ ? std::string_view(state_->last_reason) : ""; }

}  // namespace ranklab
