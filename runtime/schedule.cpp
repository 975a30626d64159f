// Building a schedule round by round, reading it back, and printing it (`ranklab
// schedule`, test failures).
#include "ranklab/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ranklab {

namespace {
std::string show(const region& r, buffer_id payload) {
  const char* names[] = {"in", "out"};
  std::string buf = r.buffer < first_scratch ? names[r.buffer]
                    : r.buffer == payload    ? std::string("payload")
                                             : fmt::format("tmp{}", r.buffer - first_scratch);
  return fmt::format("{}[{}+{}]", buf, r.offset, r.count);
}
std::string show(std::span<const region> rs, buffer_id payload) {
  std::string s;
  for (const auto& r : rs) s += (s.empty() ? "" : " ") + show(r, payload);
  return s;
}
const char* show(combine how) {
  switch (how) {
    case combine::copy:
      return "copy";
    case combine::reduce_in_left:
      return "reduce(in,dst)";
    case combine::reduce_in_right:
      return "reduce(dst,in)";
  }
  return "?";
}
}  // namespace

schedule::schedule(int rank, int p, std::uint64_t in_count, std::uint64_t out_count)
    : rank_(rank), p_(p), in_count_(in_count), out_count_(out_count) {}

void schedule::next_round() {
  round r;
  r.send_begin = r.send_end = static_cast<std::uint32_t>(send_regions_.size());
  r.recv_begin = r.recv_end = static_cast<std::uint32_t>(recv_regions_.size());
  r.pre_begin = r.post_begin = r.post_end = static_cast<std::uint32_t>(steps_.size());
  rounds_.push_back(r);
}

round& schedule::current(const char* what) {
  if (rounds_.empty()) throw usage_error(rank_, "schedule", fmt::format("{} before the first next_round()", what));
  return rounds_.back();
}

void schedule::send(int to, region reg) {
  round& r = current("send");
  if (r.fence)
    throw usage_error(rank_, "schedule", fmt::format("round {} is a fence; it cannot send", rounds_.size() - 1));
  if (to < 0 || to >= p_)
    throw usage_error(rank_, "schedule", fmt::format("send to rank {} outside 0..{}", to, p_ - 1));
  if (r.send_to != no_rank && r.send_to != to)
    throw usage_error(rank_, "schedule",
                      fmt::format("round {} sends to both {} and {}", rounds_.size() - 1, r.send_to, to));
  r.send_to = to;
  send_regions_.push_back(reg);
  r.send_end = static_cast<std::uint32_t>(send_regions_.size());
}

void schedule::recv(int from, region reg, combine how) {
  round& r = current("recv");
  if (r.fence)
    throw usage_error(rank_, "schedule", fmt::format("round {} is a fence; it cannot receive", rounds_.size() - 1));
  if (from < 0 || from >= p_)
    throw usage_error(rank_, "schedule", fmt::format("recv from rank {} outside 0..{}", from, p_ - 1));
  if (r.recv_from != no_rank && (r.recv_from != from || r.recv_how != how))
    throw usage_error(rank_, "schedule",
                      fmt::format("round {} receives from both {} and {}", rounds_.size() - 1, r.recv_from, from));
  r.recv_from = from;
  r.recv_how = how;
  recv_regions_.push_back(reg);
  r.recv_end = static_cast<std::uint32_t>(recv_regions_.size());
}

void schedule::remote(int rank, region src, region dst, combine how) {
  if (rank < 0 || rank >= p_)
    throw usage_error(rank_, "schedule", fmt::format("remote step from rank {} outside 0..{}", rank, p_ - 1));
  reads_remote_ = true;
  // A payload declared later cannot make this a payload read: conservative.
  if (payload_ == no_buffer || src.buffer != payload_) touches_remote_buffers_ = true;
  local(src, dst, how, rank);
}

void schedule::fence_rounds() {
  for (std::int64_t dist = 1; dist < p_; dist *= 2) {
    next_round();
    send(static_cast<int>((rank_ + dist) % p_), region{out_buffer, 0, 0});
    recv(static_cast<int>(((rank_ - dist) % p_ + p_) % p_), region{out_buffer, 0, 0});
  }
}

void schedule::fence() {
  next_round();
  rounds_.back().fence = true;
}

void schedule::fence_for(int waits_for) {
  if (waits_for != no_rank && (waits_for < 0 || waits_for >= p_))
    throw usage_error(rank_, "schedule", fmt::format("fence waiting for rank {} outside 0..{}", waits_for, p_ - 1));
  fence();
  rounds_.back().waits_for = waits_for;
}

void schedule::push(int rank, region src, region dst, combine how) {
  if (rank < 0 || rank >= p_)
    throw usage_error(rank_, "schedule", fmt::format("push to rank {} outside 0..{}", rank, p_ - 1));
  reads_remote_ = touches_remote_buffers_ = true;  // the executors treat it like a read
  local(src, dst, how, no_rank, rank);
}

void schedule::local(region src, region dst, combine how, int src_rank, int dst_rank) {
  if (src.count != dst.count)
    throw usage_error(
        rank_, "schedule",
        fmt::format("local step from {} to {} changes the size", show(src, payload_), show(dst, payload_)));
  steps_.push_back({src, dst, how, src_rank, dst_rank});
  const auto end = static_cast<std::uint32_t>(steps_.size());
  if (rounds_.empty()) {
    prologue_end_ = end;
    return;
  }
  round& r = rounds_.back();
  if (!r.communicates()) r.post_begin = end;  // still before the messages
  r.post_end = end;
}

buffer_id schedule::scratch(std::uint64_t count) {
  scratch_.push_back(count);
  return static_cast<buffer_id>(first_scratch + scratch_.size() - 1);
}

buffer_id schedule::fence_payload(std::uint64_t count, bool wide) {
  if (payload_ != no_buffer) throw usage_error(rank_, "schedule", "a schedule has at most one fence payload");
  payload_wide_ = wide;
  payload_ = scratch(count);
  return payload_;
}

void schedule::trim() {
  while (!rounds_.empty() && !rounds_.back().communicates() && rounds_.back().post_end == rounds_.back().pre_begin)
    rounds_.pop_back();
}

std::uint64_t schedule::buffer_count(buffer_id b) const {
  if (b == in_buffer) return in_count_;
  if (b == out_buffer) return out_count_;
  const std::size_t i = b - first_scratch;
  return i < scratch_.size() ? scratch_[i] : 0;
}

std::span<const region> schedule::send_regions(const round& r) const {
  return std::span(send_regions_).subspan(r.send_begin, r.send_end - r.send_begin);
}
std::span<const region> schedule::recv_regions(const round& r) const {
  return std::span(recv_regions_).subspan(r.recv_begin, r.recv_end - r.recv_begin);
}
std::span<const local_step> schedule::pre_steps(const round& r) const {
  return std::span(steps_).subspan(r.pre_begin, r.post_begin - r.pre_begin);
}
std::span<const local_step> schedule::post_steps(const round& r) const {
  return std::span(steps_).subspan(r.post_begin, r.post_end - r.post_begin);
}
std::span<const local_step> schedule::prologue() const { return std::span(steps_).subspan(0, prologue_end_); }

std::uint64_t schedule::send_count(const round& r) const {
  std::uint64_t n = 0;
  for (const auto& reg : send_regions(r)) n += reg.count;
  return n;
}
std::uint64_t schedule::recv_count(const round& r) const {
  std::uint64_t n = 0;
  for (const auto& reg : recv_regions(r)) n += reg.count;
  return n;
}

std::size_t schedule::communication_rounds() const {
  for (std::size_t i = rounds_.size(); i > 0; --i)
    if (rounds_[i - 1].communicates()) return i;
  return 0;
}

std::string schedule::describe() const {
  std::string s = fmt::format("rank {} of {}: {} rounds\n", rank_, p_, rounds_.size());
  auto steps = [&](std::span<const local_step> ls, const char* when) {
    for (const auto& st : ls)
      s += fmt::format("    {} {} {}{} -> {}\n", when, show(st.how),
                       st.src_rank == no_rank ? "" : fmt::format("rank {}:", st.src_rank), show(st.src, payload_),
                       (st.dst_rank == no_rank ? "" : fmt::format("rank {}:", st.dst_rank)) + show(st.dst, payload_));
  };
  steps(prologue(), "prologue");
  for (std::size_t i = 0; i < rounds_.size(); ++i) {
    const round& r = rounds_[i];
    s += fmt::format("  round {:3}:", i);
    if (r.fence)
      s += r.waits_for == every_rank ? " fence (all ranks);"
           : r.waits_for == no_rank  ? " fence (arrive, wait for nobody);"
                                     : fmt::format(" fence (arrive, wait for rank {});", r.waits_for);
    if (r.send_to != no_rank) s += fmt::format(" send {} to {};", show(send_regions(r), payload_), r.send_to);
    if (r.recv_from != no_rank)
      s += fmt::format(" recv {} {} from {};", show(r.recv_how), show(recv_regions(r), payload_), r.recv_from);
    s += "\n";
    steps(pre_steps(r), "before");
    steps(post_steps(r), "after");
  }
  return s;
}

}  // namespace ranklab
