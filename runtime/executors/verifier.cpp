// The verifier: executes nothing, checks everything a schedule set promises. Messages are
// paired by round index (the synchronous-round model every builder follows), so the round
// count it reports is the model's round count.
#include <fmt/format.h>

#include <algorithm>

#include "executors/lockstep.hpp"
#include "ranklab/data_flow.hpp"
#include "ranklab/executor.hpp"

namespace ranklab {

namespace {

// Whether a region of `a` overlaps one of `b` (b empty: two regions of `a` overlap each
// other). Sorted sweep: messages of the all-broadcast algorithms hold ~p regions.
bool overlapping(std::span<const region> a, std::span<const region> b) {
  struct item {
    buffer_id buffer;
    std::uint64_t begin, end;
    int side;
  };
  std::vector<item> items;
  for (const region& r : a)
    if (r.count) items.push_back({r.buffer, r.offset, r.offset + r.count, 0});
  for (const region& r : b)
    if (r.count) items.push_back({r.buffer, r.offset, r.offset + r.count, 1});
  if (items.size() < 2) return false;
  std::sort(items.begin(), items.end(), [](const item& x, const item& y) {
    return x.buffer != y.buffer ? x.buffer < y.buffer : x.begin < y.begin;
  });
  const bool within = b.empty();
  // Furthest end seen so far, per side, in the current buffer.
  std::uint64_t end[2] = {0, 0};
  buffer_id current = items.front().buffer;
  for (const item& it : items) {
    if (it.buffer != current) {
      current = it.buffer;
      end[0] = end[1] = 0;
    }
    const int other = within ? it.side : 1 - it.side;
    if (it.begin < end[other]) return true;
    end[it.side] = std::max(end[it.side], it.end);
  }
  return false;
}

struct checker {
  verify_report& report;
  void fail(std::string what) {
    report.ok = false;
    if (report.problems.size() < 20) report.problems.push_back(std::move(what));
  }
  void check_region(const schedule& s, const region& r, bool written, const char* what, std::size_t round) {
    const std::size_t buffers = first_scratch + s.scratch_counts().size();
    if (r.buffer >= buffers) {
      fail(fmt::format("rank {} round {}: {} uses buffer {} that does not exist", s.rank(), round, what, r.buffer));
      return;
    }
    if (r.offset + r.count > s.buffer_count(r.buffer))
      fail(fmt::format("rank {} round {}: {} [{}, {}) exceeds buffer {} of {} elements", s.rank(), round, what,
                       r.offset, r.offset + r.count, r.buffer, s.buffer_count(r.buffer)));
    if (written && r.buffer == in_buffer && r.count > 0)
      fail(fmt::format("rank {} round {}: {} writes the caller's send buffer", s.rank(), round, what));
  }
  const schedule_set* all = nullptr;
  // A fence that waits for one rank or none (schedule::fence_for) lets this rank go on
  // while others have not arrived: afterwards it may read only the payload of the rank it
  // waited for, which is final when that rank arrived.
  void check_partial_fences(const schedule& s) {
    int waited = every_rank;  // the last fence's
    auto check = [&](std::span<const local_step> steps, std::size_t i) {
      if (waited == every_rank) return;
      for (const local_step& st : steps)
        if ((st.src_rank != no_rank && (st.src_rank != waited || st.src.buffer != s.payload_buffer())) ||
            st.dst_rank != no_rank)
          fail(fmt::format("rank {} round {}: touches rank {}'s buffers after a fence that {}", s.rank(), i,
                           st.src_rank != no_rank ? st.src_rank : st.dst_rank,
                           waited == no_rank ? "waits for nobody" : fmt::format("waits only for rank {}", waited)));
    };
    const auto rounds = s.rounds();
    for (std::size_t i = 0; i < rounds.size(); ++i) {
      const round& rd = rounds[i];
      check(s.pre_steps(rd), i);
      if (rd.fence) {
        waited = rd.waits_for;
        if (waited != every_rank && s.payload_buffer() == no_buffer)
          fail(fmt::format("rank {} round {}: a fence that waits for less than every rank needs a fence payload",
                           s.rank(), i));
      }
      check(s.post_steps(rd), i);
    }
  }
  // A fence payload (schedule::fence_payload) is others' to read from the schedule's one
  // fence to the end of the call, so it must be final when the fence is met.
  void check_payload(const schedule& s) {
    const buffer_id payload = s.payload_buffer();
    if (payload == no_buffer) return;
    const auto rounds = s.rounds();
    const auto fences = std::count_if(rounds.begin(), rounds.end(), [](const round& rd) { return rd.fence; });
    if (fences != 1)
      fail(fmt::format("rank {}: a fence payload needs exactly one fence, the schedule has {}", s.rank(), fences));
    // The thread executor neither publishes the buffers of a fence-payload call nor guards
    // its reads: the others must find everything they read in the payloads.
    if (s.touches_remote_buffers())
      fail(fmt::format("rank {}: has a fence payload but reads or writes another rank's buffers directly", s.rank()));
    // Before the fence nobody's payload is final: the owner may still be writing it.
    auto reads_early = [&](std::span<const local_step> steps, std::size_t i) {
      for (const local_step& st : steps)
        if (st.src_rank != no_rank && st.src.buffer == payload)
          fail(fmt::format("rank {} round {}: reads rank {}'s fence payload before the fence", s.rank(), i,
                           st.src_rank));
    };
    reads_early(s.prologue(), 0);
    bool past_fence = false;
    for (std::size_t i = 0; i < rounds.size(); ++i) {
      if (!past_fence) reads_early(s.pre_steps(rounds[i]), i);
      if (past_fence)
        for (const local_step& st : s.pre_steps(rounds[i]))
          if (st.dst.buffer == payload)
            fail(fmt::format("rank {} round {}: writes its fence payload after the fence", s.rank(), i));
      past_fence = past_fence || rounds[i].fence;
      if (past_fence)
        for (const local_step& st : s.post_steps(rounds[i]))
          if (st.dst.buffer == payload)
            fail(fmt::format("rank {} round {}: writes its fence payload after the fence", s.rank(), i));
    }
  }
  void check_steps(const schedule& s, std::span<const local_step> steps, std::size_t round) {
    for (const local_step& st : steps) {
      if (st.src_rank != no_rank) {
        report.remote_elements += st.src.count;
        if (st.src_rank < 0 || static_cast<std::size_t>(st.src_rank) >= all->size())
          fail(fmt::format("rank {} round {}: remote step from rank {} that does not exist", s.rank(), round,
                           st.src_rank));
        else {
          const schedule& owner = (*all)[static_cast<std::size_t>(st.src_rank)];
          check_region(owner, st.src, false, "remote step source", round);
          // Executors find another rank's fence payload by the reader's own payload id.
          if ((st.src.buffer == s.payload_buffer()) != (st.src.buffer == owner.payload_buffer()))
            fail(fmt::format(
                "rank {} round {}: remote step reads buffer {}, a fence payload at only one of ranks {} and {}",
                s.rank(), round, st.src.buffer, s.rank(), st.src_rank));
        }
      } else {
        check_region(s, st.src, false, "local step source", round);
      }
      if (st.dst_rank != no_rank) {
        report.remote_elements += st.dst.count;
        if (st.dst_rank < 0 || static_cast<std::size_t>(st.dst_rank) >= all->size())
          fail(fmt::format("rank {} round {}: push to rank {} that does not exist", s.rank(), round, st.dst_rank));
        else
          check_region((*all)[static_cast<std::size_t>(st.dst_rank)], st.dst, true, "push destination", round);
      } else {
        check_region(s, st.dst, true, "local step destination", round);
      }
      if (st.src.count != st.dst.count) fail(fmt::format("rank {} round {}: local step changes size", s.rank(), round));
      report.local_elements += st.src.count;
    }
  }
};

}  // namespace

verify_report verify(const schedule_set& schedules, bool count_receives) {
  verify_report report;
  checker c{report};
  c.all = &schedules;
  const int p = static_cast<int>(schedules.size());
  if (count_receives) {
    report.receives_per_element.resize(p);
    for (int r = 0; r < p; ++r) report.receives_per_element[r].assign(schedules[r].out_count(), 0);
  }
  for (int r = 0; r < p; ++r) {
    const schedule& s = schedules[r];
    if (s.rank() != r || s.size() != p)
      c.fail(fmt::format("schedule {} claims to be rank {} of {}", r, s.rank(), s.size()));
    report.rounds = std::max(report.rounds, s.communication_rounds());
    c.check_steps(s, s.prologue(), 0);
    c.check_payload(s);
    c.check_partial_fences(s);
    // Readers find a payload in the line or beside it by their own schedule's choice.
    if (const schedule& t = schedules[(r + 1) % p];
        s.payload_buffer() != no_buffer && t.payload_buffer() != no_buffer && s.payload_wide() != t.payload_wide())
      c.fail(fmt::format("ranks {} and {} disagree on whether the fence payload is wide", r, (r + 1) % p));
    const auto rounds = s.rounds();
    for (std::size_t i = 0; i < rounds.size(); ++i) {
      const round& rd = rounds[i];
      c.check_steps(s, s.pre_steps(rd), i);
      c.check_steps(s, s.post_steps(rd), i);
      for (const region& reg : s.send_regions(rd)) c.check_region(s, reg, false, "send", i);
      for (const region& reg : s.recv_regions(rd)) c.check_region(s, reg, true, "receive", i);
      // A rank's incoming data must not land where its outgoing data is read in the same round,
      // nor two pieces of one message on the same element.
      const auto sends = s.send_regions(rd);
      const auto recvs = s.recv_regions(rd);
      if (overlapping(sends, recvs)) c.fail(fmt::format("rank {} round {}: receive overlaps send", r, i));
      if (overlapping(recvs, {})) c.fail(fmt::format("rank {} round {}: receive regions overlap", r, i));
      for (const region& reg : sends)
        if (reg.buffer == s.payload_buffer()) c.fail(fmt::format("rank {} round {}: sends its fence payload", r, i));
      for (const region& reg : recvs)
        if (reg.buffer == s.payload_buffer())
          c.fail(fmt::format("rank {} round {}: receives into its fence payload", r, i));
      if (rd.fence) {
        ++report.fences;
        // Every rank must meet every fence in the same round; checking the next rank of each
        // fencing rank covers all of them around the ring.
        const schedule& t = schedules[(r + 1) % p];
        if (i >= t.rounds().size() || !t.rounds()[i].fence)
          c.fail(fmt::format("round {}: rank {} waits at a fence that rank {} does not reach", i, r, (r + 1) % p));
      }
      if (rd.send_to != no_rank) {
        ++report.messages;
        const std::uint64_t n = s.send_count(rd);
        report.elements += n;
        report.max_message = std::max(report.max_message, n);
        if (rd.send_to == r) c.fail(fmt::format("rank {} round {}: sends to itself", r, i));
        const schedule& t = schedules[rd.send_to];
        if (i >= t.rounds().size() || t.rounds()[i].recv_from != r)
          c.fail(fmt::format("round {}: rank {} sends to {}, which does not receive from it", i, r, rd.send_to));
        else if (t.recv_count(t.rounds()[i]) != n)
          c.fail(fmt::format("round {}: rank {} sends {} elements, rank {} receives {}", i, r, n, rd.send_to,
                             t.recv_count(t.rounds()[i])));
      }
      if (rd.recv_from != no_rank) {
        const schedule& f = schedules[rd.recv_from];
        if (i >= f.rounds().size() || f.rounds()[i].send_to != r)
          c.fail(fmt::format("round {}: rank {} receives from {}, which does not send to it", i, r, rd.recv_from));
        if (count_receives)
          for (const region& reg : recvs)
            if (reg.buffer == out_buffer && reg.offset + reg.count <= s.out_count())
              for (std::uint64_t e = reg.offset; e < reg.offset + reg.count; ++e) ++report.receives_per_element[r][e];
      }
    }
  }
  return report;
}

// ---- data flow ------------------------------------------------------------------------

namespace {

// dst (+) data: the union of two disjoint sets of contributions to the same element;
// anything else (garbage, different elements, a contribution twice) is unknown.
held_data combined(const held_data& data, const held_data& dst) {
  if (!data.known() || !dst.known() || data.index != dst.index || (data.ranks & dst.ranks) != 0)
    return {data.ranks | dst.ranks, held_data::unknown};
  return {data.ranks | dst.ranks, data.index};
}

void land(held_data& dst, const held_data& data, combine how) {
  dst = how == combine::copy ? data : combined(data, dst);
}

struct label_machine {
  using value = held_data;
  held_buffers state;

  // Unknown ranks and buffers read as, and write to, nothing.
  std::vector<held_data>* buffer(int rank, buffer_id b) {
    if (rank < 0 || static_cast<std::size_t>(rank) >= state.size()) return nullptr;
    auto& bufs = state[static_cast<std::size_t>(rank)];
    return b < bufs.size() ? &bufs[b] : nullptr;
  }

  // Bounds were checked by verify(); a bad region here is clipped, not trusted.
  std::vector<held_data> read(int rank, const region& r) {
    const auto* found = buffer(rank, r.buffer);
    if (found == nullptr) return {};
    const auto& buf = *found;
    const auto [begin, end] = detail::clipped(buf, r);
    return {buf.begin() + static_cast<std::ptrdiff_t>(begin), buf.begin() + static_cast<std::ptrdiff_t>(end)};
  }
  void write(int rank, const region& r, std::span<const held_data> data, combine how) {
    auto* found = buffer(rank, r.buffer);
    if (found == nullptr) return;
    auto& buf = *found;
    for (std::uint64_t i = 0; i < r.count && i < data.size() && r.offset + i < buf.size(); ++i)
      land(buf[r.offset + i], data[i], how);
  }
};

}  // namespace

held_buffers trace_data_flow(const schedule_set& schedules, int preloaded_out, const data_flow_observer& observe) {
  const int p = static_cast<int>(schedules.size());
  if (p > max_data_flow_ranks)
    throw usage_error(no_rank, "data flow",
                      fmt::format("p = {}: the labels describe at most {} ranks", p, max_data_flow_ranks));
  label_machine m{held_buffers(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) {
    const schedule& s = schedules[r];
    auto& bufs = m.state[static_cast<std::size_t>(r)];
    bufs.resize(first_scratch + s.scratch_counts().size());
    for (buffer_id b = 0; b < bufs.size(); ++b) bufs[b].assign(s.buffer_count(b), held_data{});
    auto inputs = [r](std::vector<held_data>& buf) {
      for (std::size_t e = 0; e < buf.size(); ++e) buf[e] = {std::uint64_t{1} << r, static_cast<std::uint32_t>(e)};
    };
    inputs(bufs[in_buffer]);
    if (r == preloaded_out) inputs(bufs[out_buffer]);
  }
  detail::run_lockstep(schedules, m, [&](std::size_t step) {
    if (observe) observe(step, m.state);
  });
  return std::move(m.state);
}

}  // namespace ranklab
