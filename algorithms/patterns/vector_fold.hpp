// Whole vectors received into scratch slots and folded into the receive buffer in rank order,
// for the allreduces that exchange whole vectors with several peers per phase (MPICH's
// recursive exchange and recursive multiplying): a rank holding operand `mine` of `count`
// operands in rank order computes operand_0 (+) ... (+) operand_{count-1} as a left fold, so
// non-commutative operators get the rank-ordered result.
#pragma once
#include <cstdint>
#include <vector>

#include "ranklab/schedule.hpp"

namespace ranklab::detail {

class vector_slots {
 public:
  // `out`: the receive buffer's vector, holding this rank's operand; n: its elements.
  vector_slots(schedule& s, region out, std::uint64_t n) : s_(s), out_(out), n_(n) {}

  // Slot j, allocated on first use.
  region slot(int j) {
    while (static_cast<int>(slots_.size()) <= j) slots_.push_back(region{s_.scratch(n_), 0, n_});
    return slots_[static_cast<std::size_t>(j)];
  }

  // out = at(0) (+) ... (+) at(count-1), where out already holds operand `mine`; at(e) for
  // e != mine names the region that holds operand e. The lower operands are combined among
  // themselves first (in at(0)) and then put on the left of out.
  template <class At>
  void fold(int count, int mine, At at) {
    if (mine > 0) {
      const region acc = at(0);
      for (int e = 1; e < mine; ++e) s_.reduce(at(e), acc, combine::reduce_in_right);
      s_.reduce(acc, out_, combine::reduce_in_left);
    }
    for (int e = mine + 1; e < count; ++e) s_.reduce(at(e), out_, combine::reduce_in_right);
  }

 private:
  schedule& s_;
  region out_;
  std::uint64_t n_;
  std::vector<region> slots_;
};

}  // namespace ranklab::detail
