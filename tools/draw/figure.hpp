// What `ranklab draw` draws, extracted from one call's schedules: the messages, local steps
// and fences of every round (space-time diagram), the verifier's counts (caption) and the
// verifier's data-flow bookkeeping reduced to a grid of cells per rank and step (data-flow
// view). Everything here comes from the schedules the executors run, so a drawing cannot
// disagree with what runs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ranklab/collective.hpp"
#include "ranklab/executor.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::tools::draw {

struct message {
  std::size_t round = 0;
  int from = 0, to = 0;
  std::uint64_t elements = 0;
  bool reduces = false;  // the receiver combines it into what it holds
  std::string label;     // blocks or element ranges it carries, in the legend's notation
  std::string detail;    // the buffers' element ranges, when `label` names blocks
};

struct step_mark {
  int round = -1;  // -1: the prologue, before round 0
  int rank = 0;
  bool after = false;  // after the round's messages (else before them)
  bool reduces = false;
  int peer = no_rank;  // remote read or push: the other rank (shared-memory direct algorithms)
  std::string text;    // what it copies or reduces, for the tooltip
};

// A cell of the data-flow grid: elements [begin, end) of a rank's out buffer.
struct cell_state {
  std::uint64_t begin = 0, end = 0;
  bool complete = false;     // the out buffer holds exactly the final result there
  double fill = 0;           // share of the final result the rank holds anywhere (0..1)
  std::uint64_t holds = 0;   // contributions present in the out buffer's cell (bit per rank)
  std::uint64_t wanted = 0;  // contributions of the final result (bit per rank)
};

// step 0: after the prologue; step i + 1: after round i. grid[step][rank] = that rank's cells.
using flow_grid = std::vector<std::vector<std::vector<cell_state>>>;

struct figure {
  std::string title;  // e.g. "bcast(p=7, root=0, count=8), algorithm binomial"
  coll_args args;
  std::string algo;
  std::string choice;  // why this algorithm is drawn, when the library chose (draw/choice.hpp)
  bool one_ported = true;
  verify_report report;
  std::size_t rounds = 0;  // columns: every round of the longest schedule
  std::vector<message> messages;
  std::vector<step_mark> steps;
  std::vector<std::size_t> fences;  // rounds that are team-wide fences
  std::vector<std::uint64_t> round_elements, round_messages;
  bool has_flow = false;     // data flow computed (p <= max_data_flow_ranks, sizes within bounds)
  bool block_names = false;  // the labels name the grid's cells B0, B1, ... (else element ranges)
  std::string flow_note;     // why not, when not
  flow_grid flow;
};

// Builds every rank's schedules of `a` for `args`, verifies them and extracts the figure.
figure make_figure(const algorithm& a, const coll_args& args);

}  // namespace ranklab::tools::draw
