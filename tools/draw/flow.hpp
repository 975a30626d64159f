// The data-flow side of a figure: the out buffer cut into cells (the blocks the messages
// move) and, per step, what each rank holds of each cell, from the verifier's labels
// (trace_data_flow) compared with what the collective must leave there.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "draw/figure.hpp"
// The verifier's data-flow hook is declared beside it, outside the public headers.
#include "ranklab/data_flow.hpp"

namespace ranklab::tools::draw {

// Cell i is [bounds[i], bounds[i+1]) of an out buffer (clipped to each rank's). `blocks`:
// the bounds are those of the messages and the collective's blocks, so a region between two
// bounds can be named "B<i>"; otherwise (too many) an even split, and regions are ranges.
struct cells {
  std::vector<std::uint64_t> bounds;
  bool blocks = false;
};
inline constexpr std::size_t max_cells = 48;

cells make_cells(const schedule_set& schedules, const coll_args& args);

// "B3", "B1-B4 s0[0,8)": what a message of these regions of `rank`'s buffers carries. Regions
// of the out buffer on the cells' bounds are blocks; so are regions of the input buffer
// where the collective lays it out like the out buffer (allreduce's in[7,8) is the same
// block B7, allgather's whole input is the rank's block); anything else is a range.
std::string regions_label(std::span<const region> regions, const cells& c, const coll_args& args, int rank);
// "in[7,8) out[0,2)": the same regions as element ranges of the buffers.
std::string regions_ranges(std::span<const region> regions);
// Where element 0 of `rank`'s input buffer sits in its out buffer's layout, when the input
// is laid out like (a part of) the out buffer; nullopt otherwise.
std::optional<std::uint64_t> input_in_out_layout(const coll_args& args, int rank);

// Fills fig.flow (or fig.flow_note, when the labels cannot be computed).
void compute_flow(figure& fig, const schedule_set& schedules, const cells& c);

// The final result's label of element e of rank r's out buffer (unknown: nothing defined,
// e.g. exscan at rank 0).
held_data wanted_label(const coll_args& a, int rank, std::uint64_t e);

}  // namespace ranklab::tools::draw
