// The order in which the verifier's symbolic machines run a schedule set (the data-flow
// labels of ranklab/data_flow.hpp, the semantic check of ranklab/semantics.hpp): that of
// the sequential executor. Per round, every rank's pre steps; then every message, read from
// its sender (staged) before any is delivered, so a rank that receives and sends in one
// round forwards what it held before; then every rank's post steps.
//
// A machine holds symbols instead of bytes. It provides
//   std::vector<value> read(int rank, const region&)             (clipped to the buffer)
//   void write(int rank, const region&, std::span<const value>, combine)
// and may provide hooks the template calls when present:
//   void step_done(int rank)                  after each local step of `rank`
//   void sent(int rank)                       when `rank`'s message of the round is staged
//   void received(int rank, int from)         when it has been delivered
//   void fences(std::size_t round)            after every pre step of a round, before messages
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ranklab/schedule.hpp"

namespace ranklab::detail {

// The elements [begin, end) of `buf` that region `r` covers, clipped to the buffer: the
// machines trust no bounds (the structural verifier reports bad ones).
struct element_range {
  std::uint64_t begin, end;
};
template <class T>
element_range clipped(const std::vector<T>& buf, const region& r) {
  return {std::min<std::uint64_t>(r.offset, buf.size()), std::min<std::uint64_t>(r.offset + r.count, buf.size())};
}

template <class Machine>
void run_local_steps(Machine& m, int rank, std::span<const local_step> steps) {
  for (const local_step& st : steps) {
    const auto data = m.read(st.src_rank == no_rank ? rank : st.src_rank, st.src);
    m.write(st.dst_rank == no_rank ? rank : st.dst_rank, st.dst, data, st.how);
    if constexpr (requires { m.step_done(rank); }) m.step_done(rank);
  }
}

// Runs `schedules` on machine `m`; `observe(step)` is called after the prologue (step 0)
// and after each round i (step i + 1).
template <class Machine, class Observer>
void run_lockstep(const schedule_set& schedules, Machine& m, Observer&& observe) {
  using value = typename Machine::value;
  const int p = static_cast<int>(schedules.size());
  std::size_t rounds = 0;
  for (const schedule& s : schedules) rounds = std::max(rounds, s.rounds().size());
  for (int r = 0; r < p; ++r) run_local_steps(m, r, schedules[r].prologue());
  observe(std::size_t{0});
  auto at = [&](int r, std::size_t i) -> const round* {
    const auto rs = schedules[r].rounds();
    return i < rs.size() ? &rs[i] : nullptr;
  };
  std::vector<std::vector<value>> staged(static_cast<std::size_t>(p));
  for (std::size_t i = 0; i < rounds; ++i) {
    for (int r = 0; r < p; ++r)
      if (const round* rd = at(r, i)) run_local_steps(m, r, schedules[r].pre_steps(*rd));
    if constexpr (requires { m.fences(i); }) m.fences(i);
    for (int r = 0; r < p; ++r) {
      staged[r].clear();
      const round* rd = at(r, i);
      if (rd == nullptr || rd->send_to == no_rank) continue;
      for (const region& reg : schedules[r].send_regions(*rd)) {
        const auto data = m.read(r, reg);
        staged[r].insert(staged[r].end(), data.begin(), data.end());
      }
      if constexpr (requires { m.sent(r); }) m.sent(r);
    }
    for (int r = 0; r < p; ++r) {
      const round* rd = at(r, i);
      if (rd == nullptr || rd->recv_from == no_rank || rd->recv_from < 0 || rd->recv_from >= p) continue;
      std::span<const value> data = staged[rd->recv_from];
      for (const region& reg : schedules[r].recv_regions(*rd)) {
        const std::size_t n = std::min<std::size_t>(reg.count, data.size());
        m.write(r, reg, data.first(n), rd->recv_how);
        data = data.subspan(n);
      }
      if constexpr (requires { m.received(r, rd->recv_from); }) m.received(r, rd->recv_from);
    }
    for (int r = 0; r < p; ++r)
      if (const round* rd = at(r, i)) run_local_steps(m, r, schedules[r].post_steps(*rd));
    observe(i + 1);
  }
}

}  // namespace ranklab::detail
