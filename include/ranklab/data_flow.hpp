// The verifier's data-flow bookkeeping: which data every element of every rank's buffers
// rank's buffers holds after each round, found by running the schedules on labels instead of values (the same lockstep
// order as the sequential executor: all ranks' pre steps, the round's messages staged and delivered, then all post
// steps). Tools draw it (`ranklab draw`: the data-flow grid); tests check a collective's final state with it.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ranklab/schedule.hpp"

namespace ranklab {

// What one element holds: which ranks' inputs have been combined into it and which element
// of those inputs it is. Never written, or combined wrongly (mismatched elements, a
// contribution counted twice), is `unknown`.
struct held_data {
  static constexpr std::uint32_t unknown = 0xffffffffu;
  std::uint64_t ranks = 0;  // bit j: rank j's contribution is in it
  std::uint32_t index = unknown;
  bool known() const { return index != unknown; }
  friend bool operator==(const held_data&, const held_data&) = default;
};

// Every rank's buffers (in, out, scratch ...) as labels: buffers[rank][buffer_id][element].
using held_buffers = std::vector<std::vector<std::vector<held_data>>>;

// Called after the prologue (step 0) and after each round i (step i + 1).
using data_flow_observer = std::function<void(std::size_t step, const held_buffers& state)>;

// Largest team the labels can describe (one bit per rank).
inline constexpr int max_data_flow_ranks = 64;

// Runs the schedules on labels: rank r's in buffer starts as element e of rank r's input,
// and so does the out buffer of `preloaded_out` (a broadcast's root, whose data starts in
// its out buffer; no_rank for none); everything else starts unknown. Throws usage_error
// for more than max_data_flow_ranks ranks. Returns the final state.
held_buffers trace_data_flow(const schedule_set& schedules, int preloaded_out = no_rank,
                             const data_flow_observer& observe = {});

}  // namespace ranklab
