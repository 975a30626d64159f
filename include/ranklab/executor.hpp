// Interpreters of schedules that need no threads: the sequential executor (all ranks in
// one thread, lockstep, real data) and the verifier (pairs sends with receives, checks
// one-portedness, bounds and sizes, counts rounds, messages and bytes). The thread
// executor runs behind comm (each rank on its own thread).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ranklab/datatype.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab {

// One rank's caller buffers. `in` may equal `out` (in place); unused buffers may be null.
struct rank_buffers {
  const void* in = nullptr;
  void* out = nullptr;
};

// Runs every rank's schedule in one thread, round by round: all ranks' pre steps, then all
// messages of the round (staged, so a rank may send what it receives in the same round
// only if the schedule says so — the verifier forbids it), then all post steps.
void execute_sequential(const schedule_set& schedules, std::span<const rank_buffers> buffers, const datatype& type,
                        const op& reduction = ops::sum);

struct verify_report {
  bool ok = true;
  std::vector<std::string> problems;  // first few problems, readable
  std::size_t rounds = 0;             // max over ranks of rounds up to the last message
  std::uint64_t messages = 0;         // sends over all ranks
  std::uint64_t elements = 0;         // elements sent over all ranks
  std::uint64_t max_message = 0;      // largest message, elements
  std::uint64_t local_elements = 0;   // elements copied or reduced locally
  std::uint64_t remote_elements = 0;  // elements read from or pushed into other ranks' buffers
  std::uint64_t fences = 0;           // fence rounds (schedule::fence), over all ranks
  // With count_receives: receives_per_element[r][i] = how many receives wrote element i of
  // rank r's out buffer (broadcast-like collectives: exactly one on non-roots).
  std::vector<std::vector<std::uint32_t>> receives_per_element;
};

// The structure alone: it does not know the collective, so it cannot say whether the right
// data ends up in `out`. verify(schedules, args) (ranklab/semantics.hpp) checks both.
verify_report verify(const schedule_set& schedules, bool count_receives = false);

}  // namespace ranklab
