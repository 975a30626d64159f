// Extracting a figure from one call's schedules (see figure.hpp).
#include "draw/figure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "draw/flow.hpp"

namespace ranklab::tools::draw {

namespace {

std::string step_text(const local_step& st, const cells& c, const coll_args& args, int rank) {
  const char* verb = st.how == combine::copy ? "copy" : "reduce";
  const auto name = [&](const region& r, int owner) {
    const std::string label = regions_label(std::span(&r, 1), c, args, owner == no_rank ? rank : owner),
                      range = regions_ranges(std::span(&r, 1));
    return label == range ? label : fmt::format("{} ({})", label, range);
  };
  std::string from = name(st.src, st.src_rank), to = name(st.dst, st.dst_rank);
  if (st.src_rank != no_rank) from = fmt::format("rank {}:{}", st.src_rank, from);
  if (st.dst_rank != no_rank) to = fmt::format("rank {}:{}", st.dst_rank, to);
  return fmt::format("{} {} -> {}", verb, from, to);
}

void add_steps(figure& fig, const cells& c, int rank, int round, bool after, std::span<const local_step> steps) {
  for (const local_step& st : steps) {
    const int peer = st.src_rank != no_rank ? st.src_rank : st.dst_rank;
    fig.steps.push_back({round, rank, after, st.how != combine::copy, peer, step_text(st, c, fig.args, rank)});
  }
}

}  // namespace

figure make_figure(const algorithm& a, const coll_args& args) {
  figure fig;
  fig.args = args;
  fig.algo = std::string(a.name);
  fig.one_ported = a.one_ported;
  fig.title = fmt::format("{}, algorithm {}", describe(args), a.name);
  const schedule_set schedules = build_all(a, args);
  fig.report = verify(schedules);
  const cells c = make_cells(schedules, args);
  for (const schedule& s : schedules) fig.rounds = std::max(fig.rounds, s.rounds().size());
  fig.round_elements.assign(fig.rounds, 0);
  fig.round_messages.assign(fig.rounds, 0);
  for (const schedule& s : schedules) {
    add_steps(fig, c, s.rank(), -1, false, s.prologue());
    const auto rounds = s.rounds();
    for (std::size_t i = 0; i < rounds.size(); ++i) {
      const round& rd = rounds[i];
      const int column = static_cast<int>(i);
      add_steps(fig, c, s.rank(), column, false, s.pre_steps(rd));
      add_steps(fig, c, s.rank(), column, true, s.post_steps(rd));
      if (rd.fence && s.rank() == 0) fig.fences.push_back(i);
      if (rd.send_to == no_rank) continue;
      const std::uint64_t n = s.send_count(rd);
      // Whether the receiver reduces is its schedule's business (its recv_how).
      const auto& peer_rounds = schedules[static_cast<std::size_t>(rd.send_to)].rounds();
      const bool reduces = i < peer_rounds.size() && peer_rounds[i].recv_how != combine::copy;
      std::string label = regions_label(s.send_regions(rd), c, args, s.rank());
      std::string detail = regions_ranges(s.send_regions(rd));
      if (detail == label) detail.clear();
      fig.messages.push_back({i, s.rank(), rd.send_to, n, reduces, std::move(label), std::move(detail)});
      fig.round_elements[i] += n;
      ++fig.round_messages[i];
    }
  }
  fig.block_names = c.blocks && c.bounds.size() > 2;  // as regions_label names them
  compute_flow(fig, schedules, c);
  return fig;
}

}  // namespace ranklab::tools::draw
