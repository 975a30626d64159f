// The sequential executor: deterministic, single threaded, for tests with thousands of
// ranks. Lockstep rounds; messages staged so that every rank reads what its peer held at
// the start of the round's exchange.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "detail/transfer.hpp"
#include "ranklab/executor.hpp"

namespace ranklab {

namespace {

struct rank_state {
  std::vector<std::unique_ptr<std::byte[]>> scratch;
  detail::buffer_table buffers;
};

rank_state prepare(const schedule& s, const rank_buffers& b, std::size_t elem) {
  rank_state st;
  st.buffers.elem_size = elem;
  st.buffers.base = {static_cast<std::byte*>(const_cast<void*>(b.in)), static_cast<std::byte*>(b.out)};
  for (std::uint64_t count : s.scratch_counts()) {
    st.scratch.push_back(std::make_unique<std::byte[]>(std::max<std::uint64_t>(1, count * elem)));
    st.buffers.base.push_back(st.scratch.back().get());
  }
  return st;
}

const detail::buffer_table* peer_buffers(const void* context, int rank) {
  return &(*static_cast<const std::vector<rank_state>*>(context))[static_cast<std::size_t>(rank)].buffers;
}

[[noreturn]] void unmatched(int rank, std::size_t round, const std::string& what) {
  throw usage_error(rank, "sequential executor", fmt::format("round {}: {}", round, what));
}

}  // namespace

void execute_sequential(const schedule_set& schedules, std::span<const rank_buffers> buffers, const datatype& type,
                        const op& reduction) {
  const int p = static_cast<int>(schedules.size());
  if (buffers.size() != schedules.size())
    throw usage_error(no_rank, "sequential executor",
                      fmt::format("{} buffer sets for {} schedules", buffers.size(), schedules.size()));
  const std::size_t elem = type.size;
  detail::reduction red{nullptr, reduction.context, elem, reduction.commutative};
  bool reduces = false;
  for (const schedule& s : schedules)
    for (const round& r : s.rounds()) reduces |= r.recv_how != combine::copy;
  if (reduces || reduction.kind == op_kind::user) red.kernel = kernel_for(reduction, type);
  // Local reduction steps may exist even without reducing receives.
  auto kernel_for_steps = [&] {
    if (!red.kernel) red.kernel = kernel_for(reduction, type);
  };

  std::vector<rank_state> state;
  state.reserve(p);
  std::size_t max_rounds = 0;
  for (int r = 0; r < p; ++r) {
    state.push_back(prepare(schedules[r], buffers[r], elem));
    max_rounds = std::max(max_rounds, schedules[r].rounds().size());
  }
  auto run_steps = [&](int r, std::span<const local_step> steps) {
    for (const local_step& st : steps) {
      if (st.how != combine::copy) kernel_for_steps();
      detail::run_step(st, state[r].buffers, red, &peer_buffers, &state);
    }
  };

  for (int r = 0; r < p; ++r) run_steps(r, schedules[r].prologue());
  std::vector<std::vector<std::byte>> staged(p);
  for (std::size_t i = 0; i < max_rounds; ++i) {
    for (int r = 0; r < p; ++r)
      if (i < schedules[r].rounds().size()) run_steps(r, schedules[r].pre_steps(schedules[r].rounds()[i]));
    // A fence holds in lockstep by construction (every rank's pre steps ran above), provided
    // every rank has one in this round.
    auto fences = [&](int r) { return i < schedules[r].rounds().size() && schedules[r].rounds()[i].fence; };
    for (int r = 0; r < p; ++r)
      if (fences(r)) {
        for (int t = 0; t < p; ++t)
          if (!fences(t)) unmatched(t, i, fmt::format("rank {} waits at a fence that rank {} does not reach", r, t));
        break;
      }
    // Stage every message of the round, then deliver.
    for (int r = 0; r < p; ++r) {
      staged[r].clear();
      if (i >= schedules[r].rounds().size()) continue;
      const schedule& s = schedules[r];
      const round& rd = s.rounds()[i];
      if (rd.send_to == no_rank) continue;
      for (const region& reg : s.send_regions(rd)) {
        const std::byte* src = state[r].buffers.address(reg);
        staged[r].insert(staged[r].end(), src, src + reg.count * elem);
      }
    }
    for (int r = 0; r < p; ++r) {
      if (i >= schedules[r].rounds().size()) continue;
      const schedule& s = schedules[r];
      const round& rd = s.rounds()[i];
      if (rd.recv_from == no_rank) continue;
      const int from = rd.recv_from;
      const bool sent = i < schedules[from].rounds().size() && schedules[from].rounds()[i].send_to == r;
      if (!sent) unmatched(r, i, fmt::format("rank {} receives from {}, which sends nothing to it", r, from));
      const std::size_t bytes = staged[from].size();
      if (bytes != s.recv_count(rd) * elem)
        unmatched(r, i,
                  fmt::format("rank {} sends {} bytes, rank {} receives {}", from, bytes, r, s.recv_count(rd) * elem));
      if (rd.recv_how != combine::copy) kernel_for_steps();
      std::vector<detail::piece> dst;
      for (const region& reg : s.recv_regions(rd)) dst.push_back(state[r].buffers.resolve(reg));
      const detail::piece src{staged[from].data(), bytes};
      detail::transfer(std::span(&src, 1), dst, rd.recv_how, red);
    }
    for (int r = 0; r < p; ++r) {
      if (i >= schedules[r].rounds().size()) continue;
      const round& rd = schedules[r].rounds()[i];
      if (rd.send_to != no_rank) {
        const schedule& t = schedules[rd.send_to];
        if (i >= t.rounds().size() || t.rounds()[i].recv_from != r)
          unmatched(r, i, fmt::format("rank {} sends to {}, which does not receive from it", r, rd.send_to));
      }
      run_steps(r, schedules[r].post_steps(rd));
    }
  }
}

}  // namespace ranklab
