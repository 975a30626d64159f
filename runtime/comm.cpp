// The thread executor: one-ported rounds through the mailboxes, and the collective entry
// point that selects, builds, caches and runs a rank's schedule.
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
using detail::piece;
using detail::send_descriptor;
using detail::team_state;
using detail::wait_reason;

std::size_t chunks_for(std::uint64_t bytes) { return static_cast<std::size_t>((bytes + sizeof(chunk) - 1) / sizeof(chunk)); }

std::string describe_tag(std::uint8_t coll, std::uint32_t call, int root, std::uint64_t count, const algorithm* a) {
  if (coll == detail::point_to_point) return "a point-to-point message";
  const auto c = static_cast<collective>(coll);
  std::string s = fmt::format("collective #{} {}", call, name(c));
  if (is_rooted(c)) s += fmt::format(" root={}", root);
  s += fmt::format(" count={}", count);
  if (a) s += fmt::format(" algorithm={}", a->name);
  return s;
}

// Posts a message of `pieces` to `to`. Small messages are copied into the mailbox (eager);
// large ones go by descriptor, and the caller must await_release before touching the data.
// Returns true for a descriptor.
bool post(team_state& t, comm_state& cs, int me, int to, std::span<const piece> pieces,
          std::uint64_t bytes, const char* operation) {
  auto& queue = t.box(me, to).queue;
  message_header h;
  h.coll = cs.tag.coll;
  h.call = cs.tag.call;
  h.signature = cs.tag.signature;
  h.root = cs.tag.root;
  h.count = cs.tag.count;
  h.algo = cs.tag.algo;
  h.bytes = bytes;
  const std::size_t payload = chunks_for(bytes);
  for (;;) {
    const std::size_t room = queue.write_available();
    if (bytes <= t.options.eager_limit && room >= 1 + payload) {
      h.kind = message_kind::eager;
      h.payload_chunks = static_cast<std::uint32_t>(payload);
      std::memcpy(cs.stage[0].bytes, &h, sizeof h);
      std::byte* dst = cs.stage[1].bytes;
      for (const piece& pc : pieces) {
        if (pc.bytes) std::memcpy(dst, pc.data, pc.bytes);
        dst += pc.bytes;
      }
      queue.push(cs.stage.data(), 1 + payload);
      break;
    }
    if (room >= 1) {  // large, or the mailbox is too full to take it inline
      send_descriptor& d = t.slots[me].descriptor;
      d.pieces = pieces.data();
      d.piece_count = static_cast<std::uint32_t>(pieces.size());
      d.state.store(send_descriptor::posted, std::memory_order_release);
      h.kind = message_kind::descriptor;
      h.descriptor = &d;
      std::memcpy(cs.stage[0].bytes, &h, sizeof h);
      queue.push(cs.stage.data(), 1);
      break;
    }
    t.wait(me, [&] { return queue.write_available() >= 1; }, wait_reason::space_to, to, operation);
  }
  auto& progress = t.slots[me].progress;
  progress.store(progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  t.ring(to);
  return h.kind == message_kind::descriptor;
}

void await_release(team_state& t, int me, int to, const char* operation) {
  send_descriptor& d = t.slots[me].descriptor;
  try {
    t.wait(me, [&] { return d.state.load(std::memory_order_acquire) == send_descriptor::released; },
           wait_reason::release_by, to, operation);
  } catch (...) {
    // The team failed. Withdraw the descriptor, or, if the receiver is copying right now,
    // let it finish: our buffers must not be read after we unwind.
    std::uint32_t expected = send_descriptor::posted;
    if (!d.state.compare_exchange_strong(expected, send_descriptor::cancelled))
      while (d.state.load(std::memory_order_acquire) == send_descriptor::claimed) sched_yield();
    throw;
  }
}

// Receives the next message from `from` into `dst`. `exact`: the message must fill dst
// (collectives); otherwise it may be shorter (point-to-point). Returns the bytes received.
std::uint64_t receive(team_state& t, comm_state& cs, int me, int from, std::span<const piece> dst,
                      std::uint64_t capacity, bool exact, combine how, const detail::reduction& red,
                      const char* operation) {
  auto& queue = t.box(from, me).queue;
  t.wait(me, [&] { return queue.read_available() > 0; }, wait_reason::message_from, from, operation);
  message_header h;
  std::memcpy(&h, queue.front().bytes, sizeof h);

  auto discard = [&] {
    if (h.kind == message_kind::eager) {
      queue.pop(cs.stage.data(), 1 + h.payload_chunks);
    } else {
      queue.pop();
      std::uint32_t expected = send_descriptor::posted;
      if (h.descriptor->state.compare_exchange_strong(expected, send_descriptor::released)) t.ring(from);
    }
  };
  const call_tag& tag = cs.tag;
  if (h.coll != tag.coll || h.call != tag.call || h.signature != tag.signature) {
    discard();
    throw mismatch_error(me, operation,
                         fmt::format("collective mismatch: rank {} is in {}, but rank {} sent it {}", me,
                                     describe_tag(tag.coll, tag.call, tag.root, tag.count, tag.algo), from,
                                     describe_tag(h.coll, h.call, h.root, h.count, h.algo)));
  }
  if (h.bytes > capacity || (exact && h.bytes != capacity)) {
    discard();
    throw size_mismatch_error(me, operation, from, h.bytes, capacity);
  }
  if (h.kind == message_kind::eager) {
    queue.pop(cs.stage.data(), 1 + h.payload_chunks);
    const piece src{cs.stage[1].bytes, h.bytes};
    detail::transfer(std::span(&src, 1), dst, how, red);
  } else {
    queue.pop();
    send_descriptor& d = *h.descriptor;
    std::uint32_t expected = send_descriptor::posted;
    if (!d.state.compare_exchange_strong(expected, send_descriptor::claimed, std::memory_order_acq_rel)) {
      t.check_failure(me, operation);  // the sender withdrew: the team has failed
      throw remote_failure(me, operation, from, "sender withdrew its message");
    }
    detail::transfer(std::span(d.pieces, d.piece_count), dst, how, red);
    d.state.store(send_descriptor::released, std::memory_order_release);
    t.ring(from);
  }
  auto& progress = t.slots[me].progress;
  progress.store(progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return h.bytes;
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
  if (is_reduction(c.args.coll)) h = fnv(h, static_cast<std::uint64_t>(c.reduction.kind));
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
         k.args.commutative == c.args.commutative && k.args.params == c.args.params &&
         k.type == c.type && k.reduction.kind == c.reduction.kind && e.requested == c.choice.name &&
         k.args.counts == c.args.counts && k.args.displs == c.args.displs;
}

constexpr std::size_t cache_capacity = 16;

}  // namespace

// ---- comm ------------------------------------------------------------------------------

comm::comm(detail::team_state* team, int rank)
    : team_(team), rank_(rank), size_(team->p), state_(std::make_unique<detail::comm_state>()) {
  state_->stage.resize(1 + chunks_for(max_eager_limit));
  team->slots[rank].trace.clear();
}

comm::comm(comm&& o) noexcept
    : team_(std::exchange(o.team_, nullptr)), rank_(o.rank_), size_(o.size_), state_(std::move(o.state_)) {}

comm& comm::operator=(comm&& o) noexcept {
  if (this != &o) {
    if (team_) team_->finish(rank_);
    team_ = std::exchange(o.team_, nullptr);
    rank_ = o.rank_;
    size_ = o.size_;
    state_ = std::move(o.state_);
  }
  return *this;
}

comm::~comm() {
  if (team_) team_->finish(rank_);
}

std::size_t comm::sendrecv_bytes(int dest, std::span<const std::byte> send, int source, std::span<std::byte> recv) {
  constexpr const char* operation = "sendrecv";
  auto check_peer = [&](int peer, const char* what) {
    if (peer != no_rank && (peer < 0 || peer >= size_))
      throw usage_error(rank_, operation, fmt::format("{} rank {} outside 0..{}", what, peer, size_ - 1));
  };
  check_peer(dest, "destination");
  check_peer(source, "source");
  team_->check_failure(rank_, operation);
  comm_state& cs = *state_;
  cs.tag = call_tag{};
  const std::uint64_t begin = team_->options.trace ? team_->now_ns() : 0;
  bool descriptor = false;
  if (dest != no_rank) {
    cs.send_pieces.assign(1, piece{const_cast<std::byte*>(send.data()), send.size()});
    descriptor = post(*team_, cs, rank_, dest, cs.send_pieces, send.size(), operation);
  }
  std::uint64_t received = 0;
  if (source != no_rank) {
    const piece dst{recv.data(), recv.size()};
    try {
      received = receive(*team_, cs, rank_, source, std::span(&dst, 1), recv.size(), false, combine::copy,
                         detail::reduction{}, operation);
    } catch (...) {
      if (descriptor) {
        try { await_release(*team_, rank_, dest, operation); } catch (...) {}
      }
      throw;
    }
  }
  if (descriptor) await_release(*team_, rank_, dest, operation);
  if (team_->options.trace)
    team_->slots[rank_].trace.push_back(trace_event{rank_, 0, "p2p", 0, dest, source,
                                                    dest == no_rank ? 0 : send.size(), received, begin,
                                                    team_->now_ns()});
  return static_cast<std::size_t>(received);
}

void comm::execute(const schedule& s, const void* in, void* out, const datatype& type, const op& reduction) {
  const char* operation = state_->tag.coll == detail::point_to_point
                              ? "schedule"
                              : name(static_cast<collective>(state_->tag.coll)).data();
  if (s.rank() != rank_ || s.size() != size_)
    throw usage_error(rank_, operation,
                      fmt::format("schedule of rank {} of {} run by rank {} of {}", s.rank(), s.size(), rank_, size_));
  team_->check_failure(rank_, operation);
  comm_state& cs = *state_;
  const std::size_t elem = type.size;

  // Buffers: the caller's two, then scratch carved from one reusable allocation.
  detail::buffer_table& buffers = cs.buffers;
  buffers.elem_size = elem;
  buffers.base.clear();
  buffers.base.push_back(static_cast<std::byte*>(const_cast<void*>(in)));
  buffers.base.push_back(static_cast<std::byte*>(out));
  std::size_t scratch_bytes = 0;
  for (auto count : s.scratch_counts()) scratch_bytes += (count * elem + 63) / 64 * 64;
  if (scratch_bytes > cs.scratch_bytes) {
    cs.scratch.reset(new (std::align_val_t(64)) std::byte[scratch_bytes]);
    cs.scratch_bytes = scratch_bytes;
  }
  std::size_t at = 0;
  for (auto count : s.scratch_counts()) {
    buffers.base.push_back(cs.scratch.get() + at);
    at += (count * elem + 63) / 64 * 64;
  }

  detail::reduction red{nullptr, reduction.context, elem};
  auto steps = [&](std::span<const local_step> list) {
    for (const local_step& st : list) {
      if (st.how != combine::copy && !red.kernel) red.kernel = kernel_for(reduction, type);
      detail::run_step(st, buffers, red);
    }
  };
  const bool tracing = team_->options.trace;
  steps(s.prologue());
  const auto rounds = s.rounds();
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    const round& rd = rounds[i];
    steps(s.pre_steps(rd));
    const std::uint64_t begin = tracing ? team_->now_ns() : 0;
    bool descriptor = false;
    std::uint64_t sent = 0, received = 0;
    if (rd.send_to != no_rank) {
      cs.send_pieces.clear();
      for (const region& r : s.send_regions(rd)) cs.send_pieces.push_back(buffers.resolve(r));
      sent = s.send_count(rd) * elem;
      descriptor = post(*team_, cs, rank_, rd.send_to, cs.send_pieces, sent, operation);
    }
    if (rd.recv_from != no_rank) {
      cs.recv_pieces.clear();
      for (const region& r : s.recv_regions(rd)) cs.recv_pieces.push_back(buffers.resolve(r));
      if (rd.recv_how != combine::copy && !red.kernel) red.kernel = kernel_for(reduction, type);
      try {
        received = receive(*team_, cs, rank_, rd.recv_from, cs.recv_pieces, s.recv_count(rd) * elem, true,
                           rd.recv_how, red, operation);
      } catch (...) {
        if (descriptor) {
          try { await_release(*team_, rank_, rd.send_to, operation); } catch (...) {}
        }
        throw;
      }
    }
    if (descriptor) await_release(*team_, rank_, rd.send_to, operation);
    if (tracing && rd.communicates())
      team_->slots[rank_].trace.push_back(trace_event{rank_, cs.tag.call, name(static_cast<collective>(cs.tag.coll)),
                                                      static_cast<std::uint32_t>(i), rd.send_to, rd.recv_from, sent,
                                                      received, begin, team_->now_ns()});
    steps(s.post_steps(rd));
  }
}

void comm::run_collective(const call& c, const void* in, void* out) {
  comm_state& cs = *state_;
  // Find or build this rank's schedule for the call.
  auto it = std::find_if(cs.cache.begin(), cs.cache.end(), [&](const auto& e) { return same_call(e, c); });
  if (it == cs.cache.end()) {
    coll_args args = c.args;
    args.p = size_;
    args.commutative = c.reduction.commutative;
    validate(args);
    detail::cached_schedule e;
    e.key_call = c;
    e.requested = std::string(c.choice.name);
    e.key_call.choice.name = e.requested;
    try {
      e.algo = &select_algorithm(args, c.type.size, c.choice.name, &e.reason);
    } catch (const error& err) {
      throw usage_error(rank_, err.operation(), err.cause());
    }
    e.plan = e.algo->build(args, rank_);
    e.signature = signature_of(c, e.algo);
    e.text = describe(args) + " algorithm=" + std::string(e.algo->name);
    cs.cache.push_front(std::move(e));
    if (cs.cache.size() > cache_capacity) cs.cache.pop_back();
    it = cs.cache.begin();
  } else if (it != cs.cache.begin()) {
    cs.cache.splice(cs.cache.begin(), cs.cache, it);
    it = cs.cache.begin();
  }
  const auto& entry = *it;
  if (is_reduction(c.args.coll)) kernel_for(c.reduction, c.type);  // reject bad (op, type) early, on every rank

  cs.last_algo = entry.algo;
  cs.last_reason = entry.reason;
  cs.tag = call_tag{static_cast<std::uint8_t>(c.args.coll), ++cs.calls, entry.signature,
                    is_rooted(c.args.coll) ? c.args.root : 0, c.args.count, entry.algo};
  detail::rank_slot& slot = team_->slots[rank_];
  slot.call_text.store(entry.text.c_str(), std::memory_order_relaxed);
  slot.call.store(cs.tag.call, std::memory_order_relaxed);
  struct end_call {
    comm_state& cs;
    detail::rank_slot& slot;
    ~end_call() {
      cs.tag = call_tag{};
      slot.call.store(0, std::memory_order_relaxed);
    }
  } guard{cs, slot};
  execute(entry.plan, in, out, c.type, c.reduction);
}

const algorithm* comm::last_algorithm() const { return state_->last_algo; }
std::string_view comm::last_selection_reason() const { return state_->last_reason; }

void comm::expect(collective c, const char* which, std::uint64_t have, std::uint64_t want) const {
  if (have != want)
    throw usage_error(rank_, std::string(name(c)),
                      fmt::format("'{}' buffer holds {} elements, the call needs {}", which, have, want));
}

void comm::run(collective c, int root, std::uint64_t count, const void* in, void* out, datatype t, const op& o,
               const algo& a) {
  call cl;
  cl.args.coll = c;
  cl.args.p = size_;
  cl.args.root = root;
  cl.args.count = count;
  cl.args.commutative = o.commutative;
  cl.args.params = a.params;
  cl.args.elem_size = t.size;
  cl.type = t;
  cl.reduction = o;
  cl.choice = a;
  if (is_rooted(c) && (root < 0 || root >= size_))
    throw usage_error(rank_, std::string(name(c)), fmt::format("root {} outside 0..{}", root, size_ - 1));
  run_collective(cl, in, out);
}

void comm::run_v(collective c, int root, std::span<const std::uint64_t> counts, std::span<const std::uint64_t> displs,
                 const void* in, std::uint64_t in_count, void* out, std::uint64_t out_count, datatype t, const op& o,
                 const algo& a) {
  call cl;
  cl.args.coll = c;
  cl.args.p = size_;
  cl.args.root = root;
  cl.args.counts.assign(counts.begin(), counts.end());
  cl.args.displs.assign(displs.begin(), displs.end());
  cl.args.commutative = o.commutative;
  cl.args.params = a.params;
  cl.args.elem_size = t.size;
  cl.type = t;
  cl.reduction = o;
  cl.choice = a;
  if (is_rooted(c) && (root < 0 || root >= size_))
    throw usage_error(rank_, std::string(name(c)), fmt::format("root {} outside 0..{}", root, size_ - 1));
  try {
    validate(cl.args);
  } catch (const error& e) {
    throw usage_error(rank_, e.operation(), e.cause());
  }
  const buffer_extent ext = buffer_extents(cl.args, rank_);
  // The send buffer must match this rank's count (unless unused here, as at a non-root);
  // the receive buffer may be longer than the layout needs, as in MPI.
  if (ext.in > 0 || !is_rooted(c)) expect(c, "in", in_count, ext.in);
  if (out_count < ext.out) expect(c, "out", out_count, ext.out);
  run_collective(cl, in, out);
}

void comm::barrier(const algo& a) { run(collective::barrier, 0, 0, nullptr, nullptr, datatype_of<std::byte>(), ops::sum, a); }

}  // namespace ranklab
