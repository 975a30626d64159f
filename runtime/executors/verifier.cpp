// The verifier: executes nothing, checks everything a schedule set promises. Messages are
// paired by round index (the synchronous-round model every builder follows), so the round
// count it reports is the model's round count.
#include <fmt/format.h>

#include <algorithm>

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
  void check_steps(const schedule& s, std::span<const local_step> steps, std::size_t round) {
    for (const local_step& st : steps) {
      if (st.src_rank != no_rank) {
        report.remote_elements += st.src.count;
        if (st.src_rank < 0 || static_cast<std::size_t>(st.src_rank) >= all->size())
          fail(fmt::format("rank {} round {}: remote step from rank {} that does not exist", s.rank(), round,
                           st.src_rank));
        else
          check_region((*all)[static_cast<std::size_t>(st.src_rank)], st.src, false, "remote step source", round);
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

}  // namespace ranklab
